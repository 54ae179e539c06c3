"""What the converter needs to know of ``readOnly`` (``writeOnly``) beyond one schema's own
keywords: which schemas say it through what applies beside them (``decide``), and a tool's
schema without the properties marked so (``leave_out``; docs/openapi.md, note ¹)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Iterator
from functools import cache
from typing import TYPE_CHECKING, Any

from mcpgen.check import schemas
from mcpgen.check.schemas import DATA_KEYWORDS, SCHEMA_MAPS, children, def_name, def_ref, def_refs
from mcpgen.openapi.naming import short_hash

if TYPE_CHECKING:
    from mcpgen.openapi.schema import SchemaConverter

Json = Any
Groups = Callable[[dict[str, Json]], list[list[Json]]]
Step = str | int  # a property's name; ``STEPS``' numbers
# a tree of paths (property names, ``STEPS``' numbers): the names marked here, those below
Paths = tuple[frozenset[str], dict[Step, "Paths"]]
NONE: Paths = (frozenset(), {})
STEPS = {"items": 0, "additionalProperties": 1}


def below(paths: Paths, key: str, props: int = 0) -> Paths:
    """What ``paths`` (of a schema) leave out of its ``key`` subschema: all in a member,
    those below the step for a property (``props``), its items, its map's values."""
    if key in ("allOf", "oneOf", "anyOf") and not props:
        return paths
    step = key if props else STEPS.get(key)
    return NONE if step is None else paths[1].get(step, NONE)


def beside(target: dict[str, Json]) -> list[Json]:
    """What applies beside ``target``'s own keywords: its members and its definition."""
    members = [m for k in ("allOf", "anyOf", "oneOf") for m in target.get(k) or ()]
    return members + ([{"$ref": target["$ref"]}] if isinstance(target.get("$ref"), str) else [])


def schema_objects(todo: list[Json]) -> Iterator[dict[str, Json]]:
    """Each object in ``todo`` (schemas, lists of them) and under it, once, through what may
    hold schemas (the caller may add to ``todo`` meanwhile)."""
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


def marking_patterns(converter: SchemaConverter, target: Json, keyword: str) -> list[str]:
    """The ``patternProperties`` patterns whose schema says ``keyword``, of ``target`` and
    what always applies beside it, at any depth: each marks the properties it matches,
    wherever declared. Found once per schema (``converter.patterns``)."""
    target, _ = converter.resolve(target)
    if not isinstance(target, dict):
        return []
    key = (id(target), keyword)
    if key in converter.patterns:
        return converter.patterns[key][1]
    found = [
        pattern
        for pattern, sub in target.get("patternProperties", {}).items()
        if converter.marked_read_only(sub, keyword)
    ]
    members = converter.always(target)
    if members:  # (kept with it: its id stays its own; a cycle back to it adds nothing)
        converter.patterns[key] = (target, found)
        found += [p for m in members for p in marking_patterns(converter, m, keyword)]
    return found


def matches(pattern: str, name: str) -> bool:
    """Whether ``pattern`` matches ``name`` as a generated server matches it."""
    from mcpgen.runtime.patterns import matcher

    try:
        return matcher(pattern)(name)
    except (re.error, OverflowError, RecursionError):  # as check.schemas.python_regex
        return False


