"""Resumable SSE streams: the last events of every stream, kept in memory."""

from __future__ import annotations

import os
from collections import OrderedDict

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp_types import JSONRPCMessage


class MemoryEventStore(EventStore):
    """The last ``max_events`` events of every stream, so a client whose SSE stream broke
    resumes with ``Last-Event-ID`` (stateful HTTP, one process). Event ids are random."""

    def __init__(self, max_events: int = 1000) -> None:
        self.max_events = max(1, max_events)
        self.events: OrderedDict[EventId, tuple[StreamId, JSONRPCMessage | None]] = OrderedDict()

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        event_id = os.urandom(16).hex()  # as random as uuid4().hex, without the UUID object
        self.events[event_id] = (stream_id, message)
        while len(self.events) > self.max_events:
            self.events.popitem(last=False)
        return event_id

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        if last_event_id not in self.events:
            return None
        stream_id = self.events[last_event_id][0]
        after = False
        for event_id, (stream, message) in list(self.events.items()):
            if after and stream == stream_id and message is not None:
                await send_callback(EventMessage(message, event_id))
            after = after or event_id == last_event_id
        return stream_id
