"""Conformance fixture: test_input_required_result_list_roots (user code, kept across regenerations)."""

from __future__ import annotations

from ... import Context, ToolReturn
from ...models import TestInputRequiredResultListRootsInput


async def handle(args: TestInputRequiredResultListRootsInput, ctx: Context) -> ToolReturn:
    roots = await ctx.list_roots(key="client_roots")
    return "Roots: " + ", ".join(str(root.uri) for root in roots)
