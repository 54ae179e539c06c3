"""Handlers of the generated ``relay`` server the replica tests build (written over the
stubs after ``mcpgen build``): each file's source, by its path."""

from __future__ import annotations

HEAD = """from __future__ import annotations

import os

from pydantic import BaseModel

from ... import Context, ToolReturn
from ...models import {model}

NAME = os.environ.get("RELAY_REPLICA", "?")

"""

HANDLERS = {
    "whoami": """
async def handle(args: WhoamiInput, ctx: Context) -> ToolReturn:
    return NAME
""",
    "touch": """
async def handle(args: TouchInput, ctx: Context) -> ToolReturn:
    await ctx.notify_tools_changed()
    return f"published on {NAME}"
""",
    "paint": """
class Colour(BaseModel):
    colour: str


async def handle(args: PaintInput, ctx: Context) -> ToolReturn:
    if ctx.state is None:
        ctx.set_state(f"asked on {NAME}")
    answer = await ctx.elicit("Which colour?", Colour)
    return f"{ctx.state}, answered on {NAME}: {answer.colour if answer else 'none'}"
""",
    "remember": """
async def handle(args: RememberInput, ctx: Context) -> ToolReturn:
    await ctx.store.set("value", args.value)
    return f"kept on {NAME}"
""",
    "recall": """
async def handle(args: RecallInput, ctx: Context) -> ToolReturn:
    return f"{await ctx.store.get('value', 'nothing')} (read on {NAME})"
""",
}


COMPLETION = """from __future__ import annotations

import os
from collections.abc import Sequence

from ... import Context

NAME = os.environ.get("RELAY_REPLICA", "?")


async def complete(value: str, context: dict[str, str], ctx: Context) -> Sequence[str]:
    kept = await ctx.store.get("value", "nothing")
    await ctx.store.set("value", value)
    return [f"{kept} (completed on {NAME})"]
"""


def sources() -> dict[str, str]:
    """The source of each handler, by its path under ``handlers/`` (no ``.py``)."""
    tools = {
        f"tools/{tool}": HEAD.format(model=tool.capitalize() + "Input") + body
        for tool, body in HANDLERS.items()
    }
    return {**tools, "completions/prompt_greet_colour": COMPLETION}
