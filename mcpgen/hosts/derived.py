"""The environment of a project generated before ``_spec.json`` listed it: derived from
the upstream settings and the README (``project.describe``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .project import EnvVar

Json = Any

_ROW = re.compile(r"^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|\s*(.*?)\s*\|\s*$")
_SECRET_WORDS = re.compile(r"key|token|secret|password|credential|bearer|basic", re.IGNORECASE)


def _readme_variables(root: Path) -> dict[str, str]:
    """The upstream variables today's generated README lists (``| `NAME` | meaning |`` rows
    under "The upstream API"), name -> meaning."""
    try:
        text = (root / "README.md").read_text(encoding="utf-8")
    except OSError:
        return {}
    found: dict[str, str] = {}
    section = False
    for line in text.splitlines():
        if line.startswith("## "):
            section = line.strip() == "## The upstream API"
        elif section and (match := _ROW.match(line)):
            found[match.group(1)] = match.group(2)
    return found


def derived_environment(root: Path, spec: Json) -> list[EnvVar]:
    """What a project generated before ``environment`` existed tells about its variables:
    the upstream API's base URL and credentials (from ``upstream`` in _spec.json, with the
    README's descriptions). The server's own listener settings only matter over HTTP."""
    upstream = spec.get("upstream") or {}
    readme = _readme_variables(root)
    out: dict[str, EnvVar] = {}
    base_env = upstream.get("baseUrlEnv")
    if base_env:
        out[base_env] = EnvVar(
            name=base_env,
            description=readme.get(base_env, "base URL of the upstream API"),
            default=upstream.get("baseUrl"),
        )
    for scheme, env in sorted((upstream.get("credentialEnv") or {}).items()):
        out[env] = EnvVar(
            name=env,
            description=readme.get(env, f"credential for the upstream API ({scheme})"),
            secret=True,
        )
    for name, meaning in readme.items():  # anything else the README lists
        if name not in out:
            default = re.search(r"\(default (?:from the document: )?([^)]*)\)", meaning)
            out[name] = EnvVar(
                name=name,
                description=meaning,
                secret=bool(_SECRET_WORDS.search(meaning)) and default is None,
                default=default.group(1) if default else None,
            )
    return list(out.values())
