"""What ``mcpgen diff`` reports: a :class:`Change`, its level, and the reasons the rules give.

Also the small helpers every part of the diff shares (JSON pointer tokens, short value
texts, tolerant readers of lock fields).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

Json = Any
Add = Callable[[str, str, str, str, str], None]  # (level, item, path, change, why)

BREAKING, COMPATIBLE, DOCS = "breaking", "compatible", "docs"
LEVELS = (BREAKING, COMPATIBLE, DOCS)
RANK = {level: rank for rank, level in enumerate(LEVELS)}


@dataclass(frozen=True)
class Change:
    level: str  # breaking | compatible | docs
    item: str  # tool:create_note, resource:<uri>, server, capability:tools, ...
    path: str  # JSON pointer inside the item ("" for the item itself)
    change: str  # short text
    why: str

    def to_data(self) -> dict[str, str]:
        return asdict(self)

    def sort_key(self) -> tuple[int, str, str, str]:
        return (RANK[self.level], self.item, self.path, self.change)


def _canon(value: Json) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _show(value: Json, limit: int = 60) -> str:
    text = value if isinstance(value, str) else _canon(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _values(values: Iterable[str], limit: int = 5) -> str:
    items = sorted(values)
    shown = ", ".join(items[:limit])
    return shown + (f" (+{len(items) - limit} more)" if len(items) > limit else "")


def _same_text(a: Json, b: Json) -> bool:
    """Equal, or equal strings up to whitespace (re-wrapped prose is not a change)."""
    if isinstance(a, str) and isinstance(b, str):
        return a.split() == b.split()
    return bool(a == b) and type(a) is type(b)


# Why a change is classified as it is: the reasons the rules give
WHY_ADDITION = "an addition: nothing clients use is gone"
WHY_ARGUMENT_GONE = "prompts/get refuses arguments the prompt does not declare"
WHY_CAPABILITY_FLAG = "clients that rely on it (notifications, subscriptions) stop hearing changes"
WHY_CLOSED_REMOVED = "extra properties are refused, so calls that send it fail"
WHY_CONTENT_HINT = "a hint about the content"
WHY_DEFAULT = "calls that leave this value out now get a different default"
WHY_DOCS = "shown to people and models; no call changes"
WHY_HIDDEN = "clients no longer see it in the list"
WHY_HINT = "a hint, not a contract"
WHY_INPUT_NARROWED = "the input now accepts less: calls that were valid may be refused"
WHY_INPUT_WIDENED = "the input now accepts more: every call that was valid still is"
WHY_MAYBE_ABSENT = "results may leave it out: clients that read it may break"
WHY_META = "_meta is read only by clients that know its keys; check those that do"
WHY_MIME_TYPE = "clients that parse the content by its type may fail"
WHY_NEW_ITEM = "a new item: nothing clients use is gone"
WHY_NOT_REQUIRED = "calls that send it still work"
WHY_NOT_VALIDATION = "not a JSON Schema validation keyword: validation is unchanged"
WHY_NOW_EXTRA = "calls that send it are checked against additionalProperties"
WHY_NOW_OPERATION = "tools/list does not show it; it is reachable only through the meta tools"
WHY_NOW_PRESENT = "results still have everything clients read"
WHY_NO_RULE = "a field mcpgen has no rule for; review it"
WHY_OPTIONAL = "calls that leave it out still work"
WHY_OUTPUT_GONE = "clients that read it no longer get it"
WHY_OUTPUT_NARROWED = "the output now allows less: every result still matches what clients expected"
WHY_OUTPUT_SCHEMA_ADDED = "results now also carry described structured content"
WHY_OUTPUT_SCHEMA_GONE = "results no longer promise structured content that clients may read"
WHY_OUTPUT_WIDENED = "the output now allows more: clients may get results the old schema ruled out"
WHY_REQUIRED = "calls that leave it out are refused"
WHY_RESOURCE_NAME = "resources are read by URI; the name only labels it"
WHY_SCOPE_ADDED = "callers whose tokens lack the new scope are refused"
WHY_SCOPE_REMOVED = "every caller allowed before still is"
WHY_SERVER_NAME = "clients address a server by their own configuration, not by serverInfo.name"
WHY_TYPE_CHANGED = "values of the old type are refused (input) or no longer produced (output)"
WHY_UNKNOWN = "mcpgen cannot tell whether this accepts more or less, so it assumes the worst"
WHY_UNKNOWN_FIELDS = "clients ignore output properties they do not know"


def _presence(key: str, a: Json, b: Json) -> str:
    if a is None:
        return f"{key} added"
    if b is None:
        return f"{key} removed"
    return f"{key} changed"


def _string_set(value: Json) -> set[str]:
    return {v for v in value if isinstance(v, str)} if isinstance(value, list) else set()


def _list(data: Mapping[str, Json], key: str) -> list[dict[str, Json]]:
    value = data.get(key)
    return [e for e in value if isinstance(e, dict)] if isinstance(value, list) else []


def _dict(data: Mapping[str, Json], key: str) -> dict[str, Json]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}
