"""Renders the local-tips prompt.

Local tips for a city, written by handler code.

This file is yours: mcpgen created it once and never overwrites it.
Return a string (one user message), a list of ``PromptMessage``, or a ``GetPromptResult``.
"""

from __future__ import annotations

from ... import PromptReturn
from ...models import LocalTipsArguments


async def render(args: LocalTipsArguments) -> PromptReturn:
    raise NotImplementedError
