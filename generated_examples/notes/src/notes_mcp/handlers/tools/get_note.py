"""Handler for the get_note tool: user code, kept across regenerations."""

from __future__ import annotations

from ... import Context
from ...models import GetNoteInput, Note
from .._notebook import open_notebook


async def handle(args: GetNoteInput, ctx: Context) -> Note:
    return (await open_notebook(ctx)).get(args.id)
