"""Conformance fixture: test_tool_with_logging (user code, kept across regenerations)."""

from __future__ import annotations

import anyio

from ... import Context, ToolReturn
from ...models import TestToolWithLoggingInput


async def handle(args: TestToolWithLoggingInput, ctx: Context) -> ToolReturn:
    await ctx.log("info", "Tool execution started")
    await anyio.sleep(0.05)
    await ctx.log("info", "Tool processing data")
    await anyio.sleep(0.05)
    await ctx.log("info", "Tool execution completed")
    return "Logging test completed"
