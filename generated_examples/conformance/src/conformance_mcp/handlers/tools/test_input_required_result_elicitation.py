"""Conformance fixture: test_input_required_result_elicitation (user code, kept across regenerations)."""

from __future__ import annotations

from ... import Context, ToolReturn
from ...models import TestInputRequiredResultElicitationInput


async def handle(args: TestInputRequiredResultElicitationInput, ctx: Context) -> ToolReturn:
    answer = await ctx.elicit_raw(
        "What is your name?",
        {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        key="user_name",
    )
    return f"Hello, {(answer.content or {}).get('name')}!"
