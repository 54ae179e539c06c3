"""The JSON data file a generated server advertises from (``_spec.json``).

Every string from the manifest that a client will see travels here as JSON, never as code.
"""

from __future__ import annotations

import json
from typing import Any

from mcpgen.check import uritemplate
from mcpgen.model.types import Manifest

Json = Any


def spec_data(manifest: Manifest) -> dict[str, Json]:
    server = manifest.server
    server_data = {
        key: value
        for key, value in (
            ("name", server.name),
            ("version", server.version),
            ("title", server.title),
            ("description", server.description),
            ("instructions", server.instructions),
            ("websiteUrl", server.website_url),
        )
        if value is not None
    }
    resources = []
    for resource in manifest.resources:
        entry: dict[str, Json] = {"definition": resource.definition}
        if resource.content is not None:
            entry["content"] = {resource.content.kind: resource.content.value}
        if resource.http is not None:
            entry["http"] = resource.http
        if resource.uri_template is not None:
            entry["pattern"] = uritemplate.to_regex(resource.uri_template)
            entry["variables"] = list(resource.variables)
        resources.append(entry)
    http = [tool.http for tool in manifest.tools]
    extra: dict[str, Json] = {}
    if manifest.upstream is not None:
        extra = {
            "upstream": manifest.upstream,
            "http": http,
            "idents": [t.ident for t in manifest.tools],
        }
    if manifest.meta_tools:
        extra["meta_tools"] = [tool.definition for tool in manifest.advertised_tools]
    return {
        **extra,
        "server": server_data,
        "tools": [tool.definition for tool in manifest.tools],
        "resources": resources,
        "prompts": [
            {"definition": p.definition, "messages": [m.to_data() for m in p.messages]}
            for p in manifest.prompts
        ],
        "hidden": {
            "tools": [t.name for t in manifest.tools if not t.enabled],
            "prompts": [p.name for p in manifest.prompts if not p.enabled],
        },
        "completions": [
            {"target": c.target, "ref": c.ref, "argument": c.argument, "values": list(c.values)}
            for c in manifest.completions
        ],
    }


READABLE_TOOLS = 200  # above this many tools, _spec.json is compact (10x faster to write)


def spec_json(manifest: Manifest) -> str:
    """Indented for a readable diff; an API with thousands of operations gets compact JSON
    (Python's fast encoder does not indent) with one tool per line."""
    data = spec_data(manifest)
    if len(manifest.tools) <= READABLE_TOOLS:
        return json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    lines = []
    for index, (key, value) in enumerate(data.items()):
        comma = "," if index < len(data) - 1 else ""
        name = json.dumps(key)
        if isinstance(value, list) and value:
            if key == "tools":  # each tool's JSON is made once per build (``definition_json``)
                items = [tool.definition_json for tool in manifest.tools]
            else:
                items = [json.dumps(item, ensure_ascii=False) for item in value]
            lines.append(f"{name}: [\n" + ",\n".join(items) + f"\n]{comma}")
        else:
            lines.append(f"{name}: {json.dumps(value, ensure_ascii=False)}{comma}")
    return "{\n" + "\n".join(lines) + "\n}\n"
