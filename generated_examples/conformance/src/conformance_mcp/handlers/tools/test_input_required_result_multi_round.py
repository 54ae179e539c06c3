"""Conformance fixture: test_input_required_result_multi_round (user code, kept across regenerations)."""

from __future__ import annotations

from ... import Context, ToolReturn
from ...models import TestInputRequiredResultMultiRoundInput


async def handle(args: TestInputRequiredResultMultiRoundInput, ctx: Context) -> ToolReturn:
    first = await ctx.elicit_raw(
        "Step 1: What is your name?",
        {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        key="step1",
    )
    ctx.set_state("step1-done")
    second = await ctx.elicit_raw(
        "Step 2: What is your favorite color?",
        {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]},
        key="step2",
    )
    name = (first.content or {}).get("name")
    color = (second.content or {}).get("color")
    return f"{name} likes {color}."
