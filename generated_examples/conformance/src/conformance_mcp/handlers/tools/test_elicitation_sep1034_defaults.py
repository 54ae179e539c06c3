"""Conformance fixture: test_elicitation_sep1034_defaults (user code, kept across regenerations)."""

from __future__ import annotations

from ... import Context, ToolReturn
from ...models import TestElicitationSep1034DefaultsInput


async def handle(args: TestElicitationSep1034DefaultsInput, ctx: Context) -> ToolReturn:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {
                "type": "string",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {"type": "boolean", "default": True},
        },
    }
    answer = await ctx.elicit_raw("Please review your details", schema)
    return f"Elicitation completed: action={answer.action}, content={answer.content}"
