"""Completes resource notes://note/{id}, argument id: user code, kept across regenerations.

The ids of the caller's own notes (its ``ctx.store``), in the order they were created.
"""

from __future__ import annotations

from collections.abc import Sequence

from ... import Context
from .._notebook import open_notebook


async def complete(value: str, context: dict[str, str], ctx: Context) -> Sequence[str]:
    notes = (await open_notebook(ctx)).notes
    return [note_id for note_id in notes if note_id.startswith(value)]
