"""Driving the runtime's ASGI apps in this process, without sockets.

``Bridge`` is an httpx2 transport that runs an ASGI app as a task and hands the client
each response chunk as the app sends it: ``httpx2.ASGITransport`` waits for the whole body,
which a server-sent event stream (streamable HTTP's GET stream, legacy SSE) never ends.
The request body is streamed too, chunk by chunk, so body limits see what a socket gives.
Closing a response tells the app its client is gone (``http.disconnect``).

``websocket`` opens a WebSocket to an ASGI app the same way (ASGI ``websocket.*``
messages, no framing): a refused handshake raises ``Refused`` with the HTTP answer the app
sent (the denial-response extension), an accepted one yields a ``WebSocketPeer``.
"""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from mcp_types import jsonrpc_message_adapter

BASE = "http://127.0.0.1:8000"
Message = dict[str, Any]


class _Body(httpx2.AsyncByteStream):
    def __init__(self, chunks: MemoryObjectReceiveStream[bytes], gone: anyio.Event) -> None:
        self.chunks = chunks
        self.gone = gone

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.chunks:
            yield chunk

    async def aclose(self) -> None:
        self.gone.set()
        await self.chunks.aclose()


class Bridge(httpx2.AsyncBaseTransport):
    """An httpx2 transport into ``app`` (enter it through ``httpx2.AsyncClient``)."""

    def __init__(self, app: Any, client: tuple[str, int] = ("127.0.0.1", 40000)) -> None:
        self.app = app
        self.client = client
        self._tasks: Any = None

    async def __aenter__(self) -> Bridge:
        self._tasks = anyio.create_task_group()
        await self._tasks.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self._tasks.cancel_scope.cancel()
        await self._tasks.__aexit__(None, None, None)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        assert isinstance(request.stream, httpx2.AsyncByteStream)
        body = request.stream.__aiter__()
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": request.method,
            "scheme": request.url.scheme,
            "path": request.url.path,
            "raw_path": request.url.raw_path.split(b"?", 1)[0],
            "query_string": request.url.query,
            "root_path": "",
            "headers": [(k.lower(), v) for k, v in request.headers.raw],
            "server": (request.url.host, request.url.port),
            "client": self.client,
        }
        body_done = False
        gone = anyio.Event()
        started = anyio.Event()
        head: dict[str, Any] = {}
        failure: list[BaseException] = []
        out, chunks = anyio.create_memory_object_stream[bytes](math.inf)

        async def receive() -> Message:
            nonlocal body_done
            if not body_done:
                try:
                    chunk = await body.__anext__()
                except StopAsyncIteration:
                    body_done = True
                    return {"type": "http.request", "body": b"", "more_body": False}
                return {"type": "http.request", "body": bytes(chunk), "more_body": True}
            await gone.wait()
            return {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            if message["type"] == "http.response.start":
                head.update(status=message["status"], headers=message.get("headers", []))
                started.set()
            elif message["type"] == "http.response.body":
                if message.get("body"):
                    await out.send(message["body"])
                if not message.get("more_body", False):
                    out.close()

        async def run() -> None:
            try:
                await self.app(scope, receive, send)
            except Exception as exc:  # fails the request, or truncates a started response
                failure.append(exc)
            finally:
                started.set()
                out.close()

        self._tasks.start_soon(run)
        try:
            await started.wait()
        except BaseException:  # the client gave up before the answer began: it is gone
            gone.set()
            raise
        if "status" not in head:
            gone.set()
            await chunks.aclose()
            raise failure[0] if failure else RuntimeError("the app sent no response")
        return httpx2.Response(
            head["status"], headers=head["headers"], stream=_Body(chunks, gone), request=request
        )


def http_client(
    app: Any, headers: Mapping[str, str] | None = None, address: str = "127.0.0.1", **options: Any
) -> httpx2.AsyncClient:
    """An httpx2 client into ``app``; requests come from ``address``."""
    return httpx2.AsyncClient(
        transport=Bridge(app, (address, 40000)),
        base_url=BASE,
        headers=dict(headers or {}),
        timeout=httpx2.Timeout(30, read=300),
        **options,
    )


@asynccontextmanager
async def running(app: Any) -> AsyncIterator[Any]:
    """``app`` with its lifespan running (the streamable HTTP session manager lives there)."""
    async with app.router.lifespan_context(app):
        yield app


class Refused(Exception):
    """A WebSocket handshake the app answered with HTTP (``status``) or closed (``code``)."""

    def __init__(self, status: int, body: bytes = b"", code: int | None = None) -> None:
        super().__init__(f"refused: HTTP {status} {body[:200]!r} (close code {code})")
        self.status = status
        self.body = body
        self.code = code


class WebSocketPeer:
    """The client end of an in-process WebSocket."""

    def __init__(self, to_app: MemoryObjectSendStream[Message], from_app: Any) -> None:
        self.to_app = to_app
        self.from_app = from_app
        self.subprotocol: str | None = None
        self.close_code: int | None = None
        self.close_reason: str | None = None

    async def send_text(self, text: str) -> None:
        await self.to_app.send({"type": "websocket.receive", "text": text})

    async def receive_text(self) -> str | None:
        """The next text frame, or None once the app closed the connection."""
        async for message in self.from_app:
            if message["type"] == "websocket.send" and message.get("text") is not None:
                return str(message["text"])
            if message["type"] == "websocket.close":
                self.close_code = message.get("code", 1000)
                self.close_reason = message.get("reason")
                return None
        return None


@asynccontextmanager
async def websocket(
    app: Any,
    path: str = "/ws",
    headers: Mapping[str, str] | None = None,
    subprotocols: tuple[str, ...] = ("mcp",),
) -> AsyncIterator[WebSocketPeer]:
    given = {k.lower(): v for k, v in (headers or {}).items()}
    given.setdefault("host", "127.0.0.1:8000")
    raw = [(k.encode(), v.encode()) for k, v in given.items()]
    scope = {
        "type": "websocket",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "scheme": "ws",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": raw,
        "client": ("127.0.0.1", 40001),
        "server": ("127.0.0.1", 8000),
        "subprotocols": list(subprotocols),
        "extensions": {"websocket.http.response": {}},
    }
    to_app, app_in = anyio.create_memory_object_stream[Message](math.inf)
    app_out, from_app = anyio.create_memory_object_stream[Message](math.inf)
    refused: Refused | None = None
    async with anyio.create_task_group() as tg:

        async def run() -> None:
            async with app_out:
                await app(scope, app_in.receive, app_out.send)

        tg.start_soon(run)
        await to_app.send({"type": "websocket.connect"})
        first = await from_app.receive()
        if first["type"] == "websocket.accept":
            peer = WebSocketPeer(to_app, from_app)
            peer.subprotocol = first.get("subprotocol")
            try:
                yield peer
            finally:
                await to_app.send({"type": "websocket.disconnect", "code": 1000})
                with anyio.move_on_after(5):
                    async for _ in from_app:
                        pass
                tg.cancel_scope.cancel()
        else:
            body = b""
            if first["type"] == "websocket.http.response.start":
                async for message in from_app:
                    body += message.get("body", b"")
                    if not message.get("more_body", False):
                        break
                refused = Refused(first["status"], body)
            else:
                refused = Refused(403, code=first.get("code"))
            tg.cancel_scope.cancel()
    if refused is not None:
        raise refused


@asynccontextmanager
async def websocket_transport(
    app: Any, headers: Mapping[str, str] | None = None, path: str = "/ws"
) -> AsyncIterator[tuple[Any, Any]]:
    """(read, write) streams for ``mcp.client.Client`` over an in-process WebSocket."""
    read_in, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_out = anyio.create_memory_object_stream[SessionMessage](0)
    async with websocket(app, path, headers) as peer, anyio.create_task_group() as tg:

        async def reader() -> None:
            async with read_in:
                while (text := await peer.receive_text()) is not None:
                    await read_in.send(SessionMessage(jsonrpc_message_adapter.validate_json(text)))

        async def writer() -> None:
            async with write_out:
                async for message in write_out:
                    data = message.message.model_dump(by_alias=True, exclude_unset=True)
                    await peer.send_text(json.dumps(data))

        tg.start_soon(reader)
        tg.start_soon(writer)
        try:
            yield read_stream, write_stream
        finally:
            tg.cancel_scope.cancel()
