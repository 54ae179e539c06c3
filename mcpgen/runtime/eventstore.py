"""Resumable SSE streams: the last events of every stream, kept in memory."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections import OrderedDict
from contextlib import suppress
from functools import partial
from typing import Any

import anyio
from mcp.server.streamable_http import (
    GET_STREAM_KEY,
    EventCallback,
    EventId,
    EventMessage,
    EventStore,
    StreamId,
)
from mcp_types import JSONRPCError, JSONRPCMessage, JSONRPCResponse, jsonrpc_message_adapter
from sse_starlette.event import ensure_bytes

from .jsonrpc import unencodable

MAX_EVENT_BYTES = 64 << 20  # of events' JSON kept (an API's answer may reach 10 MB)
PRIMING_WAIT = 0.1  # s a priming event waits to share the write of its request's first event
SEP = "\r\n"  # between the lines of an SSE event (sse-starlette's, the SDK's)
logger = logging.getLogger(__name__)


class MemoryEventStore(EventStore):
    """The last ``max_events`` events of every stream, at most ``MAX_EVENT_BYTES`` of them,
    so a client whose SSE stream broke resumes with ``Last-Event-ID`` (stateful HTTP, one
    process); each kept as the JSON it is sent as. The SDK names a stream by its request id
    (or ``_GET_stream``), the same in every session, so each session gets its own view
    (``for_session``) of the one store: a Last-Event-ID replays only its session's events."""

    size = 0  # bytes of the events, counted on the shared store only (``self.shared``)

    def __init__(
        self,
        max_events: int = 1000,
        session: str = "",
        shared: MemoryEventStore | None = None,
        json_response: bool = False,  # the session's POSTs are answered with JSON, no events
    ) -> None:
        self.max_events = max(1, max_events)
        self.session = session
        self.json_response = json_response
        self.shared = shared or self  # (the store this one is a view of)
        self.events: OrderedDict[EventId, tuple[str, StreamId, str]] = (
            OrderedDict() if shared is None else shared.events
        )

    def for_session(self, session: str, json_response: bool = False) -> MemoryEventStore:
        return MemoryEventStore(self.max_events, session, self.shared, json_response)

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        event_id = os.urandom(16).hex()  # as random as uuid4().hex, without the UUID object
        if self.json_response and stream_id != GET_STREAM_KEY:
            return event_id  # (a JSON answer carries no event id: it is never asked for)
        text = ""
        if message is not None:
            try:
                text = message.model_dump_json(by_alias=True, exclude_unset=True)
            except ValueError:  # (pydantic_core's) no JSON carries it: its answer -32603
                text = unencodable(message)
        self.events[event_id] = (self.session, stream_id, text)
        self.shared.size += sys.getsizeof(text)
        while len(self.events) > self.max_events or self.shared.size > MAX_EVENT_BYTES:
            self.shared.size -= sys.getsizeof(self.events.popitem(last=False)[1][2])
        return event_id

    def event_data(self, event: EventMessage) -> bytes | None:
        """The SSE event the SDK would send of ``event``, as sse-starlette writes it, from the
        JSON kept (one line: JSON has no line breaks); None if gone."""
        found = self.events.get(event_id := event.event_id or "")
        if found is None:
            return None
        return f"id: {event_id}{SEP}event: message{SEP}data: {found[2]}{SEP}{SEP}".encode()

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        found = self.events.get(last_event_id)
        if found is None or found[0] != self.session:
            return None
        after = False
        for event_id, (session, stream, text) in list(self.events.items()):
            if after and (session, stream) == found[:2] and text:
                message = jsonrpc_message_adapter.validate_json(text)
                await send_callback(EventMessage(message, event_id))
            after = after or event_id == last_event_id
        return found[1]


def events_per_session(manager: Any) -> None:
    """Give each new session its own view of the manager's store (the SDK hands every
    session the same one; ``_admit_session`` is SDK 2.3's, checked by the tests)."""
    admit = manager._admit_session

    def admit_with_own_events(requestor: Any) -> Any:
        transport = admit(requestor)
        if transport is not None:
            json_response = transport.is_json_response_enabled
            store = manager.event_store.for_session(transport.mcp_session_id, json_response)
            sent_as = transport._create_event_data  # the SDK's: JSON made again
            transport._event_store = store
            transport._create_event_data = lambda event: store.event_data(event) or sent_as(event)
            transport._run_sse_writer = partial(run_sse_writer, transport)
        return transport

    manager._admit_session = admit_with_own_events


def primed(priming: Any) -> bytes:
    """The SDK's priming event (id, empty data, any retry interval) as sse-starlette writes it."""
    retry = f"retry: {priming['retry']}{SEP}" if "retry" in priming else ""
    return f"id: {priming['id']}{SEP}data: {SEP}{retry}{SEP}".encode()


async def run_sse_writer(
    transport: Any, request_id: Any, sse: Any, requests: Any, priming: Any
) -> None:
    """SDK 2.3's private ``_run_sse_writer`` (a POST's events onto its SSE stream; the tests
    check its privates), but the priming event (the stream's first id, to resume from) goes
    out in one write with the request's first event, or alone after PRIMING_WAIT: a quick
    call's answer is one event less through the stream. ``close_sse_stream`` closes a clone
    of ``sse``, so a priming event still held goes out before the stream ends."""
    writers = transport._sse_stream_writers
    held, timer, clone = b"", None, None

    def flush() -> None:
        nonlocal held, timer
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            try:
                if held:
                    sse.send_nowait(held)  # (sse-starlette waits for it, unless mid-send)
                    held = b""
            except anyio.WouldBlock:  # its reader is not waiting now: again later
                timer = asyncio.get_running_loop().call_later(PRIMING_WAIT, flush)

    try:
        async with sse, requests:
            if priming is not None:
                held = primed(priming)
                writers[request_id] = clone = sse.clone()
                timer = asyncio.get_running_loop().call_later(PRIMING_WAIT, flush)
            with suppress(anyio.ClosedResourceError):  # (``close_sse_stream`` closed ``requests``)
                async for event in requests:
                    data = transport._create_event_data(event)
                    if held:
                        data, held = held + ensure_bytes(data, SEP), b""
                    await sse.send(data)
                    if isinstance(event.message, JSONRPCResponse | JSONRPCError):
                        break
            if held:  # (closed before any event)
                data, held = held, b""
                await sse.send(data)
    except anyio.ClosedResourceError:
        logger.debug("SSE stream closed by close_sse_stream()")
    except Exception:
        logger.exception("Error in SSE writer")
    finally:
        if timer is not None:
            timer.cancel()
        if clone is not None:
            clone.close()  # (if ``close_sse_stream`` has not)
        writers.pop(request_id, None)
        await transport._clean_up_memory_streams(request_id)
