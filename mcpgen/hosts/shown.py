"""How ``mcpgen call`` and ``mcpgen list`` print what a server answered: content blocks
as text, tools with their arguments, prompts, resources."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

Json = Any


def dump(model: Any) -> Json:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def format_content(blocks: Sequence[Any]) -> str:
    """Content blocks as text: text as it is, other kinds as a one-line summary."""
    out = []
    for block in blocks:
        data = dump(block)
        kind = data.get("type")
        if kind == "text":
            out.append(str(data.get("text", "")))
        elif kind in ("image", "audio"):
            size = len(str(data.get("data", ""))) * 3 // 4
            out.append(f"[{kind} {data.get('mimeType', '')}, about {size} bytes]")
        elif kind == "resource_link":
            out.append(f"[resource link {data.get('uri')}]")
        elif kind == "resource":
            resource = data.get("resource") or {}
            text = resource.get("text")
            out.append(text if text is not None else f"[resource {resource.get('uri')}]")
        else:
            out.append(json.dumps(data, ensure_ascii=False))
    return "\n".join(out)


def _signature(schema: Mapping[str, Json]) -> str:
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    parts = []
    for name, prop in properties.items():
        kind: Any = "any"
        if isinstance(prop, dict):
            ref = str(prop.get("$ref") or "").rsplit("/", 1)[-1]
            kind = prop.get("type") or ref or ("enum" if "enum" in prop else "any")
        if isinstance(kind, list):
            kind = "|".join(map(str, kind))
        parts.append(f"{name}{'' if name in required else '?'}: {kind}")
    return ", ".join(parts)


def _summary(text: str | None) -> str:
    """The first line of ``text`` after two spaces; nothing when there is none."""
    lines = (text or "").strip().splitlines()
    return f"  {lines[0]}" if lines else ""


def listing(
    info: Any,
    tools: list[Any],
    prompts: list[Any],
    resources: list[Any],
    templates: list[Any],
    as_json: bool,
) -> str:
    """What a server offers, as text (or as JSON)."""
    if as_json:
        data = {
            "server": dump(info) if info is not None else None,
            "tools": [dump(t) for t in tools],
            "prompts": [dump(p) for p in prompts],
            "resources": [dump(r) for r in resources],
            "resourceTemplates": [dump(r) for r in templates],
        }
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    lines = []
    if info is not None:
        lines.append(f"server {info.name} {info.version}")
    lines.append(f"tools ({len(tools)}):")
    for t in tools:
        lines.append(f"  {t.name}({_signature(t.input_schema)})" + _summary(t.description))
    if prompts:
        lines.append(f"prompts ({len(prompts)}):")
        for p in prompts:
            names = ", ".join(a.name + ("" if a.required else "?") for a in p.arguments or [])
            lines.append(f"  {p.name}({names})" + _summary(p.description))
    if resources or templates:
        lines.append(f"resources ({len(resources) + len(templates)}):")
        lines.extend(f"  {r.uri}  {r.name}" for r in resources)
        lines.extend(f"  {r.uri_template}  {r.name}" for r in templates)
    return "\n".join(lines) + "\n"
