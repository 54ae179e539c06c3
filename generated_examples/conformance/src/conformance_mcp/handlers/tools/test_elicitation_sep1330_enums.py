"""Conformance fixture: test_elicitation_sep1330_enums (user code, kept across regenerations)."""

from __future__ import annotations

from ... import Context, ToolReturn
from ...models import TestElicitationSep1330EnumsInput


async def handle(args: TestElicitationSep1330EnumsInput, ctx: Context) -> ToolReturn:
    options = ["option1", "option2", "option3"]
    titled = [{"const": o, "title": o.title()} for o in options]
    schema = {
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": options},
            "titledSingle": {"type": "string", "oneOf": titled},
            "legacyEnum": {"type": "string", "enum": options, "enumNames": ["One", "Two", "Three"]},
            "untitledMulti": {"type": "array", "items": {"type": "string", "enum": options}},
            "titledMulti": {"type": "array", "items": {"anyOf": titled}},
        },
    }
    answer = await ctx.elicit_raw("Pick some options", schema)
    return f"Elicitation completed: action={answer.action}, content={answer.content}"
