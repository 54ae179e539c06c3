"""What an XML value (an answer, a body sent as written) loses under ``writeOnly`` plans
(the importer's ``plans.Plans``): its elements and attributes named as a property a plan
leaves out, at any depth (``<password>``), or as its ``xml.name`` says (``xml``); and the
values of a map a plan leaves out (``additionalProperties`` or a ``patternProperties``
entry marked: ``gone``), as a JSON answer loses them: the children whose name is such a
key of the element that is the map, found by its path in the schema (the root is the
value; a property's element is a child named as the property or its ``xml.name``; a
``wrapped`` array's items are its element's children, an unwrapped one's are the
property's elements themselves), never by its name alone."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from xml.etree import ElementTree

Json = Any
Place = tuple[ElementTree.Element, Json, bool, int]  # an element, its plan, wrapped, item index


def strip(root: ElementTree.Element, plans: Sequence[Json]) -> list[str]:
    """Take out of ``root`` (in place) what ``plans`` leave out; the texts taken (an empty
    one for an empty element: the list says whether anything was)."""
    names = {name for plan in plans for name in dropped(plan)}
    taken: list[str] = []
    for plan in plans:  # (the maps first: found by their path, before any element goes)
        _maps(root, plan, plan.get("$defs", {}), taken)
    for node in list(root.iter()):
        for child in [c for c in node if _local(c) in names]:
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


def _maps(root: ElementTree.Element, plan: Json, defs: Json, taken: list[str]) -> None:
    """Take out of ``root`` (the value ``plan`` is of) each map value ``plan`` leaves out,
    at any depth, walking the elements along the plan: a property's plan applies to the
    children named as the property (``names``: its ``xml.name``, its unwrapped items'), a
    ``wrapped`` array's items' to its element's children (``prefix`` by position), an
    unwrapped array's to the element itself (the ``index``-th of its property's), a map's
    kept values' to its other children; members (``all``) and definitions (``ref``) to the
    same element, the value's ``wrapped`` with them. Iterative: an answer's depth is the
    upstream's to choose."""
    todo: list[Place] = [(root, plan, False, 0)]
    seen: set[tuple[int, str, bool, int]] = set()  # (a reference cycle at one element ends)
    while todo:
        node, plan, wrapped, index = todo.pop()
        if not isinstance(plan, dict):
            continue
        wrapped = wrapped or plan.get("wrapped") is True
        if "ref" in plan:
            if (key := (id(node), str(plan["ref"]), wrapped, index)) not in seen:
                seen.add(key)
                todo.append((node, defs.get(plan["ref"]), wrapped, index))
            continue
        todo += [(node, member, wrapped, index) for member in plan.get("all", ())]
        if "items" in plan or plan.get("prefix"):
            heads, rest = plan.get("prefix", []), plan.get("items")
            items = list(enumerate(node)) if wrapped else [(index, node)]
            todo += [(item, heads[i] if i < len(heads) else rest, False, 0) for i, item in items]
        if "additional" in plan or plan.get("patterns"):
            for child in list(node):
                subs = _subs(plan, _local(child))
                if any("gone" in sub for sub in subs):
                    node.remove(child)
                    taken.append("".join(child.itertext()))
                else:
                    todo += [(child, sub, False, 0) for sub in subs]
        for prop, sub in plan.get("properties", {}).items():
            called = {prop, *plan.get("names", {}).get(prop, ())}
            found = [child for child in node if _local(child) in called]
            todo += [(child, sub, False, i) for i, child in enumerate(found)]


def _subs(plan: dict[str, Json], key: str) -> list[Json]:
    """The plans of the map ``plan``'s value of ``key`` (as ``wire_body.without_read_only``
    reads them): the patterns matching it, else ``additional`` for a key not declared."""
    subs = []
    if plan.get("patterns"):
        from .patterns import matcher  # (carried by a package calling an upstream)

        subs = [sub for p, sub in plan["patterns"].items() if matcher(p)(key)]
    if not subs and "additional" in plan and key not in plan.get("known", ()):
        subs = [plan["additional"]]
    return subs


def _local(element: ElementTree.Element) -> str:
    """``element``'s name without its namespace."""
    return str(element.tag).rpartition("}")[2]
