"""The typed client's side of the legacy transports, HTTP+SSE and WebSocket: carried only
by a package whose server offers one of them."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any, Self

from .client import BaseClient, Mode, headers_with


class LegacyClient(BaseClient):
    """``BaseClient`` that also connects over WebSocket and legacy HTTP+SSE."""

    @classmethod
    def websocket(
        cls,
        url: str,
        *,
        token: str | None = None,
        headers: Mapping[str, str] | None = None,
        mode: Mode = "auto",
        **options: Any,
    ) -> AbstractAsyncContextManager[Self]:
        """Connect over WebSocket (``ws://host:port/ws``, mcpgen's own transport)."""
        from .websocket import websocket_client

        return cls.connect(
            websocket_client(url, headers_with(token, headers)), mode=mode, **options
        )

    @classmethod
    def sse(
        cls,
        url: str,
        *,
        token: str | None = None,
        headers: Mapping[str, str] | None = None,
        mode: Mode = "auto",
        **options: Any,
    ) -> AbstractAsyncContextManager[Self]:
        """Connect over the legacy HTTP+SSE transport (``url`` ends in ``/sse``)."""
        from mcp.client.sse import sse_client

        return cls.connect(
            sse_client(url, headers=headers_with(token, headers)), mode=mode, **options
        )
