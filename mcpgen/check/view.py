"""The view the semantic checks read: what the structural check found malformed blanked."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mcpgen.load import JsonPath

SECTIONS = ("tools", "resources", "prompts", "completions")
MAPPINGS = ("server", "$defs", "auth", "transports", "capabilities", "observability")
# settings the checks read together: a problem anywhere inside blanks the whole mapping
WHOLE = ("server", "auth", "transports", "observability")


def checkable(data: Any, broken: set[JsonPath]) -> dict[str, Any]:
    """``data`` with malformed sections made empty and malformed entries None."""
    view: dict[str, Any] = dict(data) if isinstance(data, dict) else {}
    for key in MAPPINGS:
        if not isinstance(view.get(key), dict) or (key,) in broken:
            view[key] = {}
    for section in SECTIONS:
        items = view.get(section)
        view[section] = [
            item if isinstance(item, dict) and (section, i) not in broken else None
            for i, item in enumerate(items if isinstance(items, list) else [])
        ]
    return view


def broken_entries(paths: Iterable[JsonPath]) -> set[JsonPath]:
    """The entries (``("tools", 3)``) and sections the structural problems are inside."""
    found: set[JsonPath] = set()
    for path in paths:
        if path and path[0] in SECTIONS and len(path) > 1:
            found.add(path[:2])
        elif tuple(path[:2]) == ("openapi", "credentials"):  # an entry, or the whole section
            found.add(tuple(path[:3]))
        elif path and (path[0] in WHOLE or (path[0] in MAPPINGS and len(path) == 1)):
            found.add(path[:1])
    return found


def entries(items: list[Any]) -> Iterable[tuple[int, dict[str, Any]]]:
    return ((i, item) for i, item in enumerate(items) if isinstance(item, dict))
