"""The notes handlers at work, over every transport and era (``typed``: see conftest.py).

User code, kept across regenerations.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
import pytest

from notes_mcp.client import NotesClient, ToolCallError
from notes_mcp.server import create_server

pytestmark = pytest.mark.anyio


def text(contents: Any) -> str:
    (content,) = contents
    assert isinstance(content, types.TextContent | types.TextResourceContents)
    return content.text


async def test_a_note_from_creation_to_deletion(typed: NotesClient) -> None:
    note = await typed.create_note(title="Groceries", body="Eggs and flour", tags=["home"])
    assert note.id.startswith("n") and note.updated is not None
    assert await typed.get_note(id_=note.id) == note
    changed = await typed.update_note(id_=note.id, body="Eggs, flour and milk")
    assert (changed.title, changed.body, changed.tags) == (
        "Groceries",
        "Eggs, flour and milk",
        ["home"],
    )
    found = (await typed.search_notes(query="MILK", tag="home")).notes
    assert changed in found and not (await typed.search_notes(tag="no-such-tag")).notes
    assert "# Groceries\n\nEggs, flour and milk\n\nTags: home" in text(await typed.export_notes())
    assert text(await typed.read_note(id_=note.id)).startswith("# Groceries")
    assert note.id in text(await typed.read_all_notes())
    assert (await typed.delete_note(id_=note.id)).deleted
    assert not (await typed.delete_note(id_=note.id)).deleted  # idempotent
    with pytest.raises(ToolCallError, match=f"no note {note.id}"):
        await typed.get_note(id_=note.id)


async def test_subscribers_hear_of_changes() -> None:
    updated: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.append(str(message.params.uri))

    connecting = NotesClient.connect(create_server(), mode="legacy", message_handler=on_message)
    async with connecting as typed:
        await typed.client.subscribe_resource("notes://all")
        note = await typed.create_note(title="Call Ada", body="about the engine")
        with anyio.fail_after(5):
            while not updated:
                await anyio.sleep(0.01)
    assert updated == ["notes://all"], (updated, note.id)


async def test_note_ids_complete_from_the_callers_own_notes(typed: NotesClient) -> None:
    note = await typed.create_note(title="Complete me", body="by id")
    assert note.id in await typed.complete("resource", "notes://note/{id}", "id", "n")
    offered = await typed.complete("resource", "notes://note/{id}", "id", note.id)
    assert note.id in offered and all(i.startswith(note.id) for i in offered)
    assert await typed.complete("resource", "notes://note/{id}", "id", "x") == []
    await typed.delete_note(id_=note.id)
    assert note.id not in await typed.complete("resource", "notes://note/{id}", "id", "n")
    async with NotesClient.connect(create_server()) as other:  # another store: none of these
        assert await other.complete("resource", "notes://note/{id}", "id", "") == []
