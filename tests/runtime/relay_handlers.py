"""Handlers of the generated ``relay`` server the replica tests build (written over the
stubs after ``mcpgen build``): each file's source, by tool."""

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


def sources() -> dict[str, str]:
    """tool -> the source of ``handlers/tools/<tool>.py``."""
    return {
        tool: HEAD.format(model=tool.capitalize() + "Input") + body
        for tool, body in HANDLERS.items()
    }
