"""The data a generated server is built from (``_spec.json``): read once, never executed."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

SPEC_FORMAT = 3
SHARED_DEFS = "$defs"  # in _spec.json: the definitions its schemas share, each once
SHARED_NAMES = "$defsShared"  # in a schema there, where its ``$defs`` was: their names
OWN_DEFS = "$defsOwn"  # and those whose name another schema uses for other content
SCHEMA_KEYS = ("inputSchema", "outputSchema")


def load_spec(package: str) -> dict[str, Any]:
    """The package's ``_spec.json``: every manifest string a client sees travels as JSON."""
    text = resources.files(package).joinpath("_spec.json").read_text("utf-8")
    spec: dict[str, Any] = json.loads(text)
    if spec.get("format") != SPEC_FORMAT:
        raise RuntimeError(
            f"{package}/_spec.json has format {spec.get('format')!r}, this runtime reads "
            f"{SPEC_FORMAT}: rebuild the package with the same mcpgen"
        )
    return unshare_defs(spec)


def unshare_defs(spec: dict[str, Any]) -> dict[str, Any]:
    """What the generator's ``share_defs`` (``mcpgen/render/spec.py``) was given: every
    schema self-contained again (the definitions are the same objects, shared in memory)."""
    table = spec.pop(SHARED_DEFS, None)
    if not isinstance(table, dict):
        return spec

    def whole(schema: Any) -> Any:
        names = schema.get(SHARED_NAMES) if isinstance(schema, dict) else None
        if names is None:
            return schema
        own = schema.get(OWN_DEFS, {})
        out: dict[str, Any] = {}
        for key, value in schema.items():
            if key == SHARED_NAMES:
                out["$defs"] = {n: own[n] if n in own else table[n] for n in names}
            elif key != OWN_DEFS:
                out[key] = value
        return out

    for tool in spec.get("tools", []):
        for schemas in (tool["definition"], tool.get("full") or {}):
            for key in schemas.keys() & SCHEMA_KEYS:
                schemas[key] = whole(schemas[key])
    for resource in spec.get("resources", []):
        if "input" in resource:
            resource["input"] = whole(resource["input"])
    return spec


def scopes_of(spec: dict[str, Any]) -> dict[str, dict[str, list[str]]]:
    """The scopes every tool, resource and prompt needs, by kind and name (a resource's: its
    URI or URI template)."""
    return {
        kind: {_named(e["definition"]): e.get("scopes", []) for e in spec.get(f"{kind}s", [])}
        for kind in ("tool", "resource", "prompt")
    }


def _named(definition: dict[str, Any]) -> str:
    return str(definition.get("uri") or definition.get("uriTemplate") or definition["name"])
