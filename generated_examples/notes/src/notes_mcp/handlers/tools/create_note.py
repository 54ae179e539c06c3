"""Handler for the create_note tool: user code, kept across regenerations."""

from __future__ import annotations

from ... import Context
from ...models import CreateNoteInput, Note
from .._notebook import now, open_notebook, save


async def handle(args: CreateNoteInput, ctx: Context) -> Note:
    notebook = await open_notebook(ctx)
    notebook.last += 1
    note = Note(
        id=f"n{notebook.last}",
        title=args.title,
        body=args.body,
        tags=args.tags or [],
        updated=now(),
    )
    notebook.notes[note.id] = note
    await save(ctx, notebook, note.id)
    return note
