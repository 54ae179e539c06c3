"""uvicorn's h11 protocol (``--http``) with a deadline for each request's headers: uvicorn
does not limit a client that sends them a byte at a time. ``HEADER_TIMEOUT`` is set by the
app factory (in each worker process too). Also closes a connection after answering a request
with both Content-Length and Transfer-Encoding (request smuggling), and marks a request whose
whole body came with its headers (``http_guard.BODY_RECEIVED``: no body deadline for it)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from .http_guard import BODY_RECEIVED
from .lifecycle import first_headers

logger = logging.getLogger(__name__)
HEADER_TIMEOUT = 10.0


class GuardedH11(H11Protocol):
    _deadline: asyncio.TimerHandle | None = None
    _waiting_since: float | None = None  # when the connection began waiting for headers

    def _arm(self) -> None:
        """Start the wait for headers. One timer serves many requests on a keep-alive
        connection: it is not moved per request, it looks again when it fires."""
        self._waiting_since = self.loop.time()
        if self._deadline is None:
            self._deadline = self.loop.call_later(HEADER_TIMEOUT, self._check)

    def _check(self) -> None:
        self._deadline = None
        if self._waiting_since is None:  # a request is in: the next response arms again
            return
        left = self._waiting_since + HEADER_TIMEOUT - self.loop.time()
        if left > 0:
            self._deadline = self.loop.call_later(left, self._check)
        elif not self.transport.is_closing() and (
            self.cycle is None or self.cycle.response_complete
        ):
            logger.warning(
                "a client took over %s s to send request headers; dropped it", HEADER_TIMEOUT
            )
            self.transport.close()

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._arm()

    def handle_events(self) -> None:
        before = self.cycle
        super().handle_events()
        if self.cycle is not before and self.cycle is not None:
            self._waiting_since = None  # a request's headers are in
            if not self.cycle.more_body:  # and its whole body: no deadline to keep for it
                self.cycle.scope[BODY_RECEIVED] = True  # type: ignore[literal-required]
            names = first_headers(self.cycle.scope)  # (kept in the scope for the app)
            if b"content-length" in names and b"transfer-encoding" in names:
                # RFC 9112 6.3: a server that answers such a message must then close the
                # connection, or what a proxy took for body is run as a second request
                logger.warning("a request had both Content-Length and Transfer-Encoding")
                self.cycle.keep_alive = False

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()

    def handle_websocket_upgrade(self, event: Any) -> None:
        self._waiting_since = None
        super().handle_websocket_upgrade(event)

    def connection_lost(self, exc: Exception | None) -> None:
        self._waiting_since = None
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        super().connection_lost(exc)
