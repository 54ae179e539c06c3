"""Conformance fixture: test_streaming_elicitation (user code, kept across regenerations)."""

from __future__ import annotations

from ... import Context, ToolReturn
from ...models import TestStreamingElicitationInput


async def handle(args: TestStreamingElicitationInput, ctx: Context) -> ToolReturn:
    answer = await ctx.elicit_raw(
        "What is your name?",
        {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        key="name",
    )
    return f"Hello, {(answer.content or {}).get('name')}!"
