"""uvicorn's h11 protocol (``--http``) that bounds the wait for a request's headers: uvicorn's
keep-alive timer (``timeout_keep_alive``: ``header_timeout``, set by ``serve``) runs from the
connection's start or last response until a request's headers are in, not only until their
first byte (a client sending them a byte at a time was never cut off). Also closes a
connection after answering a request with both Content-Length and Transfer-Encoding (request
smuggling), and marks a request whose whole body came with its headers (``BODY_RECEIVED``)."""

from __future__ import annotations

import logging
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from .http_guard import BODY_RECEIVED
from .lifecycle import first_headers

logger = logging.getLogger(__name__)


class GuardedH11(H11Protocol):
    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self.timeout_keep_alive_task = self.loop.call_later(
            self.timeout_keep_alive, self.timeout_keep_alive_handler
        )

    def data_received(self, data: bytes) -> None:
        # (uvicorn's stops the timer here; a request's headers stop it, in handle_events)
        self.conn.receive_data(data)
        self.handle_events()

    def timeout_keep_alive_handler(self) -> None:
        if self.conn.trailing_data[0]:  # part of a request came, not all its headers
            logger.warning("a client was too slow to send request headers; dropped it")
        super().timeout_keep_alive_handler()

    def handle_events(self) -> None:
        before = self.cycle
        super().handle_events()
        if self.cycle is not before and self.cycle is not None:
            if not self.cycle.more_body:  # the whole body came with the headers
                self.cycle.scope[BODY_RECEIVED] = True  # type: ignore[literal-required]
            names = first_headers(self.cycle.scope)
            if b"content-length" in names and b"transfer-encoding" in names:
                # RFC 9112 6.3: a server that answers such a message must then close the
                # connection, or what a proxy took for body is run as a second request
                logger.warning("a request had both Content-Length and Transfer-Encoding")
                self.cycle.keep_alive = False
