"""Handler for the delete_note tool.

Delete a note for good.

This file is yours: mcpgen created it once and never overwrites it.
Raise ``ToolError("message")`` to answer with a tool error the model can read.
"""

from __future__ import annotations

from ...models import DeleteNoteInput, DeleteNoteOutput


async def handle(args: DeleteNoteInput) -> DeleteNoteOutput:
    raise NotImplementedError
