"""Handler for the delete_note tool: user code, kept across regenerations."""

from __future__ import annotations

from ... import Context
from ...models import DeleteNoteInput, DeleteNoteOutput
from .._notebook import open_notebook, save


async def handle(args: DeleteNoteInput, ctx: Context) -> DeleteNoteOutput:
    notebook = await open_notebook(ctx)
    if notebook.notes.pop(args.id, None) is None:
        return DeleteNoteOutput(deleted=False)  # already gone: deleting is idempotent
    await save(ctx, notebook, args.id)
    return DeleteNoteOutput(deleted=True)
