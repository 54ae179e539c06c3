"""Handler for the search_notes tool.

Find notes whose title, body or tags contain the query.

This file is yours: mcpgen created it once and never overwrites it.
Raise ``ToolError("message")`` to answer with a tool error the model can read.
"""

from __future__ import annotations

from ...models import SearchNotesInput, SearchNotesOutput


async def handle(args: SearchNotesInput) -> SearchNotesOutput:
    raise NotImplementedError
