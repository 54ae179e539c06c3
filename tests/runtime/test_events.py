"""Per-connection event state (``runtime.events``) forgets connections that went away."""

from __future__ import annotations

import gc
from typing import Any

import pytest
from mcp_types import SetLevelRequestParams

from mcpgen.runtime.resources import subscribed
from mcpgen.runtime.sharing import ReplicaEvents

pytestmark = pytest.mark.anyio


class _Connection:
    protocol_version = "2025-11-25"


class _RequestSession:
    """Like the SDK's per-request ``ServerSession``: it refers to its connection."""

    protocol_version = "2025-11-25"

    def __init__(self, connection: _Connection) -> None:
        self._connection = connection


class _Request:
    def __init__(self, session: _RequestSession) -> None:
        self.session = session
        self.protocol_version = session.protocol_version


async def _call_next(ctx: Any) -> None:
    return None


async def test_connections_that_went_away_are_forgotten() -> None:
    """Per-connection state holds nothing that refers back to the connection: a stateless
    server makes a connection a request, and kept every one of them (with its request and
    transport) alive before (its memory grew ~20 kB a call under load)."""
    events = ReplicaEvents()
    kept = _Connection()
    for connection in (kept, *(_Connection() for _ in range(50))):
        request: Any = _Request(_RequestSession(connection))
        await events.track(request, _call_next)
        await subscribed(events, request, "file:///x")
        await events.set_level(request, SetLevelRequestParams(level="error"))
    del connection, request
    gc.collect()
    assert list(events._handshake) == [kept]
    assert list(events.subscribed) == [kept]
    assert list(events._levels) == [kept]
