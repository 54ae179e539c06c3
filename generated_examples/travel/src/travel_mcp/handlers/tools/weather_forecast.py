"""Handler for the weather_forecast tool.

Daily forecast for a city, up to 7 days ahead.

This file is yours: mcpgen created it once and never overwrites it.
Raise ``ToolError("message")`` to answer with a tool error the model can read.
"""

from __future__ import annotations

from ... import Context
from ...models import WeatherForecastInput, WeatherForecastOutput


async def handle(args: WeatherForecastInput, ctx: Context) -> WeatherForecastOutput:
    raise NotImplementedError
