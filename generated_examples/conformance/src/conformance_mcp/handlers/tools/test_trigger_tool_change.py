"""Conformance fixture: test_trigger_tool_change (user code, kept across regenerations)."""

from __future__ import annotations

from ... import Context, ToolReturn
from ...models import TestTriggerToolChangeInput


async def handle(args: TestTriggerToolChangeInput, ctx: Context) -> ToolReturn:
    ctx.enable_tool("test_dynamic_tool")
    ctx.enable_tool("test_dynamic_tool", False)
    await ctx.notify_tools_changed()
    return "Tool list changed"
