"""What an imported operation sends, attacked value by value against a local upstream
that records the raw request: JSON ``null``, integral numbers, and cookies the upstream
sets (the request carries the operation's parameters and credential, nothing else)."""

from __future__ import annotations

from typing import Any

import pytest
from wirekit import operations, recorder, upstream

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]


def document(path: str, params: list[dict[str, Any]]) -> Any:
    op = {"operationId": "send", "parameters": params, "responses": {"200": {"description": "ok"}}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {path: {"get": op}},
    }


def param(name: str, where: str, schema: Any) -> dict[str, Any]:
    return {"name": name, "in": where, "required": where == "path", "schema": schema}


async def test_a_cookie_the_upstream_sets_is_never_sent_again() -> None:
    """The server's one HTTP client serves every caller: a session cookie one call
    received must not ride along on the next call (another caller's, maybe)."""
    data = document("/x", [])
    with recorder() as rec:
        api = upstream(rec.url)
        rec.headers = [("Set-Cookie", "session=caller-a; Path=/")]
        assert not (await api.call(operations(data)["send"], {})).is_error
        rec.headers = []
        assert not (await api.call(operations(data)["send"], {})).is_error
        assert [seen.headers.get("cookie") for seen in rec.seen] == [None, None]
