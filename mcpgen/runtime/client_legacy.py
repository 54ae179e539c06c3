"""The typed client's side of the legacy transports, HTTP+SSE and WebSocket: carried only
by a package whose server offers one of them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from .client import BaseClient, ClientT, Mode, headers_with


class LegacyClient(BaseClient):
    """``BaseClient`` that also connects over WebSocket and legacy HTTP+SSE."""

    @classmethod
    @asynccontextmanager
    async def websocket(
        cls: type[ClientT],
        url: str,
        *,
        token: str | None = None,
        headers: Mapping[str, str] | None = None,
        mode: Mode = "auto",
        **options: Any,
    ) -> AsyncIterator[ClientT]:
        """Connect over WebSocket (``ws://host:port/ws``, mcpgen's own transport)."""
        from .websocket import websocket_client

        async with cls.connect(
            websocket_client(url, headers_with(token, headers)), mode=mode, **options
        ) as client:
            yield client

    @classmethod
    @asynccontextmanager
    async def sse(
        cls: type[ClientT],
        url: str,
        *,
        token: str | None = None,
        headers: Mapping[str, str] | None = None,
        mode: Mode = "auto",
        **options: Any,
    ) -> AsyncIterator[ClientT]:
        """Connect over the legacy HTTP+SSE transport (``url`` ends in ``/sse``)."""
        from mcp.client.sse import sse_client

        async with cls.connect(
            sse_client(url, headers=headers_with(token, headers)), mode=mode, **options
        ) as client:
            yield client
