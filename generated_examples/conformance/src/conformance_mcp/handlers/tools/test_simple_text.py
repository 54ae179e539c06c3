"""Conformance fixture: test_simple_text (user code, kept across regenerations)."""

from __future__ import annotations

from ... import ToolReturn
from ...models import TestSimpleTextInput


async def handle(args: TestSimpleTextInput) -> ToolReturn:
    return "This is a simple text response for testing."
