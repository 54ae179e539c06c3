"""Resumable SSE streams: the last events of every stream, kept in memory."""

from __future__ import annotations

import os
from collections import OrderedDict
from typing import Any

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp_types import JSONRPCMessage


class MemoryEventStore(EventStore):
    """The last ``max_events`` events of every stream, so a client whose SSE stream broke
    resumes with ``Last-Event-ID`` (stateful HTTP, one process). Event ids are random.

    The SDK names a stream by its request id (or ``_GET_stream``), the same in every
    session, so each session gets its own view (``for_session``) of the one bounded store:
    a Last-Event-ID replays only events of the session it is presented in."""

    def __init__(
        self,
        max_events: int = 1000,
        session: str = "",
        events: OrderedDict[EventId, tuple[str, StreamId, JSONRPCMessage | None]] | None = None,
    ) -> None:
        self.max_events = max(1, max_events)
        self.session = session
        self.events = OrderedDict() if events is None else events

    def for_session(self, session: str) -> MemoryEventStore:
        return MemoryEventStore(self.max_events, session, self.events)

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        event_id = os.urandom(16).hex()  # as random as uuid4().hex, without the UUID object
        self.events[event_id] = (self.session, stream_id, message)
        while len(self.events) > self.max_events:
            self.events.popitem(last=False)
        return event_id

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        found = self.events.get(last_event_id)
        if found is None or found[0] != self.session:
            return None
        stream_id = found[1]
        after = False
        for event_id, (session, stream, message) in list(self.events.items()):
            if after and (session, stream) == found[:2] and message is not None:
                await send_callback(EventMessage(message, event_id))
            after = after or event_id == last_event_id
        return stream_id


def events_per_session(manager: Any) -> None:
    """Give each new session of the SDK's session manager its own view of the manager's
    store (the SDK hands every session the same store; ``_admit_session`` is SDK 2.3's,
    checked by the tests)."""
    admit = manager._admit_session

    def admit_with_own_events(requestor: Any) -> Any:
        transport = admit(requestor)
        if transport is not None:
            transport._event_store = manager.event_store.for_session(transport.mcp_session_id)
        return transport

    manager._admit_session = admit_with_own_events
