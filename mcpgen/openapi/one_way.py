"""What the converter needs to know of ``readOnly`` beyond one schema's own keywords.

``decide``: whether schemas say ``readOnly`` through what applies beside them (the
definition a ``$ref`` names, composition members), for the whole graph they form at once:
the least fixed point, so a reference cycle proves nothing and a definition many paths lead
to is looked at once (one by path was exponential: a chain of definitions each with two
``allOf`` references to the next ones took seconds at 24 links, doubling every ~1.2).

``relax``: a property ``readOnly`` in one place and ``required`` in another (``Body =
allOf[Plain (required: [id]), Marked (id: readOnly)]``): a request leaves it out
(``plans.Plans``; an answer leaves a ``writeOnly`` one out), so no schema may ask for
it, as ``finish`` already has it where ``required`` and the mark stand side by side (a
``patternProperties`` entry marking a property its pattern matches is elsewhere too). The
``allOf`` member (or the definition a ``$ref`` beside other keywords names) that requires
it is given as a copy without it."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from mcpgen.check.schemas import DATA_KEYWORDS, SCHEMA_MAPS, children, def_name, def_ref

if TYPE_CHECKING:
    from mcpgen.openapi.schema import SchemaConverter

Json = Any
Groups = Callable[[dict[str, Json]], list[list[Json]]]


def beside(target: dict[str, Json]) -> list[Json]:
    """What applies beside ``target``'s own keywords: its ``allOf``/``anyOf``/``oneOf``
    members and the definition it refers to (a reference beside other keywords)."""
    members = [m for k in ("allOf", "anyOf", "oneOf") for m in target.get(k) or ()]
    return members + ([{"$ref": target["$ref"]}] if isinstance(target.get("$ref"), str) else [])


def schema_objects(todo: list[Json]) -> Iterator[dict[str, Json]]:
    """Each object in ``todo`` (schemas, lists of them) and under it, once, through what may
    hold schemas: keywords' values but data's, each value of a map of them (``properties``:
    a property may be named ``default`` or ``enum``). An object's values are looked into
    after the caller's turn with it; the caller may add to ``todo`` meanwhile."""
    seen: set[int] = set()
    while todo:
        node = todo.pop()
        if isinstance(node, list):
            todo += node
        elif isinstance(node, dict) and id(node) not in seen:
            seen.add(id(node))
            yield node
            for key, value in node.items():
                if key in SCHEMA_MAPS and isinstance(value, dict):
                    todo += value.values()
                elif key not in DATA_KEYWORDS:
                    todo.append(value)


def relax(converter: SchemaConverter, schemas: Iterable[Json]) -> None:
    """Each object in ``schemas`` (converted, their definitions too) no longer requires,
    through what applies beside it, the properties only the server (or a client) sets; in
    place."""
    for node in schema_objects(list(schemas)):
        composed = (
            "allOf" in node
            or "patternProperties" in node
            or ("$ref" in node and set(node) - {"$ref", "title", "description"})
        )
        only = set(converter.read_only(node, ("readOnly", "writeOnly"))) if composed else set()
        if only:
            _lift(converter, node, only)


def _lift(converter: SchemaConverter, node: dict[str, Json], only: set[str]) -> None:
    unrequire(node, only)
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
    unrequire(out, only)
    out.update({k: v for k, v in member.items() if k != "$ref"} if name else {})
    return out


def marking_patterns(converter: SchemaConverter, target: Json, keys: tuple[str, ...]) -> list[str]:
    """The ``patternProperties`` patterns whose schema says one of ``keys``, of ``target`` and
    of what always applies beside it (its ``allOf`` members, the definition it refers to), at
    any depth: each marks the object's properties its name matches, wherever declared (JSON
    Schema applies every such entry to the value of every property it matches). Found once
    per schema (``converter.patterns``); a reference cycle ends the search."""
    target, _ = converter.resolve(target)
    if not isinstance(target, dict):
        return []
    key = (id(target), keys)
    if key in converter.patterns:
        return converter.patterns[key][1]
    patterns = target.get("patternProperties")
    found = [
        pattern
        for pattern, sub in (patterns.items() if isinstance(patterns, dict) else ())
        if any(converter.marked_read_only(sub, k) for k in keys)
    ]
    members = converter.always(target)
    if members:  # (kept with it: its id stays its own; a cycle back to it adds nothing)
        converter.patterns[key] = (target, found)
        found += [p for m in members for p in marking_patterns(converter, m, keys)]
    return found


