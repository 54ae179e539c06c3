"""MCP over WebSocket (the SDK 2.3 ships none): one JSON-RPC message per text frame,
subprotocol ``mcp``, the framing of the SDK 1.x WebSocket transport.

Server side: ``websocket_route`` bridges a Starlette WebSocket to ``server.run`` at
``/ws``; the connection is closed (1008) when the caller's token expires, (1003,
"unsupported data", RFC 6455) on a binary frame, and (1001, "idle timeout") when idle
(``http_legacy.IdleClock``). Client side:
``websocket_client(url)`` is a transport for ``mcp.client.Client``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from mcp_types import JSONRPCNotification, jsonrpc_message_adapter
from pydantic import ValidationError

from . import jsonrpc
from .authz import IDENTITY_KEY
from .http_legacy import IdleClock
from .identity import Identity

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
    from starlette.websockets import WebSocket

    from .server import GeneratedServer

logger = logging.getLogger(__name__)
SUBPROTOCOL = "mcp"
PATH = "/ws"
MAX_MESSAGE_SIZE = 4 * 1024 * 1024
GOING_AWAY = 1001
POLICY_VIOLATION = 1008
UNSUPPORTED_DATA = 1003
RECHECK_KEY = "mcpgen.recheck"  # verifies the handshake's credential again (``http_auth``)


def _encode(message: SessionMessage) -> str:
    return message.message.model_dump_json(by_alias=True, exclude_unset=True)


def websocket_route(server: GeneratedServer, idle_timeout: float) -> Any:
    from starlette.routing import WebSocketRoute

    async def endpoint(websocket: WebSocket) -> None:
        await serve_websocket(websocket, server, idle_timeout)

    return WebSocketRoute(PATH, endpoint)


def _expiry(identity: Any) -> float | None:
    if isinstance(identity, Identity) and identity.expires_at is not None:
        return float(identity.expires_at)
    return None


async def serve_websocket(
    websocket: WebSocket, server: GeneratedServer, idle_timeout: float
) -> None:
    """Serve one MCP connection over ``websocket`` until either side closes it (or the
    caller's token expires, or it is idle for ``idle_timeout`` seconds). Every message
    carries ``websocket`` as its request context, so handlers see the handshake's headers
    and the caller's identity."""
    from starlette.websockets import WebSocketDisconnect

    offered = websocket.scope.get("subprotocols", [])
    await websocket.accept(subprotocol=SUBPROTOCOL if SUBPROTOCOL in offered else None)
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    metadata = ServerMessageMetadata(request_context=websocket)
    identity = websocket.scope.get(IDENTITY_KEY)
    expires = _expiry(identity)
    closing: list[tuple[int, str]] = []  # (close code, reason) when the server ends it

    async def reader() -> None:
        async with read_writer:
            try:
                while True:
                    frame = await websocket.receive()
                    if frame["type"] == "websocket.disconnect":
                        return
                    if expires is not None and time.time() >= expires:
                        closing.append((POLICY_VIOLATION, "token expired"))
                        return
                    text = frame.get("text")
                    if text is None:  # MCP is one JSON-RPC message per text frame
                        closing.append((UNSUPPORTED_DATA, "binary frames are not MCP"))
                        return
                    try:
                        message = jsonrpc_message_adapter.validate_json(text, by_name=False)
                    except ValidationError:
                        answer = jsonrpc.error_for(text)
                        if answer is not None:
                            await websocket.send_text(answer)
                        continue
                    if isinstance(message, JSONRPCNotification) and jsonrpc.has_bad_id(text):
                        await websocket.send_text(
                            jsonrpc.error(jsonrpc.INVALID_REQUEST, "Invalid Request")
                        )
                        continue
                    await read_writer.send(SessionMessage(message, metadata=metadata))
            except (WebSocketDisconnect, RuntimeError, anyio.ClosedResourceError):
                pass  # the client went away (or expired): end the session

    async def writer() -> None:
        async with write_reader:
            async for message in write_reader:
                try:
                    text = _encode(message)
                except ValueError:  # (pydantic_core's) no JSON carries it: its answer -32603
                    text = jsonrpc.unencodable(message.message)
                try:
                    if text:
                        await websocket.send_text(text)
                except (WebSocketDisconnect, RuntimeError):
                    return

    async def expire() -> None:
        from .http_auth import lapse  # (carried with auth)

        await lapse(websocket.scope, websocket.scope[IDENTITY_KEY])  # exp, or revoked
        closing.append((POLICY_VIOLATION, "token expired or revoked"))
        read_writer.close()

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(writer)
        if expires is not None or RECHECK_KEY in websocket.scope:
            tg.start_soon(expire)
        clock = IdleClock(idle_timeout)
        with clock.scope:
            read, write = clock.watch(read_stream, write_stream)
            await server.run(read, write, server.create_initialization_options())
        if clock.scope.cancelled_caught:
            closing.append((GOING_AWAY, "idle timeout"))
        tg.cancel_scope.cancel()
    try:
        if closing:
            logger.info("closing a WebSocket connection: %s", closing[0][1])
            await websocket.close(code=closing[0][0], reason=closing[0][1])
        else:
            await websocket.close()
    except (RuntimeError, WebSocketDisconnect):
        pass  # the client closed it first


@asynccontextmanager
async def websocket_client(
    url: str,
    headers: Mapping[str, str] | None = None,
    *,
    open_timeout: float = 30,
    max_size: int = MAX_MESSAGE_SIZE,
) -> AsyncIterator[
    tuple[
        MemoryObjectReceiveStream[SessionMessage | Exception],
        MemoryObjectSendStream[SessionMessage],
    ]
]:
    """Connect to an MCP server's WebSocket endpoint (``ws://`` or ``wss://``); yields the
    (read, write) streams that ``mcp.client.Client`` takes as a transport. ``headers`` go
    with the handshake (for example ``Authorization``)."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed
    from websockets.typing import Subprotocol

    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    async with connect(
        url,
        subprotocols=[Subprotocol(SUBPROTOCOL)],
        additional_headers=dict(headers or {}),
        open_timeout=open_timeout,
        max_size=max_size,
    ) as websocket:

        async def reader() -> None:
            async with read_writer:
                try:
                    async for frame in websocket:
                        try:
                            message = jsonrpc_message_adapter.validate_json(frame, by_name=False)
                        except ValidationError as exc:
                            await read_writer.send(exc)
                            continue
                        await read_writer.send(SessionMessage(message))
                except (ConnectionClosed, anyio.ClosedResourceError):
                    pass

        async def writer() -> None:
            async with write_reader:
                async for message in write_reader:
                    await websocket.send(_encode(message))

        async with anyio.create_task_group() as tg:
            tg.start_soon(reader)
            tg.start_soon(writer)
            try:
                yield read_stream, write_stream
            finally:
                tg.cancel_scope.cancel()
