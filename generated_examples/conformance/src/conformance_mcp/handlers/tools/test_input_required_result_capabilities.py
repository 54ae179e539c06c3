"""Conformance fixture: test_input_required_result_capabilities (user code, kept across regenerations)."""

from __future__ import annotations

from ... import Context, ToolReturn
from ...models import TestInputRequiredResultCapabilitiesInput


async def handle(args: TestInputRequiredResultCapabilitiesInput, ctx: Context) -> ToolReturn:
    capabilities = ctx.client_capabilities
    if capabilities is not None and capabilities.elicitation is not None:
        answer = await ctx.elicit_raw(
            "What is your name?",
            {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
            key="user_name",
        )
        return f"Elicited: {answer.content}"
    if capabilities is not None and capabilities.sampling is not None:
        sampled = await ctx.sample("Say hello", max_tokens=50, key="sample")
        return f"Sampled: {sampled.content}"
    roots = await ctx.list_roots(key="client_roots")
    return f"Roots: {len(roots)}"
