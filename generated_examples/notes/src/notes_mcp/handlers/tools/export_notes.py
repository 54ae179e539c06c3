"""Handler for the export_notes tool.

Export every note as Markdown, reporting progress as it goes.

This file is yours: mcpgen created it once and never overwrites it.
Raise ``ToolError("message")`` to answer with a tool error the model can read.
"""

from __future__ import annotations

from ... import Context, ToolReturn
from ...models import ExportNotesInput


async def handle(args: ExportNotesInput, ctx: Context) -> ToolReturn:
    raise NotImplementedError
