"""Requests that outlive their first check: a GET stream ended when its caller's token
expires, and a WebSocket's messages charged to the caller's rate limit one by one."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

import anyio

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

logger = logging.getLogger(__name__)


async def until_expiry(
    app: ASGIApp, scope: Scope, receive: Receive, send: Send, expires_at: float
) -> None:
    """A GET (streamable HTTP's standalone stream, the legacy SSE stream) served until the
    caller's token expires, then ended: updates stop with the credential, and the client
    reconnects with a fresh one (WebSocket closes with 1008 the same way)."""
    state = {"started": False, "done": False}

    async def tracked(message: Message) -> None:
        if message["type"] == "http.response.start":
            state["started"] = True
        elif message["type"] == "http.response.body" and not message.get("more_body"):
            state["done"] = True
        await send(message)

    with anyio.move_on_after(max(0.0, expires_at - time.time())) as deadline:
        await app(scope, receive, tracked)
    if deadline.cancelled_caught:
        logger.info("ended a stream: its caller's token expired")
        if state["started"] and not state["done"]:
            await send({"type": "http.response.body", "body": b"", "more_body": False})


def metered(scope: Scope, receive: Receive, limiter: Any, key: str) -> Receive:
    """A WebSocket's ``receive`` that charges every message to ``key``'s bucket (the
    handshake was charged like any request): past the rate, the next message is read only
    when the bucket allows it, so one connection cannot send more than the rate limit."""
    if limiter is None or scope["type"] != "websocket":
        return receive

    async def throttled() -> Message:
        message = await receive()
        if message.get("type") == "websocket.receive":
            while (wait := await limiter.wait(key)) > 0:
                await anyio.sleep(wait)
        return message

    return throttled
