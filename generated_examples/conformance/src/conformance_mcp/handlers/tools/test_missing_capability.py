"""Conformance fixture: test_missing_capability (user code, kept across regenerations)."""

from __future__ import annotations

from mcp.shared.exceptions import MCPError

from ... import Context, ToolReturn
from ...models import TestMissingCapabilityInput


async def handle(args: TestMissingCapabilityInput, ctx: Context) -> ToolReturn:
    capabilities = ctx.client_capabilities
    if capabilities is None or capabilities.sampling is None:
        raise MCPError(
            -32021,
            "This tool requires the client 'sampling' capability",
            data={"requiredCapabilities": {"sampling": {}}},
        )
    return "The client can sample"
