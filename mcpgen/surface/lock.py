"""The surface lock: exactly what MCP clients of a generated server see, as canonical data.

``surface(manifest)`` reads the model (never the raw manifest) and returns a JSON-ready
dict; ``dumps`` gives its one canonical text (``mcp-surface.json``). The shape is described
in ``docs/surface.md``. Both are pure: no clock, no paths, no environment.

The result shares schema objects with the model (copying a big API's schemas would cost
more than building the lock): do not mutate it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, MutableMapping
from typing import Any

Json = Any

VERSION = 1
#: Keys the lock adds to an item's wire definition; they are not part of what is sent.
EXTRA_KEYS = frozenset({"scopes", "size", "enabled"})


def compact(value: Json) -> str:
    """JSON as sent on the wire, for sizes: compact separators, non-ASCII kept."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def estimate_tokens(n_bytes: int) -> int:
    """An estimate of the tokens a model's context pays for ``n_bytes`` of JSON: bytes / 4,
    rounded up. Not a tokenizer: say "estimated" wherever it is shown."""
    return -(-n_bytes // 4)


def size_of(text: str) -> dict[str, int]:
    n = len(text.encode())
    return {"bytes": n, "tokens": estimate_tokens(n)}


def tools_list_size(definitions: Iterable[str]) -> int:
    """UTF-8 bytes of the ``{"tools":[...]}`` result made of these compact definitions."""
    parts = list(definitions)
    # '{"tools":[' + ','.join(parts) + ']}' without building the string
    return 12 + sum(len(p.encode()) for p in parts) + max(len(parts) - 1, 0)


def wire(entry: Mapping[str, Json]) -> dict[str, Json]:
    """A lock entry without the keys the lock adds: the definition as clients receive it.
    (A resource's declared ``contentSize`` goes back to its wire name ``size``.)"""
    result = {k: v for k, v in entry.items() if k not in EXTRA_KEYS and k != "contentSize"}
    if "contentSize" in entry:
        result["size"] = entry["contentSize"]
    return result


def _entry(definition: dict[str, Json], scopes: Iterable[str]) -> tuple[dict[str, Json], str]:
    text = compact(definition)
    entry = dict(definition)
    entry["scopes"] = sorted(set(scopes))
    entry["size"] = size_of(text)
    return entry, text


def _tool_entries(tools: Iterable[Any]) -> tuple[list[dict[str, Json]], list[str]]:
    """(entries sorted by name, compact texts of the enabled ones in tools/list order)."""
    entries: list[dict[str, Json]] = []
    listed: list[str] = []
    for tool in tools:
        entry, text = _entry(tool.definition, tool.scopes)
        if not tool.enabled:
            entry["enabled"] = False
        else:
            listed.append(text)
        entries.append(entry)
    entries.sort(key=lambda e: e["name"])
    return entries, listed


def _server(server: Any) -> dict[str, Json]:
    result: dict[str, Json] = {"name": server.name, "version": server.version}
    for key, value in (
        ("title", server.title),
        ("description", server.description),
        ("instructions", server.instructions),
        ("websiteUrl", server.website_url),
    ):
        if value is not None:
            result[key] = value
    return result


def _capabilities(manifest: Any, has_tools: bool) -> dict[str, Json]:
    caps = manifest.capabilities
    result: dict[str, Json] = {}
    if has_tools:
        result["tools"] = {"listChanged": bool(caps.tools_list_changed)}
    if manifest.resources or caps.resources_subscribe:
        result["resources"] = {
            "listChanged": bool(caps.resources_list_changed),
            "subscribe": bool(caps.resources_subscribe),
        }
    if manifest.prompts:
        result["prompts"] = {"listChanged": bool(caps.prompts_list_changed)}
    if caps.completions:
        result["completions"] = {}
    if caps.logging:
        result["logging"] = {}
    return result


def _resource_entry(resource: Any) -> dict[str, Json]:
    definition = resource.definition
    entry, _ = _entry(definition, getattr(resource, "scopes", ()))
    if "size" in definition:  # the declared content size; ``size`` is the lock's measure
        entry["contentSize"] = definition["size"]
    return entry


def _prompt_entry(prompt: Any) -> dict[str, Json]:
    definition = prompt.definition
    entry, _ = _entry(definition, getattr(prompt, "scopes", ()))
    entry["arguments"] = [
        {**argument, "required": bool(argument.get("required", False))}
        for argument in definition.get("arguments", ())
    ]
    if not getattr(prompt, "enabled", True):
        entry["enabled"] = False
    return entry


def surface(manifest: Any) -> dict[str, Json]:
    """The surface lock of a model (:class:`mcpgen.model.Manifest`)."""
    advertised = manifest.advertised_tools
    tools, listed = _tool_entries(advertised)
    result: dict[str, Json] = {
        "mcpSurface": VERSION,
        "server": _server(manifest.server),
        "capabilities": _capabilities(manifest, bool(advertised)),
        "tools": tools,
    }
    # meta tools (or code mode) advertise a few tools that reach every operation
    indirect = manifest.meta_tools or [t.name for t in advertised] != [
        t.name for t in manifest.tools
    ]
    if indirect:
        result["operations"] = _tool_entries(manifest.tools)[0]
    resources = [_resource_entry(r) for r in manifest.resources]
    result["resources"] = sorted((r for r in resources if "uri" in r), key=lambda r: str(r["uri"]))
    result["resourceTemplates"] = sorted(
        (r for r in resources if "uriTemplate" in r), key=lambda r: str(r["uriTemplate"])
    )
    result["prompts"] = sorted(
        (_prompt_entry(p) for p in manifest.prompts), key=lambda p: str(p["name"])
    )
    n_bytes = tools_list_size(listed)
    result["totals"] = {"toolsListBytes": n_bytes, "toolsListTokens": estimate_tokens(n_bytes)}
    return result


def dumps(lock: Mapping[str, Json], memo: MutableMapping[str, str] | None = None) -> str:
    """The canonical text of a lock: what ``mcp-surface.json`` holds, byte for byte.

    ``memo`` (optional, e.g. kept in the build cache) maps a digest of each item to its
    indented text: Python's JSON encoder indents at about 20 MB/s, a big API's lock is
    16 MB, and a rebuild changes few items. The text is the same with or without it.
    """
    if memo is None:
        return json.dumps(lock, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    parts = []
    for key in sorted(lock):
        value = lock[key]
        if isinstance(value, list) and value and all(isinstance(e, dict) for e in value):
            text = "[\n    " + ",\n    ".join(_item_text(e, memo) for e in value) + "\n  ]"
        else:
            text = _indented(value, "\n  ")
        parts.append(f"  {json.dumps(key, ensure_ascii=False)}: {text}")
    return "{\n" + ",\n".join(parts) + "\n}\n" if parts else "{}\n"


def _indented(value: Json, newline: str) -> str:
    # JSON text has no raw newline inside strings: every one is indentation
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False).replace("\n", newline)


def _item_text(entry: Mapping[str, Json], memo: MutableMapping[str, str]) -> str:
    canonical = json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    digest = hashlib.blake2b(canonical.encode(), digest_size=16).hexdigest()
    text = memo.get(digest)
    if text is None:
        text = memo[digest] = _indented(entry, "\n    ")
    return text
