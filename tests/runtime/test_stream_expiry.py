"""``http_auth.until_expiry``: a stream served until its caller's token lapses, and an
exception of the app it serves reaching the caller as itself (not in an ExceptionGroup)."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest

from mcpgen.runtime.http_auth import until_expiry
from mcpgen.runtime.identity import Identity


async def receive() -> dict[str, Any]:
    await anyio.sleep_forever()
    return {}


def serve(app: Any, expires_in: float) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    identity = Identity("alice", expires_at=int(time.time() + expires_in))
    scope = {"type": "http", "method": "GET", "path": "/mcp", "headers": []}
    anyio.run(until_expiry, app, scope, receive, send, identity)
    return sent


def test_an_exception_of_the_app_reaches_the_caller_as_itself() -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        raise LookupError("the app's own")

    with pytest.raises(LookupError, match="the app's own"):
        serve(app, 60)


def test_a_stream_ends_when_the_token_lapses() -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"event", "more_body": True})
        await anyio.sleep_forever()

    started = time.monotonic()
    sent = serve(app, 1)
    assert time.monotonic() - started < 5
    assert sent[-1] == {"type": "http.response.body", "body": b"", "more_body": False}
