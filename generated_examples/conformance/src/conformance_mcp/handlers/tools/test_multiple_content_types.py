"""Conformance fixture: test_multiple_content_types (user code, kept across regenerations)."""

from __future__ import annotations

from mcp_types import ImageContent

from ... import ToolReturn, embedded_text, text
from ...models import TestMultipleContentTypesInput


async def handle(args: TestMultipleContentTypesInput) -> ToolReturn:
    return [
        text("Multiple content types test:"),
        ImageContent(
            data="iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==",
            mime_type="image/png",
        ),
        embedded_text(
            "test://mixed-content-resource", '{"test": "data", "value": 123}', "application/json"
        ),
    ]
