"""Resource updates of per-caller content, attacked over the wire (round 20, g7).

The notes example keeps each caller's notes in ``ctx.store``: ``notes://all`` reads
differently for each verified caller. Deployed behind OAuth (the manifest plus an ``auth``
section, the example's own handlers), a change Alice makes must reach Alice's subscriptions
and never Bob's: Bob, subscribed to his own ``notes://all``, learnt when and how often Alice
wrote, and her note ids (``notes://note/n<k>``), in both protocol eras.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from sec_harness import (
    WORKTREE,
    Built,
    Json,
    Mcp,
    Server,
    ServerPool,
    Tokens,
    Watch,
    build,
    iter_sse,
)

pytestmark = [pytest.mark.security, pytest.mark.timeout(90)]

AUTH = """
auth:
  type: oauth
  issuer: https://auth.example.com
  audience: https://mcp.example.com/mcp
  jwksFile: jwks.json
"""
HANDLERS = WORKTREE / "generated_examples" / "notes" / "src" / "notes_mcp" / "handlers"
UPDATED = "notifications/resources/updated"


@pytest.fixture(scope="module")
def notes_built(workdir: Path) -> Built:
    manifest = (WORKTREE / "manifests" / "notes.yaml").read_text(encoding="utf-8") + AUTH
    built = build(workdir / "notes_auth", manifest, "notes_mcp")
    shutil.copytree(HANDLERS, built.src / "notes_mcp" / "handlers", dirs_exist_ok=True)
    return built


@pytest.fixture(scope="module")
def notes(notes_built: Built, tokens: Tokens, pool: ServerPool) -> Server:
    return pool.start(notes_built, env={"NOTES_JWKS_FILE": str(tokens.jwks)})


class Stream:
    """The messages of one long-lived response (a GET stream or a listen POST), read in a
    thread."""

    def __init__(self, method: str, url: str, headers: dict[str, str], body: Json = None):
        self.messages: list[Json] = []
        self.open = threading.Event()
        args = {"headers": headers} if body is None else {"headers": headers, "json": body}
        threading.Thread(target=self._read, args=(method, url, args), daemon=True).start()
        assert self.open.wait(10), "the stream did not open"

    def _read(self, method: str, url: str, args: dict[str, object]) -> None:
        with (
            httpx2.Client(timeout=httpx2.Timeout(10, read=None)) as http,
            http.stream(method, url, **args) as response,  # type: ignore[arg-type]
        ):
            assert response.status_code == 200, response.status_code
            self.open.set()
            with_messages = iter_sse(response)
            for message in with_messages:
                self.messages.append(message)

    def updates(self) -> list[str]:
        return [m["params"]["uri"] for m in self.messages if m.get("method") == UPDATED]


def handshake_watch(server: Server, headers: dict[str, str]) -> Stream:
    """A stateful session subscribed to notes://all, its GET stream read."""
    client = Mcp(server.url, headers)
    assert client.initialize().status == 200
    assert "result" in client.rpc("resources/subscribe", {"uri": "notes://all"})
    stream_headers = {**client.request_headers({}), "Accept": "text/event-stream"}
    return Stream("GET", client.endpoint, stream_headers)


def modern_watch(server: Server, headers: dict[str, str]) -> Stream:
    """A 2026-07-28 ``subscriptions/listen`` stream for notes://all."""
    client = Mcp(server.url, headers)
    filters = {"notifications": {"resourceSubscriptions": ["notes://all"]}}
    body = client.message("subscriptions/listen", filters)
    stream = Stream("POST", client.endpoint, client.request_headers(body), body)
    assert Watch(10).until(lambda: bool(stream.messages)), "no acknowledgement"
    return stream


@pytest.fixture
def watchers(notes: Server, tokens: Tokens) -> Iterator[dict[str, Stream]]:
    alice, bob = tokens.bearer([], subject="alice"), tokens.bearer([], subject="bob")
    yield {
        "alice handshake": handshake_watch(notes, alice),
        "alice 2026": modern_watch(notes, alice),
        "bob handshake": handshake_watch(notes, bob),
        "bob 2026": modern_watch(notes, bob),
    }


def test_a_callers_note_changes_reach_only_that_callers_subscriptions(
    notes: Server, tokens: Tokens, watchers: dict[str, Stream]
) -> None:
    alice = Mcp(notes.url, tokens.bearer([], subject="alice"))
    created = alice.call("create_note", {"title": "private", "body": "for me"})
    assert created["result"]["structuredContent"]["title"] == "private", created
    for name in ("alice handshake", "alice 2026"):
        stream = watchers[name]
        assert Watch(10).until(lambda s=stream: "notes://all" in s.updates()), name
    time.sleep(0.5)  # (Bob's streams were told at the same time, or never)
    for name in ("bob handshake", "bob 2026"):
        assert watchers[name].updates() == [], (name, json.dumps(watchers[name].messages))
    bob = Mcp(notes.url, tokens.bearer([], subject="bob"))  # Bob's own change reaches him
    assert "result" in bob.call("create_note", {"title": "mine", "body": "bob's"})
    for name in ("bob handshake", "bob 2026"):
        stream = watchers[name]
        assert Watch(10).until(lambda s=stream: "notes://all" in s.updates()), name
    time.sleep(0.5)
    for name, stream in watchers.items():
        assert stream.updates() == ["notes://all"], (name, json.dumps(stream.messages))
