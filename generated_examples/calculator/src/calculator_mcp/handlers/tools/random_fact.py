"""Handler for the random_fact tool: user code, kept across regenerations."""

from __future__ import annotations

import random

import mcp_types as types

from ... import ToolReturn
from ...models import RandomFactInput

FACTS = [
    "Zero is the only number that is neither positive nor negative.",
    "A googol is 10 to the power of 100.",
    "111,111,111 squared is 12,345,678,987,654,321.",
]


async def handle(args: RandomFactInput) -> ToolReturn:
    return [types.TextContent(type="text", text=random.choice(FACTS))]
