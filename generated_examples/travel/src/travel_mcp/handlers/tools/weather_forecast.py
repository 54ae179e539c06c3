"""Handler for the weather_forecast tool: user code, kept across regenerations.

A deterministic stand-in for a weather service, reporting progress day by day.
"""

from __future__ import annotations

from datetime import date, timedelta

from ... import Context
from ...models import WeatherForecastInput, WeatherForecastOutput, WeatherForecastOutputDay
from .._places import seed

SUMMARIES = ("sunny", "partly cloudy", "cloudy", "showers", "windy")


async def handle(args: WeatherForecastInput, ctx: Context) -> WeatherForecastOutput:
    count = args.days or 3
    days = []
    for n in range(count):
        day = (date.today() + timedelta(days=n)).isoformat()
        value = seed(args.city, day)
        low = value % 20 - 3
        days.append(
            WeatherForecastOutputDay(
                date=day, high=low + 4 + value % 9, low=low, summary=SUMMARIES[value % 5]
            )
        )
        await ctx.progress(n + 1, count, f"forecast for {day}")
    return WeatherForecastOutput(city=args.city, days=days)
