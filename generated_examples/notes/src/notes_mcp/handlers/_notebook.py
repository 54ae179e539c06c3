"""The caller's notes, kept in ``ctx.store``: per user, and in Redis when replicas share state.

User code, kept across regenerations: every handler of this package reads and saves here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from .. import Context, ToolError
from ..models import Note

KEY = "notebook"  # {"last": number of the last id given, "notes": {id: note}}
KEPT = 365 * 86400.0  # seconds a notebook outlives its last change
ALL = "notes://all"


@dataclass
class Notebook:
    last: int = 0
    notes: dict[str, Note] = field(default_factory=dict)

    def get(self, note_id: str) -> Note:
        if note_id not in self.notes:
            raise ToolError(f"no note {note_id}: search_notes lists the ones there are")
        return self.notes[note_id]


async def open_notebook(ctx: Context) -> Notebook:
    saved = await ctx.store.get(KEY, {})
    notes = {k: Note.model_validate(v) for k, v in saved.get("notes", {}).items()}
    return Notebook(saved.get("last", 0), notes)


async def save(ctx: Context, notebook: Notebook, changed: str) -> None:
    """Keep ``notebook`` and tell this caller's subscriptions that note ``changed`` and the
    list did (another caller's notes are others: its subscriptions hear nothing)."""
    notes = {k: n.model_dump(mode="json", exclude_none=True) for k, n in notebook.notes.items()}
    await ctx.store.set(KEY, {"last": notebook.last, "notes": notes}, ttl=KEPT)
    await ctx.notify_resource_updated(ALL, caller_only=True)
    await ctx.notify_resource_updated(f"notes://note/{changed}", caller_only=True)


def now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def markdown(note: Note) -> str:
    tags = f"\n\nTags: {', '.join(note.tags)}" if note.tags else ""
    return f"# {note.title}\n\n{note.body}{tags}\n"
