"""The travel handlers at work, over every transport and era (``typed``: see conftest.py).

User code, kept across regenerations.
"""

from __future__ import annotations

import json
from datetime import date
from functools import partial
from typing import Any

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from travel_mcp.client import ToolCallError, TravelClient

pytestmark = pytest.mark.anyio


def text(contents: Any) -> str:
    (content,) = contents
    assert isinstance(content, types.TextResourceContents)
    return content.text


async def test_flights_are_the_same_for_the_same_question(typed: TravelClient) -> None:
    search = partial(typed.search_flights, origin="CDG", destination="LIS", date="2026-05-01")
    first, again = await search(), await search()
    business = await search(cabin="business", passengers=2)
    assert first == again and len(first.flights) == 3
    assert all(f.departs.startswith("2026-05-01T") and f.arrives > f.departs for f in first.flights)
    assert [round(f.price * 6, 2) for f in first.flights] == [f.price for f in business.flights]
    with pytest.raises(ToolCallError, match="both CDG"):
        await typed.search_flights(origin="CDG", destination="CDG", date="2026-05-01")


async def test_a_forecast_day_by_day(typed: TravelClient) -> None:
    forecast = await typed.weather_forecast(city="Lisbon", days=5)
    assert forecast.city == "Lisbon" and len(forecast.days) == 5
    assert forecast.days[0].date == date.today().isoformat()
    assert all(day.low < day.high for day in forecast.days)


async def test_resources_prompt_and_completion(typed: TravelClient) -> None:
    food = json.loads(text(await typed.read_activities(city="paris", category="food")))
    assert food["city"] == "Paris" and "a cooking class" in food["activities"]
    hotels = json.loads(text(await typed.read_hotels(city="Rome")))["hotels"]
    assert [h["stars"] for h in hotels] == [1, 3, 5]
    with pytest.raises(MCPError, match="no travel data for 'Atlantis'"):
        await typed.read_hotels(city="Atlantis")
    (message,) = await typed.prompt_local_tips(city="Vienna")
    assert isinstance(message.content, types.TextContent) and "Vienna" in message.content.text
    template = "travel://activities/{city}/{category}"
    assert await typed.complete("resource", template, "city", "b") == ["Barcelona", "Berlin"]
