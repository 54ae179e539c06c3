"""Handler for the search_notes tool: user code, kept across regenerations."""

from __future__ import annotations

from ... import Context
from ...models import Note, SearchNotesInput, SearchNotesOutput
from .._notebook import open_notebook


def _matches(note: Note, query: str) -> bool:
    return any(query in text.lower() for text in (note.title, note.body, *note.tags))


async def handle(args: SearchNotesInput, ctx: Context) -> SearchNotesOutput:
    found = [
        note
        for note in (await open_notebook(ctx)).notes.values()
        if (args.tag is None or args.tag in note.tags)
        and (not args.query or _matches(note, args.query.lower()))
    ]
    return SearchNotesOutput(notes=found[: args.limit or 20])
