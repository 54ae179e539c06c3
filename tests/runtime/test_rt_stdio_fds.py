"""The stdio transport (``runtime.stdio``) served in process: the fds it claims are closed
when it ends, and an SDK without the private claim it relies on fails at startup."""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import mcp.server.stdio as sdk
import pytest
import rtkit
from rtstdio import INITIALIZE, INITIALIZED, call, lines

from mcpgen.runtime import stdio


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.fixture
def standard_fds() -> Iterator[None]:
    """fds 0 and 1 as they were, after the test."""
    saved = os.dup(0), os.dup(1)
    try:
        yield
    finally:
        for fd, held in enumerate(saved):
            os.dup2(held, fd)
            os.close(held)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts fds in /proc")
@pytest.mark.parametrize("stdin", ["pipe", "file"])  # the asyncio pipes, the SDK's transport
def test_a_serve_in_process_leaves_no_fd_open(
    stdin: str, tmp_path: Path, standard_fds: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The claims' duplicates of fds 0 and 1 are closed once the wire is back in them (the
    fallback's stdout too: claimed here, not by the SDK's transport, which leaves it open)."""
    # (here, not in a fixture: pytest's capture sets its own between setup and call)
    monkeypatch.setattr(sys, "stdin", open(0, closefd=False))  # noqa: SIM115
    monkeypatch.setattr(sys, "stdout", open(1, "w", closefd=False))  # noqa: SIM115
    requests = lines([INITIALIZE, INITIALIZED, call(2, "echo", {"text": "hi"})])
    server = rtkit.server(rtkit.make_spec("none"))
    answers, out = os.pipe()
    if stdin == "pipe":
        source, feed = os.pipe()
        os.write(feed, requests)
        os.close(feed)
    else:
        (tmp_path / "in").write_bytes(requests)
        source = os.open(tmp_path / "in", os.O_RDONLY)
    for fd, held in ((0, source), (1, out)):
        os.dup2(held, fd)
        os.close(held)

    async def serve() -> None:
        assert stdio.on_pipes() == (stdin == "pipe")
        await stdio.serve(server, 0)

    before = _open_fds()
    anyio.run(serve)
    assert _open_fds() == before
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)  # the pipe's last writer gone: its reader sees the end
    os.close(null)
    with os.fdopen(answers, "rb") as read:
        received = [json.loads(line) for line in read.read().splitlines()]
    assert [m["result"]["structuredContent"] for m in received if m.get("id") == 2] == [
        {"text": "hi"}
    ]


def test_an_sdk_without_the_private_claim_fails_at_startup_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``stdio`` relies on SDK 2.3's private ``_claim_fd``: a later SDK without it is a
    clear error when the transport is imported (``cli`` does, to serve), not one mid-serve."""
    monkeypatch.delattr(sdk, "_claim_fd")
    try:
        with pytest.raises(ImportError, match=r"_claim_fd.*mcp>=2\.3,<2\.4"):
            importlib.reload(stdio)
    finally:
        monkeypatch.undo()
        importlib.reload(stdio)
