"""Conformance fixture: test_error_handling (user code, kept across regenerations)."""

from __future__ import annotations

from ... import ToolError, ToolReturn
from ...models import TestErrorHandlingInput


async def handle(args: TestErrorHandlingInput) -> ToolReturn:
    raise ToolError("This tool intentionally returns an error for testing")
