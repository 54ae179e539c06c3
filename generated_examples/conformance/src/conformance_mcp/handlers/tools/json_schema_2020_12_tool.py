"""Conformance fixture: json_schema_2020_12_tool (user code, kept across regenerations)."""

from __future__ import annotations

from ... import ToolReturn
from ...models import JsonSchema202012ToolInput


async def handle(args: JsonSchema202012ToolInput) -> ToolReturn:
    return f"Received: {args.model_dump_json(by_alias=True, exclude_none=True)}"
