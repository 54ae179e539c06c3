"""Completions of per-caller content, attacked over the wire (round 20, g9).

The notes example keeps each caller's notes in ``ctx.store``; its completion of
``notes://note/{id}`` (``context: true``) offers the caller's own note ids. Deployed behind
OAuth (the manifest plus an ``auth`` section, the example's own handlers), Bob completing a
note id must never be offered Alice's ids (which would tell him how many notes she has and
which she deleted), in either protocol era.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from sec_harness import WORKTREE, Built, Json, Mcp, Server, ServerPool, Tokens, build

pytestmark = [pytest.mark.security, pytest.mark.timeout(90)]

AUTH = """
auth:
  type: oauth
  issuer: https://auth.example.com
  audience: https://mcp.example.com/mcp
  jwksFile: jwks.json
"""
HANDLERS = WORKTREE / "generated_examples" / "notes" / "src" / "notes_mcp" / "handlers"
NOTE = {"type": "ref/resource", "uri": "notes://note/{id}"}


@pytest.fixture(scope="module")
def notes(workdir: Path, tokens: Tokens, pool: ServerPool) -> Server:
    manifest = (WORKTREE / "manifests" / "notes.yaml").read_text(encoding="utf-8") + AUTH
    built: Built = build(workdir / "notes_completions", manifest, "notes_mcp")
    shutil.copytree(HANDLERS, built.src / "notes_mcp" / "handlers", dirs_exist_ok=True)
    return pool.start(built, env={"NOTES_JWKS_FILE": str(tokens.jwks)})


def completed(client: Mcp, value: str) -> Json:
    answer = client.rpc(
        "completion/complete", {"ref": NOTE, "argument": {"name": "id", "value": value}}
    )
    assert "result" in answer, answer
    return answer["result"]["completion"]["values"]


@pytest.mark.parametrize("era", ["handshake", "modern"])
def test_each_caller_completes_only_its_own_note_ids(
    notes: Server, tokens: Tokens, era: str
) -> None:
    alice = Mcp(notes.url, tokens.bearer([], subject=f"alice-{era}"))
    bob = Mcp(notes.url, tokens.bearer([], subject=f"bob-{era}"))
    if era == "handshake":
        for client in (alice, bob):
            assert client.initialize().status == 200
    for title in ("one", "two", "three"):
        assert "result" in alice.call("create_note", {"title": title, "body": "hers"})
    assert alice.call("delete_note", {"id": "n1"})["result"]["structuredContent"]["deleted"]
    assert "result" in bob.call("create_note", {"title": "mine", "body": "his"})
    assert completed(alice, "") == ["n2", "n3"]
    assert completed(alice, "n3") == ["n3"]
    assert completed(bob, "") == ["n1"]
    assert completed(bob, "n2") == []
    carol = Mcp(notes.url, tokens.bearer([], subject=f"carol-{era}"))
    if era == "handshake":
        assert carol.initialize().status == 200
    assert completed(carol, "") == []
