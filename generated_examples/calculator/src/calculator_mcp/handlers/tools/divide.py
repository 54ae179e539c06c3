"""Handler for the divide tool: user code, kept across regenerations."""

from __future__ import annotations

from ... import ToolError
from ...models import DivideInput, DivideOutput


async def handle(args: DivideInput) -> DivideOutput:
    if args.b == 0:
        raise ToolError("cannot divide by zero")
    precision = args.precision if args.precision is not None else 6
    return DivideOutput(quotient=round(args.a / args.b, precision), remainder=args.a % args.b)
