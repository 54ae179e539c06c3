"""Conformance fixture: test_embedded_resource (user code, kept across regenerations)."""

from __future__ import annotations

from ... import ToolReturn, embedded_text
from ...models import TestEmbeddedResourceInput


async def handle(args: TestEmbeddedResourceInput) -> ToolReturn:
    return embedded_text("test://embedded-resource", "This is an embedded resource content.")
