"""Handler for the search_flights tool: user code, kept across regenerations.

A deterministic stand-in for a flight search: the same question gets the same flights.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from ... import ToolError
from ...models import SearchFlightsInput, SearchFlightsOutput, SearchFlightsOutputFlight
from .._places import seed

CABIN_FACTOR = {"economy": 1.0, "premium": 1.6, "business": 3.0, "first": 5.0}


async def handle(args: SearchFlightsInput) -> SearchFlightsOutput:
    if args.origin == args.destination:
        raise ToolError(f"origin and destination are both {args.origin}")
    base = seed(args.origin, args.destination, args.date.isoformat())
    flights = []
    for n, hour in enumerate((7, 12, 18)):
        departs = datetime(args.date.year, args.date.month, args.date.day, hour, base % 12 * 5)
        arrives = departs + timedelta(minutes=60 + (base >> n) % 180)
        fare = (49 + (base >> (n + 3)) % 250) * CABIN_FACTOR[args.cabin or "economy"]
        flight = SearchFlightsOutputFlight(
            flight=f"MG{100 + (base + n) % 900}",
            departs=departs.isoformat(timespec="minutes"),
            arrives=arrives.isoformat(timespec="minutes"),
            price=round(fare * (args.passengers or 1), 2),
        )
        flights.append(flight)
    return SearchFlightsOutput(flights=flights)
