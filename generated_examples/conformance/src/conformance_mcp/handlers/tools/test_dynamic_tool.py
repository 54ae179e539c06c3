"""Conformance fixture: test_dynamic_tool (user code, kept across regenerations)."""

from __future__ import annotations

from ... import ToolReturn
from ...models import TestDynamicToolInput


async def handle(args: TestDynamicToolInput) -> ToolReturn:
    return "Dynamic tool called"
