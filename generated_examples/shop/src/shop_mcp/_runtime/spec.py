"""The data a generated server is built from (``_spec.json``): read once, never executed."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

SPEC_FORMAT = 2


def load_spec(package: str) -> dict[str, Any]:
    """The package's ``_spec.json``: every manifest string a client sees travels as JSON."""
    text = resources.files(package).joinpath("_spec.json").read_text("utf-8")
    spec: dict[str, Any] = json.loads(text)
    if spec.get("format") != SPEC_FORMAT:
        raise RuntimeError(
            f"{package}/_spec.json has format {spec.get('format')!r}, this runtime reads "
            f"{SPEC_FORMAT}: rebuild the package with the same mcpgen"
        )
    return spec


def scopes_of(spec: dict[str, Any]) -> dict[str, dict[str, list[str]]]:
    """The scopes every tool, resource and prompt needs, by kind and name."""
    return {
        "tool": {t["definition"]["name"]: t.get("scopes", []) for t in spec.get("tools", [])},
        "resource": {
            str(r["definition"].get("uri") or r["definition"].get("uriTemplate")): r.get(
                "scopes", []
            )
            for r in spec.get("resources", [])
        },
        "prompt": {p["definition"]["name"]: p.get("scopes", []) for p in spec.get("prompts", [])},
    }
