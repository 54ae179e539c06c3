"""A property ``readOnly`` in one place and ``required`` in another (``Body = allOf[Plain
(required: [id]), Marked (id: readOnly)]``): a request leaves it out (``read_only_plan``),
so no schema may ask for it, as ``finish`` already has it where ``required`` and
``readOnly`` stand side by side. The ``allOf`` member (or the definition a ``$ref`` beside
other keywords names) that requires it is given as a copy without it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from mcpgen.check.schemas import DATA_KEYWORDS

if TYPE_CHECKING:
    from mcpgen.openapi.schema import SchemaConverter

Json = Any


def beside(target: dict[str, Json]) -> list[Json]:
    """What applies beside ``target``'s own keywords: its ``allOf``/``anyOf``/``oneOf``
    members and the definition it refers to (a reference beside other keywords)."""
    members = [m for k in ("allOf", "anyOf", "oneOf") for m in target.get(k) or ()]
    return members + ([{"$ref": target["$ref"]}] if isinstance(target.get("$ref"), str) else [])


def relax(converter: SchemaConverter, schemas: Iterable[Json]) -> None:
    """Each object in ``schemas`` (converted, their definitions too) no longer requires,
    through what applies beside it, the properties only the server sets; in place."""
    todo, seen = list(schemas), set()
    while todo:
        node = todo.pop()
        if isinstance(node, list):
            todo += node
        if not isinstance(node, dict) or id(node) in seen:
            continue
        seen.add(id(node))
        composed = "allOf" in node or (
            "$ref" in node and set(node) - {"$ref", "title", "description"}
        )
        only = set(converter.read_only(node)) if composed else set()
        if only:
            _lift(converter, node, only)
        todo += [v for k, v in node.items() if k not in DATA_KEYWORDS]


def _lift(converter: SchemaConverter, node: dict[str, Json], only: set[str]) -> None:
    _unrequire(node, only)
    if isinstance(node.get("allOf"), list):
        node["allOf"] = [_without(converter, m, only, set()) for m in node["allOf"]]
    ref = node.get("$ref")
    lifted = _without(converter, {"$ref": ref}, only, set()) if isinstance(ref, str) else None
    if lifted is not None and lifted != {"$ref": ref}:  # the definition, as a member
        del node["$ref"]
        node["allOf"] = [*node.get("allOf", ()), lifted]


def _without(converter: SchemaConverter, member: Json, only: set[str], seen: set[str]) -> Json:
    """``member``, or a copy of what it resolves to that does not require ``only``."""
    target, name = converter.resolve(member)
    if not isinstance(target, dict) or (name is not None and name in seen):
        return member
    found = target.get("allOf")
    members: list[Json] = found if isinstance(found, list) else []
    inner = [_without(converter, m, only, seen | {name} if name else seen) for m in members]
    asked = target.get("required")
    if not (isinstance(asked, list) and only & set(asked)) and inner == members:
        return member
    out = {**target, **({"allOf": inner} if members else {})}
    _unrequire(out, only)
    out.update({k: v for k, v in member.items() if k != "$ref"} if name else {})
    return out


def _unrequire(node: dict[str, Json], only: set[str]) -> None:
    asked = node.get("required")
    if isinstance(asked, list):
        kept = [prop for prop in asked if prop not in only]
        node.pop("required")
        node.update({"required": kept} if kept else {})
