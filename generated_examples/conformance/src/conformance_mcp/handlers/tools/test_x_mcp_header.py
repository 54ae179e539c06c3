"""Conformance fixture: test_x_mcp_header (user code, kept across regenerations)."""

from __future__ import annotations

from ... import ToolReturn
from ...models import TestXMcpHeaderInput


async def handle(args: TestXMcpHeaderInput) -> ToolReturn:
    return f"region={args.region}"
