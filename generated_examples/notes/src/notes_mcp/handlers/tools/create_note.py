"""Handler for the create_note tool.

Create a note and return it with its new id.

This file is yours: mcpgen created it once and never overwrites it.
Raise ``ToolError("message")`` to answer with a tool error the model can read.
"""

from __future__ import annotations

from ...models import CreateNoteInput, Note


async def handle(args: CreateNoteInput) -> Note:
    raise NotImplementedError
