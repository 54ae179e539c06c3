"""Handler for the update_note tool.

Change the title, body or tags of a note.

This file is yours: mcpgen created it once and never overwrites it.
Raise ``ToolError("message")`` to answer with a tool error the model can read.
"""

from __future__ import annotations

from ...models import Note, UpdateNoteInput


async def handle(args: UpdateNoteInput) -> Note:
    raise NotImplementedError
