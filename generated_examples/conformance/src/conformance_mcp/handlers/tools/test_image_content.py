"""Conformance fixture: test_image_content (user code, kept across regenerations)."""

from __future__ import annotations

from mcp_types import ImageContent

from ... import ToolReturn
from ...models import TestImageContentInput


async def handle(args: TestImageContentInput) -> ToolReturn:
    return ImageContent(
        data="iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==",
        mime_type="image/png",
    )
