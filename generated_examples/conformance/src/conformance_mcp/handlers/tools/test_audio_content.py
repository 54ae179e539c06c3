"""Conformance fixture: test_audio_content (user code, kept across regenerations)."""

from __future__ import annotations

from mcp_types import AudioContent

from ... import ToolReturn
from ...models import TestAudioContentInput


async def handle(args: TestAudioContentInput) -> ToolReturn:
    return AudioContent(
        data="UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=", mime_type="audio/wav"
    )
