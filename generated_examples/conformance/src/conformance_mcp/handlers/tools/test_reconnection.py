"""Conformance fixture: test_reconnection (user code, kept across regenerations)."""

from __future__ import annotations

import anyio

from ... import Context, ToolReturn
from ...models import TestReconnectionInput


async def handle(args: TestReconnectionInput, ctx: Context) -> ToolReturn:
    await ctx.log("info", "Before disconnect")
    await ctx.close_sse_stream()
    await anyio.sleep(0.2)
    await ctx.log("info", "After reconnect")
    return "Reconnection test completed"
