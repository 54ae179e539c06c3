"""Conformance fixture: test_input_required_result_multiple_inputs (user code, kept across regenerations)."""

from __future__ import annotations

from ... import Context, ToolReturn, elicitation, roots, sampling
from ...models import TestInputRequiredResultMultipleInputsInput


async def handle(args: TestInputRequiredResultMultipleInputsInput, ctx: Context) -> ToolReturn:
    answers = await ctx.ask(
        {
            "user_name": elicitation(
                "What is your name?",
                {
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"],
                },
            ),
            "greeting": sampling("Generate a greeting", max_tokens=50),
            "client_roots": roots(),
        }
    )
    return f"Received {len(answers)} answers: {', '.join(sorted(answers))}"
