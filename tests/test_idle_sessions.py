"""Idle legacy sessions, over the wire against a generated server run with
``--session-idle-timeout 1``: a WebSocket connection or a legacy SSE stream with no message
either way and no request in flight for that long is closed (WebSocket 1001 "idle timeout";
the SSE stream ends and its session id then answers as an unknown one), while a silent tool
call running longer than the timeout holds the session, and messages reset the clock. A call
waiting on the client's answer to the server's question (elicitation) holds it no longer:
a client that never answers cannot keep a silent session open; and a question withdrawn with
its cancelled call counts no longer: a later silent call holds the session again."""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2 as httpx
import pytest
from support import running

from mcpgen.runtime.testing import free_port

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

TIMEOUT = 1.0  # the servers' --session-idle-timeout
SLOW = 3 * TIMEOUT  # a silent tool call this long
MANIFEST = """\
mcpgen: 1
server: {name: idler, description: Sleeps when asked.}
transports: {offer: [sse, websocket], default: websocket}
tools:
  - name: sleep
    description: Sleep without a word, then answer.
    input:
      type: object
      properties:
        seconds: {type: number, description: How long}
      required: [seconds]
  - name: ask
    description: Ask the user a question (elicitation), then answer with their action.
    context: true
    input:
      type: object
      properties:
        question: {type: string, description: What to ask}
      required: [question]
"""
HANDLER = """\
from __future__ import annotations

import anyio

from ... import ToolReturn
from ...models import SleepInput


async def handle(args: SleepInput) -> ToolReturn:
    await anyio.sleep(args.seconds)
    return "awake"
"""
ASK_HANDLER = """\
from __future__ import annotations

from ... import Context, ToolReturn
from ...models import AskInput


async def handle(args: AskInput, ctx: Context) -> ToolReturn:
    form = {"type": "object", "properties": {"name": {"type": "string"}}}
    return (await ctx.elicit_raw(args.question, form)).action
"""
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "test", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
NOTICE = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}  # no answer


