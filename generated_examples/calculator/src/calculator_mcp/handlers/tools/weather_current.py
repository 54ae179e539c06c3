"""Handler for the weather_current tool: user code, kept across regenerations.

A deterministic stand-in for a weather service, reporting progress through the context.
"""

from __future__ import annotations

import hashlib

from ... import Context
from ...models import WeatherCurrentInput, WeatherCurrentOutput


async def handle(args: WeatherCurrentInput, ctx: Context) -> WeatherCurrentOutput:
    await ctx.progress(0, 1, f"looking up {args.location}")
    seed = int(hashlib.sha256(args.location.lower().encode()).hexdigest()[:8], 16)
    celsius = seed % 35 - 5
    temperature = {"metric": celsius, "imperial": celsius * 9 / 5 + 32, "kelvin": celsius + 273.15}
    await ctx.progress(1, 1, "done")
    return WeatherCurrentOutput(
        temperature=temperature[args.units or "metric"],
        conditions=["sunny", "cloudy", "rain", "snow"][seed % 4],
    )
