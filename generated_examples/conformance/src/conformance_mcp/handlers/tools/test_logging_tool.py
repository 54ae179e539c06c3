"""Conformance fixture: test_logging_tool (user code, kept across regenerations)."""

from __future__ import annotations

from ... import Context, ToolReturn
from ...models import TestLoggingToolInput


async def handle(args: TestLoggingToolInput, ctx: Context) -> ToolReturn:
    await ctx.log("info", "test_logging_tool ran")
    return "Logged once"
