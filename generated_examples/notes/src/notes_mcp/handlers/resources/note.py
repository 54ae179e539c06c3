"""Content of the note resource (notes://note/{id}): user code, kept across regenerations."""

from __future__ import annotations

from ... import Context, ResourceNotFound, ResourceReturn
from .._notebook import markdown, open_notebook


async def read(id_: str, ctx: Context) -> ResourceReturn:
    notes = (await open_notebook(ctx)).notes
    if id_ not in notes:
        raise ResourceNotFound(f"no note {id_}")
    return markdown(notes[id_])