def ping(n: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": n, "method": "ping"}


def sleep_call(n: int, seconds: float) -> dict[str, Any]:
    params = {"name": "sleep", "arguments": {"seconds": seconds}}
    return {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from click.testing import CliRunner

    from mcpgen.cli import main

    folder = tmp_path_factory.mktemp("idle")
    (folder / "m.yaml").write_text(MANIFEST, "utf-8")
    built = CliRunner().invoke(main, ["build", str(folder / "m.yaml"), "-o", str(folder / "out")])
    assert built.exit_code == 0, built.output
    handler = folder / "out" / "src" / "idler_mcp" / "handlers" / "tools" / "sleep.py"
    handler.write_text(HANDLER, "utf-8")
    handler.with_name("ask.py").write_text(ASK_HANDLER, "utf-8")
    return folder / "out" / "src"


def serve(package: Path, transport: str) -> Iterator[int]:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(package)}
    command = [sys.executable, "-m", "idler_mcp", "--transport", transport, "--port", str(port)]
    with running([*command, "--session-idle-timeout", str(TIMEOUT)], port, env):
        yield port


@pytest.fixture(scope="module")
def ws_port(package: Path) -> Iterator[int]:
    yield from serve(package, "websocket")


@pytest.fixture(scope="module")
def sse_port(package: Path) -> Iterator[int]:
    yield from serve(package, "sse")


def ask_call(n: int) -> dict[str, Any]:
    params = {"name": "ask", "arguments": {"question": "Your name?"}}
    return {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}


# WebSocket


@asynccontextmanager
async def ws_session(port: int) -> AsyncIterator[Any]:
    from websockets.asyncio.client import connect
    from websockets.typing import Subprotocol

    url = f"ws://127.0.0.1:{port}/ws"
    async with connect(url, subprotocols=[Subprotocol("mcp")]) as ws:
        await ws_ask(ws, INITIALIZE)
        await ws.send(json.dumps(INITIALIZED))
        yield ws


async def ws_ask(ws: Any, request: dict[str, Any]) -> dict[str, Any]:
    await ws.send(json.dumps(request))
    answer: dict[str, Any] = json.loads(await ws.recv())
    assert answer.get("id") == request["id"], answer
    return answer


async def ws_closed_after(ws: Any, since: float) -> float:
    """Seconds from ``since`` until the server closed ``ws`` as idle."""
    with anyio.fail_after(TIMEOUT + 20):  # without an idle timeout: never
        await ws.wait_closed()
    assert (ws.close_code, ws.close_reason) == (1001, "idle timeout")
    return time.monotonic() - since


async def test_an_idle_websocket_is_closed(ws_port: int) -> None:
    async with ws_session(ws_port) as ws:
        last = time.monotonic()
        assert await ws_closed_after(ws, last) >= TIMEOUT * 0.5


async def test_a_silent_slow_call_holds_a_websocket(ws_port: int) -> None:
    async with ws_session(ws_port) as ws:
        start = time.monotonic()
        answer = await ws_ask(ws, sleep_call(1, SLOW))
        answered = time.monotonic()
        assert answer["result"]["content"][0]["text"] == "awake", answer
        assert answered - start >= SLOW
        assert await ws_closed_after(ws, answered) >= TIMEOUT * 0.5


async def test_a_cancelled_call_holds_a_websocket_no_longer(ws_port: int) -> None:
    """A cancelled request is never answered: it stops counting as in flight."""
    async with ws_session(ws_port) as ws:
        await ws.send(json.dumps(sleep_call(1, 60)))
        await anyio.sleep(TIMEOUT / 2)
        cancel = {"requestId": 1, "reason": "enough"}
        await ws.send(json.dumps({**NOTICE, "method": "notifications/cancelled", "params": cancel}))
        last = time.monotonic()
        assert await ws_closed_after(ws, last) >= TIMEOUT * 0.5


async def test_an_unanswered_question_holds_a_websocket_no_longer(ws_port: int) -> None:
    """The client's call waits on the client's own answer: the session is idle."""
    async with ws_session(ws_port) as ws:
        await ws.send(json.dumps(ask_call(1)))
        question = json.loads(await ws.recv())
        assert question.get("method") == "elicitation/create", question
        last = time.monotonic()
        assert await ws_closed_after(ws, last) >= TIMEOUT * 0.5


async def test_a_silent_call_beside_an_unanswered_question_holds_a_websocket(
    ws_port: int,
) -> None:
    async with ws_session(ws_port) as ws:
        await ws.send(json.dumps(ask_call(1)))
        assert json.loads(await ws.recv())["method"] == "elicitation/create"
        start = time.monotonic()
        answer = await ws_ask(ws, sleep_call(2, SLOW))
        answered = time.monotonic()
        assert answer["result"]["content"][0]["text"] == "awake", answer
        assert answered - start >= SLOW
        assert await ws_closed_after(ws, answered) >= TIMEOUT * 0.5


async def test_an_answered_question_ends_the_call(ws_port: int) -> None:
    async with ws_session(ws_port) as ws:
        await ws.send(json.dumps(ask_call(1)))
        question = json.loads(await ws.recv())
        await anyio.sleep(TIMEOUT / 2)
        reply = {"jsonrpc": "2.0", "id": question["id"], "result": {"action": "decline"}}
        await ws.send(json.dumps(reply))
        answer = json.loads(await ws.recv())
        assert answer["id"] == 1 and answer["result"]["content"][0]["text"] == "decline"
        assert await ws_closed_after(ws, time.monotonic()) >= TIMEOUT * 0.5


async def test_messages_keep_a_websocket_open(ws_port: int) -> None:
    async with ws_session(ws_port) as ws:
        start = time.monotonic()
        for _ in range(7):  # a notification every half timeout, 3 timeouts long: not idle
            await anyio.sleep(TIMEOUT / 2)
            await ws.send(json.dumps(NOTICE))
        await ws_ask(ws, ping(1))  # still open
        last = time.monotonic()
        assert last - start >= 3 * TIMEOUT
        assert await ws_closed_after(ws, last) >= TIMEOUT * 0.5


# legacy SSE


class SseSession:
    """GET /sse, the endpoint it names, and the messages it streams."""

    def __init__(self, http: httpx.AsyncClient, lines: AsyncIterator[str]) -> None:
        self.http, self.lines, self.endpoint = http, lines, ""

    async def data(self, event: str = "message") -> str:
        current = None
        async for line in self.lines:
            if line.startswith("event:"):
                current = line[6:].strip()
            elif line.startswith("data:") and current == event:
                return line[5:].strip()
        raise EOFError("the stream ended")

    async def post(self, message: dict[str, Any]) -> httpx.Response:
        return await self.http.post(self.endpoint, json=message)

    async def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert (await self.post(request)).status_code == 202
        answer: dict[str, Any] = json.loads(await self.data())
        assert answer.get("id") == request["id"], answer
        return answer

    async def ended_after(self, since: float, dropped: int | None = None) -> float:
        """Seconds from ``since`` until the server ended the stream; then the session id
        gets the answer an unknown one gets. Before the end: nothing, or the server's last
        words on the request ``dropped`` (its question withdrawn, the request answered)."""
        said = []
        with anyio.fail_after(TIMEOUT + 20), pytest.raises(EOFError):
            while True:
                said.append(json.loads(await self.data()))
        assert len(said) == (0 if dropped is None else 2), said
        if dropped is not None:
            assert said[0]["method"] == "notifications/cancelled", said
            assert said[1]["id"] == dropped and "error" in said[1], said
        elapsed = time.monotonic() - since
        stale = await self.post(ping(99))
        unknown = await self.http.post(f"/messages/?session_id={uuid.uuid4().hex}", json=ping(99))
        assert stale.status_code == 404, stale.text
        assert (stale.status_code, stale.content) == (unknown.status_code, unknown.content)
        return elapsed


@asynccontextmanager
async def sse_session(port: int) -> AsyncIterator[SseSession]:
    async with (
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as http,
        http.stream("GET", "/sse") as stream,
    ):
        assert stream.status_code == 200
        session = SseSession(http, stream.aiter_lines())
        session.endpoint = await session.data("endpoint")
        await session.ask(INITIALIZE)
        assert (await session.post(INITIALIZED)).status_code == 202
        yield session


async def test_an_idle_sse_stream_ends(sse_port: int) -> None:
    async with sse_session(sse_port) as sse:
        last = time.monotonic()
        assert await sse.ended_after(last) >= TIMEOUT * 0.5


async def test_a_silent_slow_call_holds_an_sse_stream(sse_port: int) -> None:
    async with sse_session(sse_port) as sse:
        start = time.monotonic()
        answer = await sse.ask(sleep_call(1, SLOW))
        answered = time.monotonic()
        assert answer["result"]["content"][0]["text"] == "awake", answer
        assert answered - start >= SLOW
        assert await sse.ended_after(answered) >= TIMEOUT * 0.5


async def test_an_unanswered_question_holds_an_sse_stream_no_longer(sse_port: int) -> None:
    async with sse_session(sse_port) as sse:
        assert (await sse.post(ask_call(1))).status_code == 202
        question = json.loads(await sse.data())
        assert question.get("method") == "elicitation/create", question
        last = time.monotonic()
        assert await sse.ended_after(last, dropped=1) >= TIMEOUT * 0.5


async def test_messages_keep_an_sse_stream_open(sse_port: int) -> None:
    async with sse_session(sse_port) as sse:
        start = time.monotonic()
        for _ in range(7):
            await anyio.sleep(TIMEOUT / 2)
            assert (await sse.post(NOTICE)).status_code == 202
        await sse.ask(ping(1))
        last = time.monotonic()
        assert last - start >= 3 * TIMEOUT
        assert await sse.ended_after(last) >= TIMEOUT * 0.5


# a question withdrawn with its call: it counts no longer


def cancel(request_id: int | str) -> dict[str, Any]:
    params = {"requestId": request_id, "reason": "enough"}
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}


