"""Handler for the export_notes tool: user code, kept across regenerations."""

from __future__ import annotations

from ... import Context, ToolReturn, text
from ...models import ExportNotesInput
from .._notebook import markdown, open_notebook


async def handle(args: ExportNotesInput, ctx: Context) -> ToolReturn:
    notes = list((await open_notebook(ctx)).notes.values())
    parts = []
    for done, note in enumerate(notes, 1):
        parts.append(markdown(note))
        await ctx.progress(done, len(notes), f"exported {note.id}")
    return [text("\n".join(parts) or "No notes yet.\n")]