def unrequire(node: dict[str, Json], only: Collection[str]) -> dict[str, Json]:
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
    that say ``keyword`` when all of them do) to ``known`` (id -> schema, whether it does):
    the least fixed point over the graph, so a reference cycle proves nothing."""
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
    """A copy of ``schema`` without the properties ``plan`` leaves out (``writeOnly``;
    ``readOnly`` for a ``Request``); a definition that changes, or refers to one that does,
    is a new one, ``<name><way>`` (the manifest shares definitions by name)."""
    keyword = "writeOnly" if way == "Answer" else "readOnly"

    def visit(node: Json, given: Paths = NONE) -> Json:
        if not isinstance(node, dict):
            return node
        every = union(given, paths(node))  # (a member's, a sibling member's declaration's too)
        only = every[0]
        out = children(
            node,
            lambda sub, key: sub if key == "properties" else visit(sub, below(every, key)),
        )
        if isinstance(node.get("properties"), dict):
            out["properties"] = {
                k: visit(v, below(every, k, 1))
                for k, v in node["properties"].items()
                if k not in only
            }
        if out.get("oneOf") != node.get("oneOf"):  # (cut, they may overlap)
            either = {"anyOf": out.pop("oneOf")}
            out |= {"allOf": [*out.get("allOf", ()), either]} if "anyOf" in out else either
        ref = def_name(out.get("$ref"))
        beside = given != NONE or set(node) - {"$ref", "title"}  # (a bare one's marks are its own)
        mine = restrict(every, holds(defs[ref])) if ref in defs else every  # (ref's names)
        if ref is not None and ref in defs and beside and not within(mine, paths(defs[ref])):
            copy = lift(ref, mine)  # what it names, as a member, without them
            if copy is not None and copy == lift(ref, NONE):  # (none of them is ref's)
                settle(copy, new.get(ref, ref))  # (its members under way: the definition's)
            else:  # (it declares or requires one)
                del out["$ref"]
                member = {"$ref": def_ref(named(ref, copy)) if copy is not None else f"{ref}\0"}
                if copy is None:  # the copy being made (a cycle): its name once it has one
                    making[ref, id(mine)].append(member)
                out, ref = (
                    (out | {"allOf": [*out.get("allOf", ()), member]}) if out else member
                ), None
        out = unrequire(out, only)  # (itself: a member referring to a copy under way)
        return out | {"$ref": def_ref(new[ref])} if ref in new else out

    def paths(node: Json) -> Paths:
        """What a value of ``node`` is sent without: the properties, at any depth, marked by
        ``node`` and what applies beside it (a member's own marks as ``read_only`` counts them).
        A reference cycle adds nothing where it returns to a walk from ``node`` itself."""
        if isinstance(node, dict) and id(node) not in found and id(node) not in rooted:
            rooted[id(node)] = walk(node, {})[0]
        return found.get(id(node)) or rooted.get(id(node), NONE)

    def walk(node: Json, local: dict[int, Paths | None]) -> tuple[Paths, bool]:
        """``paths`` of ``node`` in a walk (``local``: the nodes walked, None while under
        way), whether no cycle was cut below it (then shared: ``found``; else the value would
        depend on where the walk began, the order of ``paths``)."""
        if not isinstance(node, dict) or id(node) in found:
            return found.get(id(node), NONE), True
        if id(node) in local:
            return local[id(node)] or NONE, False
        local[id(node)] = None
        marked: Paths = (frozenset(converter.read_only(node, keyword)), {})
        exact = True
        members = [
            *converter.always(node),
            *(m for k in ("oneOf", "anyOf") for m in node.get(k) or ()),
        ]
        steps = [*node.get("properties", {}).items(), *((STEPS[k], node.get(k)) for k in STEPS)]
        for step, sub in [*((None, m) for m in members), *steps]:
            under, whole = walk(sub, local)
            exact &= whole
            if step is None:
                marked = union(marked, (frozenset(), under[1]))
            elif under != NONE:  # (items, values: ``below``)
                marked = union(marked, (frozenset(), {step: under}))
        local[id(node)] = marked
        if exact:
            found[id(node)] = marked
        return marked, exact

    def union(one: Paths, other: Paths) -> Paths:
        """The paths of both (each pair once: shared trees stay shared)."""
        if other == NONE or one is other:
            return one
        if one == NONE:
            return other
        if (id(one), id(other)) not in unions:
            steps = {**one[1], **{k: union(one[1].get(k, NONE), v) for k, v in other[1].items()}}
            both = (one[0] | other[0], {k: v for k, v in steps.items() if v != NONE})
            unions[id(one), id(other)] = one, other, both  # (kept: their ids stay theirs)
        return unions[id(one), id(other)][2]

    def within(one: Paths, other: Paths) -> bool:
        """Whether each of ``one``'s paths is one of ``other``'s."""
        if one is other or one == NONE:
            return True
        if (id(one), id(other)) not in contained:
            inside = one[0] <= other[0] and all(
                within(v, other[1].get(k, NONE)) for k, v in one[1].items()
            )
            contained[id(one), id(other)] = one, other, inside
        return contained[id(one), id(other)][2]

    def holds(node: Json) -> Paths | None:
        """The properties a value of ``node`` may hold or require, at any depth (None: unknown)."""
        if not isinstance(node, dict) or id(node) in held:
            return held.get(id(node), NONE)
        held[id(node)] = None
        own: dict[str, Json] = node.get("properties", {})
        tree: Paths | None = (frozenset(own) | set(node.get("required", ())), {})
        ref = def_name(node.get("$ref"))
        members = [m for k in ("allOf", "oneOf", "anyOf") for m in node.get(k) or ()]
        for member in [*members, *([defs.get(ref)] if ref is not None else [])]:
            more = holds(member) if member is not None else None
            tree = None if tree is None or more is None else union(tree, more)
        steps: list[tuple[Step, Json]] = [*own.items(), *((STEPS[k], node.get(k)) for k in STEPS)]
        for step, sub in steps:
            more = holds(sub)
            tree = (
                None if tree is None or more is None else union(tree, (frozenset(), {step: more}))
            )
        held[id(node)] = tree
        return tree

    def restrict(one: Paths, known: Paths | None) -> Paths:
        """``one`` without the names ``known`` does not hold: marks that leave a definition's
        copy as it is. Equal results are one object (``lift``'s key)."""
        if one == NONE:
            return one
        if (id(one), id(known)) not in cut:  # (None: all kept, still one object)
            steps = {
                k: restrict(v, known and known[1][k])
                for k, v in one[1].items()
                if known is None or k in known[1]
            }
            names = one[0] if known is None else one[0] & known[0]
            shape = (names, {k: v for k, v in steps.items() if v != NONE})
            key = (shape[0], frozenset((k, id(v)) for k, v in shape[1].items()))
            cut[id(one), id(known)] = one, known, alike.setdefault(key, shape)
        return cut[id(one), id(known)][2]

    def lift(ref: str, only: Paths) -> Json:
        """``ref``'s copy without ``only`` (None: the one being made); a reference inside it
        with other marks (``child: allOf: [Node, {id: readOnly}]``) is copied too, each
        (definition, marks) once."""
        key, under = (ref, id(only)), list(making)
        root[:] = root if under else [ref, only]
        if key in making or key in relative:  # (what is under way depends on where it began)
            relative.update(under)
        elif key not in lifted:  # (each once: diamonds of allOf members)
            making[key] = []
            copy = visit(defs[ref], only)
            lifted[key], selves[id(copy)] = (only, copy), making.pop(key)
        copy = lifted[key][1] if key in lifted else None
        if not making:  # a copy made inside a cycle is made again from another entry
            for done in relative:
                lifted.pop(done, None)
            relative.clear()
        return copy

    def written(paths: Paths) -> str:
        """A digest of ``paths`` (names and steps sorted; each shared tree once)."""
        if id(paths) not in texts:
            steps = sorted((str(k), written(v)) for k, v in paths[1].items())
            texts[id(paths)] = paths, short_hash(json.dumps([sorted(paths[0]), steps]), 12)
        return texts[id(paths)][1]

    def named(ref: str, copy: Json) -> str:
        """A definition for ``copy`` of ``ref`` (its members referring to itself given the
        name); the first pass, which only asks which definitions change, names none."""
        if id(copy) not in names:
            mine = [id(m) for m in selves.get(id(copy), ())]
            held = [n for n in schema_objects([copy]) if "\0" in str(n.get("$ref"))]
            # (what it refers to under way is named later, by what that lift makes)
            under = [root[0], written(root[1])] if any(id(n) not in mine for n in held) else []
            digest = short_hash(json.dumps([copy, *under], sort_keys=True), 12)
            src, path = converter.origin[ref]
            key = (src, (*path, way.lower(), digest))
            name = converter.naming.name_of(key, f"{ref}{way}{digest[:6]}") if naming else digest
            settle(copy, name)
            names[id(copy)] = copy, name
            if naming and name not in converter.defs:
                converter.defs[name], converter.deps[name] = copy, frozenset(def_refs(copy))
                converter.origin[name] = converter.origin[ref]
        return names[id(copy)][1]

    def settle(copy: Json, name: str) -> None:
        """``copy``'s members referring to it while it was made given ``name``."""
        for member in selves.pop(id(copy), ()):
            member["$ref"] = def_ref(name)

    defs, new, lifted = schema.get("$defs", {}), dict[str, str](), dict[Any, Json]()
    making: dict[tuple[str, int], list[dict[str, str]]] = {}  # lifts under way: self-references
    root: list[Any] = []  # the first of them: its definition and marks
    texts: dict[int, tuple[Paths, str]] = {}  # ``written``'s
    relative: set[tuple[str, int]] = set()  # lifts made inside a cycle under way
    names: dict[int, tuple[Json, str]] = {}  # each copy's (by id: kept with it)
    selves: dict[int, list[dict[str, str]]] = {}  # each copy's members referring to itself
    found: dict[int, Paths] = {}
    rooted: dict[int, Paths] = {}  # (``paths`` of a node in a cycle)
    unions: dict[tuple[int, int], tuple[Paths, Paths, Paths]] = {}
    contained: dict[tuple[int, int], tuple[Paths, Paths, bool]] = {}
    held: dict[int, Paths | None] = {}
    cut: dict[tuple[int, int], tuple[Paths, Paths | None, Paths]] = {}
    alike: dict[Any, Paths] = {(frozenset(), frozenset()): NONE}
    naming: list[bool] = []  # (false: the first pass)
    changes = cache(lambda name: visit(defs[name]) != defs[name])  # (first pass: each once)
    new.update({n: n for n in plan.get("$defs", ()) if n in defs and changes(n)})
    # a copy is named by its definition alone, whoever makes it first: it refers to the copy
    # of each definition it reaches that changes, one this plan leaves out of or not
    while grown := {
        *(n for n in schemas.closure(new, converter.deps) & defs.keys() - new.keys() if changes(n)),
        *(n for n in defs if n not in new and converter.deps[n] & set(new)),
    }:
        new.update({n: n for n in sorted(grown)})  # changes, or refers to one that does
    naming.append(True)
    for memo in (lifted, names, selves):
        memo.clear()  # (made with the new names found so far)
    for name in new:
        src, path = converter.origin[name]
        new[name] = converter.naming.name_of((src, (*path, way.lower())), f"{name}{way}")
    # each visited even where another answer made it already: the copies its visit lifts (a
    # reference cycle entered there) are those ``top``'s then reuses, whichever came first
    for name, renamed in new.items():
        copy = visit(defs[name])
        if renamed not in converter.defs:  # (another answer's already)
            converter.defs[renamed], converter.deps[renamed] = copy, frozenset(def_refs(copy))
            converter.origin[renamed] = converter.origin[name]
    top = {k: v for k, v in schema.items() if k != "$defs"}  # a request's: its arguments stay
    out = visit(top) if way == "Answer" else children(top, lambda sub, _: visit(sub))
    for copy, name in names.values():  # (a member of a copy, once under way, named since)
        if converter.defs.get(name) is copy:
            converter.deps[name] = frozenset(def_refs(copy))
    converter.add_defs(out, def_refs(out))  # (what a lifted reference named may be unused)
    return out
