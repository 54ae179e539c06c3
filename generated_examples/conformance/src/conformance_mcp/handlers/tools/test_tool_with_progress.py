"""Conformance fixture: test_tool_with_progress (user code, kept across regenerations)."""

from __future__ import annotations

import anyio

from ... import Context, ToolReturn
from ...models import TestToolWithProgressInput


async def handle(args: TestToolWithProgressInput, ctx: Context) -> ToolReturn:
    for step in (0, 50, 100):
        await ctx.progress(step, 100, f"step {step}")
        if step < 100:
            await anyio.sleep(0.05)
    return "Progress test completed"
