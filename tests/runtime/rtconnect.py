"""One connector for every transport and protocol era, as the SDK's interaction tests have.

``connect(transport, mode, spec)`` yields an ``mcp.client.Client`` talking to the fixture
server (``rtkit``) over ``transport``: ``memory`` (the SDK's in-process connection),
``stdio`` (the fixture server as a process, ``rtserve.py``), or one of the network arms of
``rtkit.ARMS`` (``http`` stateful, ``http-stateless``, ``http-json``, ``sse``,
``websocket``), whose app (``mcpgen.runtime.http_app.create_app``) runs in this process
behind ``rtbridge``. Network clients send ``headers`` (default: credentials for every scope).
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, Literal

import httpx2
import pytest
import rtkit
from mcp.client import Client
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from rtbridge import BASE, http_client, running, websocket_transport

Mode = Literal["legacy", "2026-07-28"]
MODES: list[Mode] = ["legacy", "2026-07-28"]
NETWORK = list(rtkit.ARMS)
LOCAL = ["memory", "stdio"]
TRANSPORTS = [*LOCAL, *NETWORK]
RTSERVE = rtkit.HERE / "rtserve.py"


def cells(transports: list[str], where: Callable[[str, Mode], bool] | None = None) -> Any:
    """``@cells(TRANSPORTS)``: a test runs once per (transport, era), or per pair ``where``
    accepts; stdio (a process per test) is slow."""
    params = [
        pytest.param(t, m, id=f"{t}-{m}", marks=[pytest.mark.slow] if t == "stdio" else [])
        for t in transports
        for m in MODES
        if where is None or where(t, m)
    ]
    return pytest.mark.parametrize(("transport", "mode"), params)


def process_env(spec: dict[str, Any], extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of an ``rtserve.py`` process serving ``spec``."""
    path = os.pathsep.join([str(rtkit.ROOT), str(rtkit.HERE), os.environ.get("PYTHONPATH", "")])
    hide = "1" if spec["auth"].get("hideUnauthorized") else "0"
    return {
        **os.environ,
        **rtkit.environ(spec),
        "PYTHONPATH": path,
        "RTKIT_AUTH": spec["auth"]["type"],
        "RTKIT_HIDE": hide,
        **(extra or {}),
    }


def rtserve(*flags: str) -> list[str]:
    return [sys.executable, str(RTSERVE), *flags]


def sse_factory(app: Any) -> Any:
    def make(
        headers: dict[str, str] | None = None,
        timeout: httpx2.Timeout | None = None,
        auth: httpx2.Auth | None = None,
    ) -> httpx2.AsyncClient:
        return http_client(app, headers)

    return make


@asynccontextmanager
async def client_over(
    app: Any, transport: str, mode: Mode, headers: Mapping[str, str], **options: Any
) -> AsyncIterator[Client]:
    """A client of a running ``app`` (its lifespan entered) over one network arm."""
    async with AsyncExitStack() as stack:
        if transport == "websocket":
            streams: Any = websocket_transport(app, headers)
        elif transport == "sse":
            streams = sse_client(
                BASE + "/sse", headers=dict(headers), httpx_client_factory=sse_factory(app)
            )
        else:
            http = await stack.enter_async_context(http_client(app, headers))
            streams = streamable_http_client(BASE + "/mcp", http_client=http)
        yield await stack.enter_async_context(Client(streams, mode=mode, **options))


@asynccontextmanager
async def connect(
    transport: str,
    mode: Mode,
    spec: dict[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
    **options: Any,
) -> AsyncIterator[Client]:
    spec = spec or rtkit.make_spec()
    if transport == "memory":
        async with Client(rtkit.server(spec), mode=mode, **options) as client:
            yield client
    elif transport == "stdio":
        params = StdioServerParameters(
            command=sys.executable, args=[str(RTSERVE)], env=process_env(spec)
        )
        async with Client(params, mode=mode, **options) as client:
            yield client
    else:
        sent = rtkit.credentials(spec) if headers is None else headers
        async with (
            running(rtkit.app(spec, transport)) as app,
            client_over(app, transport, mode, sent, **options) as client,
        ):
            yield client