async def test_a_silent_call_after_a_cancelled_question_holds_a_websocket(ws_port: int) -> None:
    """The client cancels a call waiting on its answer: the server's question goes with it
    (withdrawn), and a later silent call holds the session again."""
    async with ws_session(ws_port) as ws:
        await ws.send(json.dumps(ask_call(1)))
        question = json.loads(await ws.recv())
        assert question.get("method") == "elicitation/create", question
        await ws.send(json.dumps(cancel(1)))
        withdrawn = json.loads(await ws.recv())
        assert withdrawn["method"] == "notifications/cancelled", withdrawn
        assert withdrawn["params"]["requestId"] == question["id"], withdrawn
        start = time.monotonic()
        answer = await ws_ask(ws, sleep_call(2, SLOW))
        answered = time.monotonic()
        assert answer["result"]["content"][0]["text"] == "awake", answer
        assert answered - start >= SLOW
        assert await ws_closed_after(ws, answered) >= TIMEOUT * 0.5


async def test_a_silent_call_after_a_cancelled_question_holds_an_sse_stream(
    sse_port: int,
) -> None:
    async with sse_session(sse_port) as sse:
        assert (await sse.post(ask_call(1))).status_code == 202
        question = json.loads(await sse.data())
        assert question.get("method") == "elicitation/create", question
        assert (await sse.post(cancel(1))).status_code == 202
        withdrawn = json.loads(await sse.data())
        assert withdrawn["params"]["requestId"] == question["id"], withdrawn
        start = time.monotonic()
        answer = await sse.ask(sleep_call(2, SLOW))
        answered = time.monotonic()
        assert answer["result"]["content"][0]["text"] == "awake", answer
        assert answered - start >= SLOW
        assert await sse.ended_after(answered) >= TIMEOUT * 0.5


# ids the SDK takes as one ("7" and 7, as the TypeScript SDK does): the clock too


async def test_a_call_cancelled_by_its_id_as_a_string_holds_a_websocket_no_longer(
    ws_port: int,
) -> None:
    async with ws_session(ws_port) as ws:
        await ws.send(json.dumps(sleep_call(1, 60)))
        await anyio.sleep(TIMEOUT / 2)
        await ws.send(json.dumps(cancel("1")))  # cancels request 1 (never answered)
        assert await ws_closed_after(ws, time.monotonic()) >= TIMEOUT * 0.5


async def test_a_question_answered_by_its_id_as_a_string_counts_no_longer(ws_port: int) -> None:
    async with ws_session(ws_port) as ws:
        await ws.send(json.dumps(ask_call(1)))
        question = json.loads(await ws.recv())
        reply = {"jsonrpc": "2.0", "id": str(question["id"]), "result": {"action": "decline"}}
        await ws.send(json.dumps(reply))
        assert json.loads(await ws.recv())["result"]["content"][0]["text"] == "decline"
        start = time.monotonic()
        answer = await ws_ask(ws, sleep_call(2, SLOW))  # held: no question is left asked
        answered = time.monotonic()
        assert answer["result"]["content"][0]["text"] == "awake", answer
        assert answered - start >= SLOW
