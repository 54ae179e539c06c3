"""Resumable streams of stateful HTTP (``eventstore.run_sse_writer``): the priming event
(a POST stream's first id) of a quick call shares the answer's write; a slow call's goes
first, alone, within ``PRIMING_WAIT``; a stream its handler closes (``ctx.close_sse_stream``)
before any event was still primed, and resumes by Last-Event-ID. Events are written as
sse-starlette writes them."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from types import SimpleNamespace
from typing import Any

import anyio
import mcp_types as types
import pytest
import rtkit
from mcp.server.streamable_http import EventMessage
from rtbridge import http_client, running
from sse_starlette.event import ensure_bytes

from mcpgen.runtime import Context, eventstore
from mcpgen.runtime.eventstore import MemoryEventStore, primed
from mcpgen.runtime.http_app import create_app
from mcpgen.runtime.server import Handlers, build_server
from mcpgen.runtime.tools import Arguments

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

VERSION = "2025-11-25"  # (a priming event for clients of this version on)
POST = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": VERSION,
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}
POLLING = Handlers()


@POLLING.tool("poll")
async def poll(arguments: Arguments, ctx: Context) -> Any:
    """Closes its stream (the client comes back for the answer) while its priming event
    is held (a close before the stream's writer started would leave it unprimed, with the
    SDK's writer too), then answers."""
    await anyio.sleep(eventstore.PRIMING_WAIT / 5)
    await ctx.close_sse_stream()
    await anyio.sleep(0.3)
    return "polled"


@asynccontextmanager
async def session(app: Any) -> AsyncIterator[tuple[Any, dict[str, str]]]:
    """A client into ``app`` (stateful HTTP) and the headers of its initialized session."""
    async with running(app), http_client(app) as http:
        opened = await http.post("/mcp", json=INITIALIZE, headers=POST)
        headers = {**POST, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
        headers["MCP-Protocol-Version"] = VERSION
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await http.post("/mcp", json=initialized, headers=headers)
        yield http, headers


def call(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": tool, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}


async def chunks(http: Any, method: str, headers: dict[str, str], **body: Any) -> list[tuple]:
    """(seconds since the request, bytes) of each write of a response, as the app sent it."""
    start, found = time.monotonic(), []
    async with http.stream(method, "/mcp", headers=headers, **body) as response:
        assert response.status_code == 200
        async for chunk in response.aiter_raw():
            found.append((time.monotonic() - start, chunk))
            if b'"id":2' in chunk.replace(b" ", b""):
                break
    return found


def ids(chunk: bytes) -> list[str]:
    return [line[4:] for line in chunk.decode().split("\r\n") if line.startswith("id: ")]


async def test_a_quick_answer_goes_in_one_write_with_its_priming_event() -> None:
    """One event less through the stream: the SDK wrote the priming event alone, then the
    answer; here both in one write, the priming event (id, empty data, retry) first. (The
    second call: the first one's may be slow, with the tool's handler imported.)"""
    app = rtkit.app(rtkit.make_spec("none"), "http", retry_interval=1500)
    async with session(app) as (http, headers):
        await http.post("/mcp", json=call("echo", {"text": "first"}), headers=headers)
        sent = await chunks(http, "POST", headers, json=call("echo", {"text": "quick"}))
    writes = [chunk for _, chunk in sent if chunk]
    assert len(writes) == 1, writes
    priming, answer = writes[0].split(b"\r\n\r\n")[:2]
    assert priming.split(b"\r\n")[1:] == [b"data: ", b"retry: 1500"] and ids(priming)
    assert b"event: message" in answer and b'"quick"' in answer


async def test_a_slow_calls_priming_event_goes_first_alone() -> None:
    app = rtkit.app(rtkit.make_spec("none"), "http")
    async with session(app) as (http, headers):
        sent = await chunks(http, "POST", headers, json=call("slow", {"seconds": 1.0}))
    (first_at, first), (answer_at, answer) = [(t, chunk) for t, chunk in sent if chunk]
    assert ids(first) and b"retry: " in first and b"slept" not in first
    assert first_at < eventstore.PRIMING_WAIT + 0.5 < answer_at and b"slept 1.0" in answer


async def test_a_priming_event_its_reader_was_not_ready_for_is_tried_again() -> None:
    """The priming timer fires while the stream's reader is not waiting (sse-starlette
    mid-send): the event goes out at a later try, not with the request's first event."""
    sse, reader = anyio.create_memory_object_stream[bytes](0)
    requests, incoming = anyio.create_memory_object_stream[Any](0)

    async def cleaned(request_id: Any) -> None:
        pass

    transport = SimpleNamespace(_sse_stream_writers={}, _clean_up_memory_streams=cleaned)
    async with anyio.create_task_group() as tasks, reader, requests:
        tasks.start_soon(eventstore.run_sse_writer, transport, 1, sse, incoming, {"id": "p1"})
        await anyio.sleep(eventstore.PRIMING_WAIT * 2.5)  # not receiving: the first try fails
        with anyio.fail_after(eventstore.PRIMING_WAIT * 5):
            assert await reader.receive() == primed({"id": "p1"})
        await requests.aclose()  # no event came: the writer ends


async def test_a_stream_its_handler_closes_was_primed_and_resumes() -> None:
    """``ctx.close_sse_stream`` before any event: the client still got the priming event,
    and resumes from it (GET with Last-Event-ID) to get the answer."""
    spec = rtkit.make_spec("none")
    spec["tools"] = [rtkit._tool("poll", rtkit.OPEN)]
    settings = rtkit.settings(spec, "http")
    app = create_app(spec, partial(build_server, spec, POLLING), settings, {})
    async with session(app) as (http, headers):
        closed = await http.post("/mcp", json=call("poll", {}), headers=headers)
        assert b"polled" not in closed.content, closed.content
        (primed_id,) = ids(closed.content)
        resumed = await chunks(http, "GET", {**headers, "Last-Event-ID": primed_id})
    assert b"polled" in b"".join(chunk for _, chunk in resumed)


async def test_events_are_written_as_sse_starlette_writes_them() -> None:
    """The priming event and an answer kept as JSON, written without sse-starlette: the
    bytes it writes of the SDK's events (a text with line breaks and non-ASCII in it)."""
    store = MemoryEventStore().for_session("s")
    result = {"content": [{"type": "text", "text": "two\r\nlines\u2028and é\n"}]}
    answer = types.JSONRPCResponse(jsonrpc="2.0", id=7, result=result)
    event_id = await store.store_event("7", answer)
    made = store.event_data(EventMessage(answer, event_id))
    sdk = {"event": "message", "data": answer.model_dump_json(by_alias=True, exclude_unset=True)}
    assert made == ensure_bytes({**sdk, "id": event_id}, "\r\n")
    for priming in ({"id": "ab12", "data": ""}, {"id": "ab12", "data": "", "retry": 1000}):
        assert primed(priming) == ensure_bytes(priming, "\r\n")
