"""The surface lock: exactly what MCP clients of a generated server see, as canonical data
(``docs/surface.md``), made from the model; pure. It shares schema objects with the model:
do not mutate it."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Mapping
from typing import Any

from mcpgen.literals import READABLE_ITEMS, compact_json, one_per_line
from mcpgen.model.resources import wire as wire_fields

Json = Any
VERSION = 1
#: Keys the lock adds to an item's wire definition; they are not part of what is sent.
EXTRA_KEYS = frozenset({"scopes", "size", "enabled"})


def estimate_tokens(n_bytes: int) -> int:
    """Bytes / 4, rounded up: not a tokenizer, say "estimated" wherever it is shown."""
    return -(-n_bytes // 4)


def wire(entry: Mapping[str, Json]) -> dict[str, Json]:
    """A lock entry as clients receive it (``contentSize`` back to its wire name ``size``)."""
    result = {k: v for k, v in entry.items() if k not in EXTRA_KEYS and k != "contentSize"}
    if "contentSize" in entry:
        result["size"] = entry["contentSize"]
    return result


def tools_list_cost(lock: Mapping[str, Json]) -> tuple[int, int]:
    """(bytes, estimated tokens) of a lock's tools/list: its totals, else measured."""
    totals = _dict(lock, "totals")
    n, tokens = totals.get("toolsListBytes"), totals.get("toolsListTokens")
    if isinstance(n, int):
        return int(n), int(tokens) if isinstance(tokens, int) else estimate_tokens(int(n))
    listed = [
        compact_json(wire(e)) for e in _list(lock, "tools") if e.get("enabled", True) is not False
    ]
    from mcpgen.model.build import tools_list_size

    n = tools_list_size(listed)
    return n, estimate_tokens(n)


def _entry(item: Any, text: str | None = None) -> dict[str, Json]:
    """An item's definition with the keys the lock adds (``text``: its compact JSON)."""
    definition = item.definition
    entry = dict(definition)
    if "size" in definition:  # a resource's declared content size; ``size`` is the lock's measure
        entry["contentSize"] = definition["size"]
    entry["scopes"] = sorted(set(item.scopes))
    n = len((compact_json(definition) if text is None else text).encode())
    entry["size"] = {"bytes": n, "tokens": estimate_tokens(n)}
    if not getattr(item, "enabled", True):  # a resource is always listed
        entry["enabled"] = False
    return entry


def _tool_entries(tools: Iterable[Any]) -> list[dict[str, Json]]:
    return sorted((_entry(tool, tool.wire_json) for tool in tools), key=lambda e: e["name"])


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
    result |= {name: {} for name in ("completions", "logging") if getattr(caps, name)}
    if any(tool.task for tool in manifest.advertised_tools):  # docs/tasks.md
        result["tasks"] = {"cancel": {}, "requests": {"tools": {"call": {}}}}
        if manifest.auth.type != "none":  # tasks/list: not for anonymous callers (all one)
            result["tasks"]["list"] = {}
    return result


def surface(manifest: Any) -> dict[str, Json]:
    """The surface lock of a model (:class:`mcpgen.model.Manifest`)."""
    from mcpgen.model.build import tools_list_bytes  # the build's own measure (context_cost)

    advertised = manifest.advertised_tools
    tools = _tool_entries(advertised)
    result: dict[str, Json] = {
        "mcpSurface": VERSION,
        "server": wire_fields(
            manifest.server, "name version title description instructions website_url"
        ),
        "capabilities": _capabilities(manifest, bool(advertised)),
        "tools": tools,
    }
    if manifest.meta_tools:  # search or code mode: the mode's tools reach the operations
        result["operations"] = _tool_entries(t for t in manifest.tools if t.http)
    resources = [_entry(r) for r in manifest.resources]
    result["resources"] = sorted((r for r in resources if "uri" in r), key=lambda r: str(r["uri"]))
    result["resourceTemplates"] = sorted(
        (r for r in resources if "uriTemplate" in r), key=lambda r: str(r["uriTemplate"])
    )
    prompts = [_entry(p) for p in manifest.prompts]
    for entry in prompts:
        entry["arguments"] = [
            {**a, "required": bool(a.get("required"))} for a in entry.get("arguments", ())
        ]
    result["prompts"] = sorted(prompts, key=lambda p: str(p["name"]))
    n_bytes = tools_list_bytes(advertised)
    result["totals"] = {"toolsListBytes": n_bytes, "toolsListTokens": estimate_tokens(n_bytes)}
    return result


def dumps(lock: Mapping[str, Json]) -> str:
    """``mcp-surface.json``'s text: indented, or past ``READABLE_ITEMS`` items one a line."""
    if sum(len(v) for v in lock.values() if isinstance(v, list)) > READABLE_ITEMS:
        return one_per_line(dict(lock), sort_keys=True)
    return json.dumps(lock, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _item_lines(text: str) -> dict[str, list[str]]:
    """Each list's item lines, by key, in a lock ``dumps`` wrote one item per line."""
    found, lines = {}, iter(text.split("\n"))
    for line in lines:
        if line.startswith('"') and line.endswith('": ['):
            items = itertools.takewhile(lambda item: item not in ("]", "],"), lines)
            found[json.loads(line[:-3])] = [item.removesuffix(",") for item in items]
    return found


def share_equal(
    old: dict[str, Json], new: Mapping[str, Json], old_text: str, new_text: str
) -> None:
    """Give lock ``old`` the very items of ``new`` where their lines (sorted keys) are equal:
    equal JSON, which the diff need not encode again (GitHub: 1,188 of 1,189 items)."""
    olds, news = _item_lines(old_text), _item_lines(new_text)
    for key in olds.keys() & news.keys():
        mine, theirs = old.get(key), new.get(key)
        if not isinstance(mine, list) or not isinstance(theirs, list):
            continue
        if (len(olds[key]), len(news[key])) == (len(mine), len(theirs)):
            same = dict(zip(news[key], theirs, strict=True))
            old[key] = [same.get(line, item) for line, item in zip(olds[key], mine, strict=True)]


def _list(data: Mapping[str, Json], key: str) -> list[dict[str, Json]]:
    value = data.get(key)
    return [e for e in value if isinstance(e, dict)] if isinstance(value, list) else []


def _dict(data: Mapping[str, Json], key: str) -> dict[str, Json]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}
