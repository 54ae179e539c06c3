"""Requests in flight: counted so that a shutdown lets them finish, and cancelled when the
HTTP client that sent them goes away."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR

logger = logging.getLogger(__name__)
T = TypeVar("T")
DISCONNECTED_KEY = "mcpgen.disconnected"  # a POST's ``Disconnected``, in its ASGI scope
LONG_LIVED = frozenset({"subscriptions/listen"})


def first_headers(scope: Any) -> dict[bytes, bytes]:
    """The first value of each header an ASGI ``scope`` carries (names come lower-cased), as
    starlette's ``Headers`` reads one (read by h11guard and the HTTP middleware)."""
    return dict(reversed(list(scope["headers"])))  # (ASGI: any iterable of pairs)


class Inflight:
    """The requests being handled in this process: an ``asyncio.timeout`` each (half the
    instructions of an anyio cancel scope per call), the LONG_LIVED ones' (which a shutdown
    does not wait for) apart; ``stop`` ends them, each with an error."""

    def __init__(self) -> None:
        self.scopes: set[asyncio.Timeout] = set()
        self.streams: set[asyncio.Timeout] = set()

    async def wait_idle(self, timeout: float) -> bool:
        """Whether nothing is in flight before ``timeout`` passes."""
        with anyio.move_on_after(timeout):
            while self.scopes:
                await anyio.sleep(0.05)  # (only a shutdown waits: no event per request)
            return True
        return False

    def stop(self) -> None:
        for stop in (*self.scopes, *self.streams):
            stop.reschedule(-1)  # due at once: its request is cancelled


INFLIGHT = Inflight()


async def run_request(ctx: Any, call: Callable[[], Awaitable[T]]) -> T:
    """Run one request's handling (``ctx``: the SDK's ``ServerRequestContext``): held in
    ``INFLIGHT`` (a shutdown ends it with an error), and cancelled if its client leaves."""
    method = ctx.method
    scope = getattr(ctx.request, "scope", None)
    gone: Disconnected | None = scope.get(DISCONNECTED_KEY) if isinstance(scope, dict) else None
    held = INFLIGHT.streams if method in LONG_LIVED else INFLIGHT.scopes
    try:
        async with asyncio.timeout(None) as stopped:
            held.add(stopped)
            try:
                # the SDK's own: no scope opened per request; else (2026-07-28 JSON) the
                # POST's; none for a 2026-07-28 stream (the SDK cancels it when its client goes)
                if held is INFLIGHT.streams or gone is None:
                    return await call()
                if (cancel := dispatcher_scope(ctx) or gone.post) is None:
                    return await call()
                return await gone.cancelling(cancel, method, call)
            finally:
                held.discard(stopped)
    except TimeoutError:
        if not stopped.expired():
            raise  # the handler's own
    raise MCPError(INTERNAL_ERROR, "the server shut down before this request finished")


def dispatcher_scope(ctx: Any) -> anyio.CancelScope | None:
    """The cancel scope the SDK's ``JSONRPCDispatcher`` runs this request in (the one a
    ``notifications/cancelled`` cancels), or None (a 2026-07-28 request answered as JSON has
    no dispatcher). Cancelled, the request ends unanswered: the dispatcher absorbs the
    cancellation and the 2025-era transport answers it -32800 itself. SDK 2.3's private
    ``_request_outbound``, ``_dispatcher`` and ``_in_flight``, checked by the tests."""
    outbound = getattr(ctx.session, "_request_outbound", None)
    in_flight = getattr(getattr(outbound, "_dispatcher", None), "_in_flight", None)
    if in_flight is None:
        return None
    entry = in_flight.get(coerce_request_id(ctx.request_id))
    return entry.scope if entry is not None and entry.dctx is outbound else None


class Disconnected:
    """Whether the client of a POST went away; cancels the requests it carries when it does."""

    def __init__(self) -> None:
        self.gone = False
        self.scopes: dict[anyio.CancelScope, str] = {}  # its requests' (``run_request``)
        self.post: anyio.CancelScope | None = None  # the whole POST's (JSON answers)

    async def cancelling(
        self, cancel: anyio.CancelScope, method: str, call: Callable[[], Awaitable[T]]
    ) -> T:
        """``call()``, with ``cancel`` cancelled if the client goes (or went) away."""
        self.scopes[cancel] = method
        if self.gone:
            cancel.cancel()
        try:
            return await call()
        finally:
            del self.scopes[cancel]

    def set(self) -> None:
        if not self.gone:
            self.gone = True
            for cancel, method in self.scopes.items():
                logger.info("the client of a %s request disconnected: cancelling it", method)
                cancel.cancel()


async def observed_post(
    app: Any, scope: Any, body: list[Any], receive: Any, send: Any, json_response: bool
) -> None:
    """Pass a POST on (``body``: its messages, already read, last first) with
    ``scope[DISCONNECTED_KEY]`` set when the client goes away (the SDK keeps running a
    handler whose client left in JSON-response and stateful modes). An event stream reads
    ``receive()`` for the disconnect itself: its reads are observed. A JSON answer reads
    nothing after the body: a watcher task does, and hands the app what it read."""
    gone = Disconnected()
    scope[DISCONNECTED_KEY] = gone

    async def observed() -> Any:
        message = await receive()
        if message["type"] == "http.disconnect":
            gone.set()
        return message

    after_body: Callable[[], Awaitable[Any]] = observed

    async def replay() -> Any:
        return body.pop() if body else await after_body()

    if not json_response:
        await app(scope, replay, send)
        return
    watcher_send, watcher_receive = anyio.create_memory_object_stream[Any](1)
    after_body = watcher_receive.receive

    async def watch() -> None:
        await watcher_send.send(await observed())  # after the body, only a disconnect

    async with anyio.create_task_group() as tg:
        gone.post = tg.cancel_scope
        tg.start_soon(watch)
        try:
            await app(scope, replay, send)
        finally:
            tg.cancel_scope.cancel()
