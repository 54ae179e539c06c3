"""Renders test_input_required_result_prompt (user code, kept across regenerations)."""

from __future__ import annotations

from ... import Context, PromptReturn
from ...models import TestInputRequiredResultPromptArguments


async def render(args: TestInputRequiredResultPromptArguments, ctx: Context) -> PromptReturn:
    answer = await ctx.elicit_raw(
        "What context should the prompt use?",
        {"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]},
        key="user_context",
    )
    return f"Use this context: {(answer.content or {}).get('context')}"
