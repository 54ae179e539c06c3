"""Requests in flight: counted so that a shutdown lets them finish, and cancelled when the
HTTP client that sent them goes away."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from mcp.shared.exceptions import MCPError

logger = logging.getLogger(__name__)
DISCONNECTED_KEY = "mcpgen.disconnected"  # an anyio.Event in the ASGI scope of a POST
LONG_LIVED = frozenset({"subscriptions/listen"})
# The answer to a request whose client went away (LSP's RequestCancelled, as the SDK's
# streamable HTTP transport uses): nobody reads it, but the session carries on.
REQUEST_CANCELLED = -32800


class Inflight:
    """How many requests are being handled in this process."""

    def __init__(self) -> None:
        self.count = 0
        self._idle = anyio.Event()
        self._idle.set()

    def enter(self) -> None:
        if self.count == 0:
            self._idle = anyio.Event()
        self.count += 1

    def leave(self) -> None:
        self.count -= 1
        if self.count == 0:
            self._idle.set()

    async def wait_idle(self, timeout: float) -> bool:
        """Wait until nothing is in flight (True) or ``timeout`` passes (False)."""
        with anyio.move_on_after(timeout):
            await self._idle.wait()
            return True
        return False


INFLIGHT = Inflight()


async def run_request(method: str, request: Any, call: Callable[[], Awaitable[Any]]) -> Any:
    """Run one request's handling: counted, and cancelled if its HTTP client disconnects."""
    if method in LONG_LIVED:
        return await call()
    scope = getattr(request, "scope", None)
    gone = scope.get(DISCONNECTED_KEY) if isinstance(scope, dict) else None
    INFLIGHT.enter()
    try:
        if gone is None:
            return await call()
        result: list[Any] = []
        error: Exception | None = None
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                await gone.wait()
                logger.info("the client of a %s request disconnected: cancelling it", method)
                tg.cancel_scope.cancel()

            tg.start_soon(watch)
            try:
                result.append(await call())
            except Exception as exc:  # re-raised as itself, not inside an exception group
                error = exc
            finally:
                tg.cancel_scope.cancel()
        if error is not None:
            raise error
        if not result:
            # An error, not a bare CancelledError: the SDK's dispatcher takes one of those
            # for its own shutdown and ends the whole (stateful) session with it.
            raise MCPError(REQUEST_CANCELLED, "Request cancelled: the client disconnected")
        return result[0]
    finally:
        INFLIGHT.leave()


class DisconnectMiddleware:
    """ASGI middleware for POSTs: once the request body has been read, watches for the
    client's disconnect and sets ``scope[DISCONNECTED_KEY]`` (the SDK keeps running a
    handler whose client left in JSON-response and stateful modes)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        gone = anyio.Event()
        scope[DISCONNECTED_KEY] = gone
        queue_send, queue_receive = anyio.create_memory_object_stream[Any](1)
        body_done = anyio.Event()

        async def wrapped() -> Any:
            if not body_done.is_set():
                message = await receive()
                if message.get("type") != "http.request" or not message.get("more_body", False):
                    body_done.set()
                if message.get("type") == "http.disconnect":
                    gone.set()
                return message
            return await queue_receive.receive()

        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                await body_done.wait()
                message = await receive()  # after the body, only a disconnect can come
                if message.get("type") == "http.disconnect":
                    gone.set()
                await queue_send.send(message)

            tg.start_soon(watch)
            try:
                await self.app(scope, wrapped, send)
            finally:
                tg.cancel_scope.cancel()
