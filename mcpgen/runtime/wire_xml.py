"""What an XML value (an answer, a body sent as written) loses under ``writeOnly`` plans
(the importer's ``plans.Plans``): its elements and attributes named as a property a plan
leaves out, at any depth (``<password>``), or as its ``xml.name`` says (``xml``); and the
values of a map a plan leaves out (``additionalProperties`` or a ``patternProperties``
entry marked: ``gone``), the children of each element named as the map's property (of the
root, when the value is the map) whose name is such a key, as a JSON answer loses them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from xml.etree import ElementTree

Json = Any
Maps = dict[str | None, list[tuple[dict[str, Json], int]]]  # by element name (None: the root)
MAX_BELOW = 16  # wrapped arrays nested in one another a map is looked for in


def strip(root: ElementTree.Element, plans: Sequence[Json]) -> list[str]:
    """Take out of ``root`` (in place) what ``plans`` leave out; the texts taken (an empty
    one for an empty element: the list says whether anything was)."""
    names = {name for plan in plans for name in dropped(plan)}
    maps: Maps = {}
    for plan in plans:
        _maps(plan, plan.get("$defs", {}), [None], maps, set())
    taken: list[str] = []
    for node in list(root.iter()):
        local = str(node.tag).rpartition("}")[2]
        found = (maps.get(None, []) if node is root else []) + maps.get(local, [])
        for value, below in found:  # (a wrapped array's: each item's children)
            holders = [node]
            for _ in range(below):
                holders = [child for holder in holders for child in holder]
            for holder in holders:
                for child in [c for c in holder if _gone(value, str(c.tag).rpartition("}")[2])]:
                    holder.remove(child)
                    taken.append("".join(child.itertext()))
        for child in [c for c in node if str(c.tag).rpartition("}")[2] in names]:
            node.remove(child)
            taken.append("".join(child.itertext()))
        for key in [k for k in node.attrib if k.rpartition("}")[2] in names]:
            taken.append(node.attrib.pop(key))
    return taken


def without(content: bytes, plans: Sequence[Json]) -> bytes | None:
    """An XML answer without what ``plans`` leave out (``strip``); None when it has none
    of it or does not parse."""
    try:
        root = ElementTree.fromstring(content)  # (expat: no entity expansion bomb)
    except ElementTree.ParseError:
        return None
    return (
        ElementTree.tostring(root, encoding="unicode").encode() if strip(root, [*plans]) else None
    )


def dropped(plan: Json) -> set[str]:
    """Every property name ``plan`` leaves out, at any depth (its ``$defs`` too)."""
    if isinstance(plan, list):
        return {name for item in plan for name in dropped(item)}
    if not isinstance(plan, dict):
        return set()
    return {
        *plan.get("drop", ()),
        *plan.get("xml", ()),
        *(n for k, v in plan.items() if k not in ("drop", "xml") for n in dropped(v)),
    }


def _maps(
    plan: Json,
    defs: Json,
    names: list[str | None],
    out: Maps,
    seen: set[Any],
    below: int = 0,
    wrapped: bool = False,
) -> None:
    """Add to ``out`` each map ``plan`` (the value's, its element named one of ``names``)
    has, at any depth, whose values it leaves out, by its property's names (``names``: its
    ``xml.name``), with how many levels ``below`` that element the map's elements are (a
    ``wrapped`` array's items are its element's children; an unwrapped one's have its names).
    ``wrapped`` is the value's: said beside a reference or an ``allOf`` member, it holds for
    the items that member or definition gives."""
    if not isinstance(plan, dict) or below > MAX_BELOW:  # (an array of itself: no end)
        return
    wrapped = wrapped or plan.get("wrapped") is True
    if "ref" in plan:
        if (plan["ref"], *names, below, wrapped) not in seen:  # (a cycle ends)
            seen.add((plan["ref"], *names, below, wrapped))
            _maps(defs.get(plan["ref"]), defs, names, out, seen, below, wrapped)
        return
    if any("gone" in v for v in [plan.get("additional") or {}, *plan.get("patterns", {}).values()]):
        for name in names:
            out.setdefault(name, []).append((plan, below))
    for member in plan.get("all", ()):
        _maps(member, defs, names, out, seen, below, wrapped)
    for item in [plan.get("items"), *plan.get("prefix", ())]:  # (a wrapped array's: below)
        _maps(item, defs, names, out, seen, below + wrapped)
    for prop, sub in plan.get("properties", {}).items():
        _maps(sub, defs, [prop, *plan.get("names", {}).get(prop, ())], out, seen)


def _gone(plan: dict[str, Json], key: str) -> bool:
    """Whether the map ``plan`` leaves out its value of ``key`` (as
    ``wire_body.without_read_only`` does)."""
    subs = []
    if plan.get("patterns"):
        from .patterns import matcher  # (carried by a package calling an upstream)

        subs = [sub for p, sub in plan["patterns"].items() if matcher(p)(key)]
    if not subs and "additional" in plan and key not in plan.get("known", ()):
        subs = [plan["additional"]]
    return any("gone" in sub for sub in subs)
