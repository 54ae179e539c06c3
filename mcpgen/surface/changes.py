"""What ``mcpgen diff`` reports (a :class:`Change`), and the helpers its parts share."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from mcpgen.literals import encoder

Json = Any
T = TypeVar("T")
Add = Callable[[str, str, str, str, str], None]  # (level, item, path, change, why)

BREAKING, COMPATIBLE, DOCS = "breaking", "compatible", "docs"
LEVELS = (BREAKING, COMPATIBLE, DOCS)
RANK = {level: rank for rank, level in enumerate(LEVELS)}
# each list in a lock: the key that names its entries, and the kind that prefixes their items
COLLECTIONS = {
    "tools": ("name", "tool"),
    "operations": ("name", "operation"),
    "resources": ("uri", "resource"),
    "resourceTemplates": ("uriTemplate", "template"),
    "prompts": ("name", "prompt"),
}


@dataclass(frozen=True)
class Change:
    level: str  # breaking | compatible | docs
    item: str  # tool:create_note, resource:<uri>, server, capability:tools, ...
    path: str  # JSON pointer inside the item ("" for the item itself)
    change: str  # short text
    why: str


_canon = encoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _show(value: Json, limit: int = 60) -> str:
    text = value if isinstance(value, str) else _canon(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _values(values: Iterable[str], limit: int = 5) -> str:
    items = sorted(values)
    shown = ", ".join(items[:limit])
    return shown + (f" (+{len(items) - limit} more)" if len(items) > limit else "")


def _same_json(a: Json, b: Json) -> bool:
    """Equal as JSON: unlike ``==``, ``true`` is not ``1`` and ``false`` is not ``0``."""
    return a is b or (bool(a == b) and _canon(a) == _canon(b))


def _same_text(a: Json, b: Json) -> bool:
    """Equal, or equal strings up to whitespace (re-wrapped prose is not a change)."""
    if isinstance(a, str) and isinstance(b, str):
        return a.split() == b.split()
    return bool(a == b) and type(a) is type(b)


# Why a change is classified as it is: the reasons rules in several modules give
WHY_HINT = "a hint, not a contract"
WHY_NOT_REQUIRED = "calls that send it still work"
WHY_OPTIONAL = "calls that leave it out still work"
WHY_REQUIRED = "calls that leave it out are refused"


def _one_to_one(old: Mapping[T, str], new: Mapping[T, str]) -> list[tuple[T, T]]:
    """(a, b) for each key that exactly one ``a`` of ``old`` and one ``b`` of ``new`` have."""
    olds, news = Counter(old.values()), Counter(new.values())
    by_key = {key: b for b, key in new.items()}
    return [(a, by_key[key]) for a, key in old.items() if olds[key] == news[key] == 1]


def _presence(key: str, a: Json, b: Json) -> str:
    return f"{key} {'added' if a is None else 'removed' if b is None else 'changed'}"


def _string_set(value: Json) -> set[str]:
    return {v for v in value if isinstance(v, str)} if isinstance(value, list) else set()
