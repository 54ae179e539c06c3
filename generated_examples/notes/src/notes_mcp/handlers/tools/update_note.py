"""Handler for the update_note tool: user code, kept across regenerations."""

from __future__ import annotations

from ... import Context
from ...models import Note, UpdateNoteInput
from .._notebook import now, open_notebook, save


async def handle(args: UpdateNoteInput, ctx: Context) -> Note:
    notebook = await open_notebook(ctx)
    changes = args.model_dump(exclude={"id"}, exclude_none=True)
    note = notebook.get(args.id).model_copy(update={**changes, "updated": now()})
    notebook.notes[note.id] = note
    await save(ctx, notebook, note.id)
    return note
