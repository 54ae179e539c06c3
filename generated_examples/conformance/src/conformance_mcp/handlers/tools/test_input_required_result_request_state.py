"""Conformance fixture: test_input_required_result_request_state (user code, kept across regenerations)."""

from __future__ import annotations

from ... import Context, ToolReturn
from ...models import TestInputRequiredResultRequestStateInput


async def handle(args: TestInputRequiredResultRequestStateInput, ctx: Context) -> ToolReturn:
    ctx.set_state("state-ok")
    answer = await ctx.elicit_raw(
        "Please confirm",
        {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
        key="confirm",
    )
    return f"Confirmed: {answer.action}, {ctx.state}"
