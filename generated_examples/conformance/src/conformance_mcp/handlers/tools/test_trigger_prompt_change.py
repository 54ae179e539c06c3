"""Conformance fixture: test_trigger_prompt_change (user code, kept across regenerations)."""

from __future__ import annotations

from ... import Context, ToolReturn
from ...models import TestTriggerPromptChangeInput


async def handle(args: TestTriggerPromptChangeInput, ctx: Context) -> ToolReturn:
    ctx.enable_prompt("test_dynamic_prompt")
    ctx.enable_prompt("test_dynamic_prompt", False)
    await ctx.notify_prompts_changed()
    return "Prompt list changed"
