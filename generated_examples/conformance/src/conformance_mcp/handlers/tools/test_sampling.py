"""Conformance fixture: test_sampling (user code, kept across regenerations)."""

from __future__ import annotations

from mcp_types import TextContent

from ... import Context, ToolReturn
from ...models import TestSamplingInput


async def handle(args: TestSamplingInput, ctx: Context) -> ToolReturn:
    answer = await ctx.sample(args.prompt, max_tokens=100)
    content = answer.content
    said = content.text if isinstance(content, TextContent) else str(content)
    return f"LLM response: {said}"
