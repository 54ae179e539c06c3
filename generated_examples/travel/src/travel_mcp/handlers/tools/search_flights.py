"""Handler for the search_flights tool.

Find direct flights between two airports on a date.

This file is yours: mcpgen created it once and never overwrites it.
Raise ``ToolError("message")`` to answer with a tool error the model can read.
"""

from __future__ import annotations

from ...models import SearchFlightsInput, SearchFlightsOutput


async def handle(args: SearchFlightsInput) -> SearchFlightsOutput:
    raise NotImplementedError
