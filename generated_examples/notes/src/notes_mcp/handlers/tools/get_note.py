"""Handler for the get_note tool.

Fetch one note by id.

This file is yours: mcpgen created it once and never overwrites it.
Raise ``ToolError("message")`` to answer with a tool error the model can read.
"""

from __future__ import annotations

from ...models import GetNoteInput, Note


async def handle(args: GetNoteInput) -> Note:
    raise NotImplementedError
