"""Conformance fixture: test_input_required_result_sampling (user code, kept across regenerations)."""

from __future__ import annotations

from mcp_types import TextContent

from ... import Context, ToolReturn
from ...models import TestInputRequiredResultSamplingInput


async def handle(args: TestInputRequiredResultSamplingInput, ctx: Context) -> ToolReturn:
    answer = await ctx.sample(
        "What is the capital of France?", max_tokens=100, key="capital_question"
    )
    content = answer.content
    return f"Model said: {content.text if isinstance(content, TextContent) else content}"
