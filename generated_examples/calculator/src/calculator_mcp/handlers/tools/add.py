"""Handler for the add tool: user code, kept across regenerations."""

from __future__ import annotations

from ...models import AddInput, AddOutput


async def handle(args: AddInput) -> AddOutput:
    return AddOutput(sum=sum(args.numbers))
