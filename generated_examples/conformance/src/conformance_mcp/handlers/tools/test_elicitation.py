"""Conformance fixture: test_elicitation (user code, kept across regenerations)."""

from __future__ import annotations

from ... import Context, ToolReturn
from ...models import TestElicitationInput


async def handle(args: TestElicitationInput, ctx: Context) -> ToolReturn:
    schema = {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    }
    answer = await ctx.elicit_raw(args.message, schema)
    return f"User response: action={answer.action}, content={answer.content}"
