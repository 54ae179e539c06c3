"""Content of the all-notes resource (notes://all): user code, kept across regenerations."""

from __future__ import annotations

import json

from ... import Context, ResourceReturn
from .._notebook import open_notebook


async def read(ctx: Context) -> ResourceReturn:
    notes = (await open_notebook(ctx)).notes.values()
    return json.dumps([note.model_dump(mode="json", exclude_none=True) for note in notes])
