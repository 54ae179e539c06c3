"""What an XML value (an answer, a body sent as written) loses under ``writeOnly`` plans
(the importer's ``plans.Plans``): its elements and attributes named as a property a plan
leaves out, at any depth (``<password>``), or as its ``xml.name`` says (``xml``); and the
values of a map a plan leaves out (``additionalProperties`` or a ``patternProperties``
entry marked: ``gone``), as a JSON answer loses them: the children whose name is such a
key of the element that is the map, found by its path in the schema (the root is the
value; a property's element is a child named as the property or its ``xml.name``; a
``wrapped`` array's items are its element's children, an unwrapped one's are the
property's elements themselves), never by its name alone; and the items of an array
whose ``items`` a plan leaves out (after its ``prefixItems``), as a JSON answer loses them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from xml.etree import ElementTree

Json = Any


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
    children named as the property or as ``names`` says (its ``xml.name``, its unwrapped
    items', given by any plan applying to the element: a member's property may be named
    beside it), a ``wrapped`` array's items' to its element's children (``prefix`` by
    position), an unwrapped array's to the element itself (the ``index``-th of its
    property's), a map's kept values' to its other children. An array's items a plan
    leaves out (``items: {gone}``, after its ``prefix``) go too: a wrapped array's children,
    an unwrapped one's elements. Iterative: an answer's depth is the upstream's to choose."""
    todo: list[tuple[ElementTree.Element, Json, int, ElementTree.Element | None]]
    todo, gone = [(root, plan, 0, None)], dict[int, ElementTree.Element]()  # (kept: ids)
    read: dict[int, tuple[list[tuple[dict[str, Json], bool]], dict[str, set[str]]]] = {}
    while todo:
        node, plan, index, holder = todo.pop()
        if id(node) in gone:
            continue
        if id(plan) not in read:  # (each plan once: the items of an array share theirs)
            read[id(plan)] = applying, names = _applying(plan, defs), dict[str, set[str]]()
            for part, _ in applying:
                for prop, called in part.get("names", {}).items():
                    names.setdefault(prop, set()).update(called)
        applying, names = read[id(plan)]
        for part, wrapped in applying:
            if "items" in part or part.get("prefix"):
                heads, rest = part.get("prefix", []), part.get("items")
                items: list[tuple[int, ElementTree.Element, ElementTree.Element | None]]
                items = [(i, c, node) for i, c in enumerate(node)] if wrapped else []
                for i, item, within in items or [(index, node, holder)]:
                    if i < len(heads) or "gone" not in (rest or {}) or within is None:
                        todo.append((item, heads[i] if i < len(heads) else rest, 0, within))
                    elif id(item) not in gone:  # a writeOnly item (not a prefixItems one)
                        gone[id(item)] = item
                        within.remove(item)
                        taken.append("".join(item.itertext()))
            if "additional" in part or part.get("patterns"):
                for child in list(node):
                    subs = _subs(part, _local(child))
                    if any("gone" in sub for sub in subs):
                        gone[id(child)] = child
                        node.remove(child)
                        taken.append("".join(child.itertext()))
                    else:
                        todo += [(child, sub, 0, node) for sub in subs]
            for prop, sub in part.get("properties", {}).items():
                called = {prop, *names.get(prop, ())}
                found = [child for child in node if _local(child) in called]
                todo += [(child, sub, i, node) for i, child in enumerate(found)]


def _applying(plan: Json, defs: Json) -> list[tuple[dict[str, Json], bool]]:
    """The plans applying to a value of ``plan``: it, its members (``all``) and the
    definitions they refer to (``ref``), each once, with whether the value is ``wrapped``
    (said by any of them above: beside a reference, in a member)."""
    found: list[tuple[dict[str, Json], bool]] = []
    todo, seen = [(plan, False)], set[tuple[str, bool]]()  # (a reference cycle ends)
    while todo:
        part, wrapped = todo.pop()
        if not isinstance(part, dict):
            continue
        wrapped = wrapped or part.get("wrapped") is True
        if "ref" in part:
            if (str(part["ref"]), wrapped) not in seen:
                seen.add((str(part["ref"]), wrapped))
                todo.append((defs.get(part["ref"]), wrapped))
            continue
        found.append((part, wrapped))
        todo += [(member, wrapped) for member in part.get("all", ())]
    return found


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