def matches(pattern: str, name: str) -> bool:
    """Whether ``pattern`` matches ``name`` as a generated server matches it (one that
    neither its engine nor Python's compiles matches nothing)."""
    from mcpgen.runtime.patterns import matcher

    try:
        return matcher(pattern)(name)
    except (re.error, OverflowError, RecursionError):  # as check.schemas.python_regex
        return False


def unrequire(node: dict[str, Json], only: set[str]) -> dict[str, Json]:
    """``node`` (changed in place) no longer requiring ``only``."""
    asked = node.get("required")
    if isinstance(asked, list):
        kept = [prop for prop in asked if prop not in only]
        node.pop("required")
        node.update({"required": kept} if kept else {})
    return node


def decide(
    start: dict[str, Json], groups: Groups, known: dict[int, tuple[Json, bool]], keyword: str
) -> None:
    """Add ``start`` and each schema reachable from it through ``groups`` (lists of members
    that say ``keyword`` when all of them do) to ``known`` (id -> the schema, whether it
    says it)."""
    nodes: dict[int, tuple[dict[str, Json], list[list[dict[str, Json]]]]] = {}
    todo = [start]
    while todo:
        node = todo.pop()
        if id(node) in nodes or id(node) in known:
            continue
        whole = [g for g in groups(node) if all(isinstance(m, dict) for m in g)]
        nodes[id(node)] = node, whole
        todo += [m for g in whole for m in g]
    value = {key: node.get(keyword) is True for key, (node, _) in nodes.items()}

    def says(member: dict[str, Json]) -> bool:
        done = known.get(id(member))
        return done[1] if done is not None else value[id(member)]

    changed = True
    while changed:  # each round marks one at least (the last found first: a chain in one)
        changed = False
        for key, (_, whole) in reversed(nodes.items()):
            if not value[key] and any(all(says(m) for m in g) for g in whole):
                value[key] = changed = True
    known.update({key: (node, value[key]) for key, (node, _) in nodes.items()})


def leave_out(
    converter: SchemaConverter, schema: dict[str, Json], plan: dict[str, Json], way: str = "Answer"
) -> Json:
    """A copy of ``schema`` without the properties ``plan`` (``plans.Plans.plan``: those
    marked ``writeOnly``; ``readOnly`` for a ``Request``) leaves out of a value, advertised. A
    definition that changes (of ``plan["$defs"]``), or refers to one that does, is a new one,
    ``<name><way>``: the other way's keeps them, and the manifest shares definitions by name."""
    keyword = "writeOnly" if way == "Answer" else "readOnly"

    def visit(node: Json, given: frozenset[str] = frozenset()) -> Json:
        if not isinstance(node, dict):
            return node
        only = {*given, *converter.read_only(node, (keyword,))}  # (an allOf's: its members')
        out = children(
            node, lambda sub, key: visit(sub, frozenset(only) if key == "allOf" else frozenset())
        )
        if isinstance(out.get("properties"), dict):
            out["properties"] = {k: v for k, v in out["properties"].items() if k not in only}
        ref = def_name(out["$ref"]) if isinstance(out.get("$ref"), str) else None
        return unrequire(out, only) | ({"$ref": def_ref(new[ref])} if ref in new else {})

    defs, new = schema.get("$defs", {}), dict[str, str]()
    new.update({n: n for n in plan.get("$defs", ()) if n in defs and visit(defs[n]) != defs[n]})
    while grown := {n for n in defs if n not in new and converter.deps[n] & set(new)}:
        new.update({n: n for n in grown})  # refers to a definition that changes
    for name in new:
        src, path = converter.origin[name]
        new[name] = converter.naming.name_of((src, (*path, way.lower())), f"{name}{way}")
    for name, renamed in new.items():
        if renamed not in converter.defs:  # (another answer's already)
            converter.defs[renamed] = visit(defs[name])
            converter.deps[renamed] = frozenset(new.get(d, d) for d in converter.deps[name])
            converter.origin[renamed] = converter.origin[name]
    top = {k: v for k, v in schema.items() if k != "$defs"}  # a request's: its arguments stay
    out = visit(top) if way == "Answer" else children(top, lambda sub, _: visit(sub))
    kept = {new.get(n, n): converter.defs[new.get(n, n)] for n in defs}
    return out | ({"$defs": dict(sorted(kept.items()))} if kept else {})
