"""Renders the local-tips prompt: user code, kept across regenerations."""

from __future__ import annotations

from ... import PromptReturn
from ...models import LocalTipsArguments
from .._places import ACTIVITIES


async def render(args: LocalTipsArguments) -> PromptReturn:
    ideas = "; ".join(f"{category}: {', '.join(found)}" for category, found in ACTIVITIES.items())
    return (
        f"I am visiting {args.city}. Give me five tips a local would give: where to eat, what "
        f"to skip, how to get around. Ideas to start from ({ideas})."
    )
