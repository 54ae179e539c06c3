"""Chains of local ``$ref``: those leading back to themselves without describing a value
(``A: {$ref: B}``, ``B: {allOf: [{$ref: A}]}``); inheritance longer than ``MAX_BASES``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from mcpgen.check.schemas import Json, located, schema_nodes
from mcpgen.load import JsonPath

Resolve = Callable[[str], Json]  # a local $ref's target (None when it names nothing)
# the model generator's time grows with the cube of an inheritance chain (150: 7 s, 400: 3 min)
MAX_BASES = 150
Settled = dict[int, tuple[Json, bool]]  # id of a $ref object -> it, whether it leads back
Depths = dict[int, tuple[Json, int]]  # id of a schema -> it (kept alive), its links


def _in_place(schema: Json) -> Iterator[dict[str, Json]]:
    """The ``$ref`` objects that apply to the value ``schema`` does (through allOf, not...)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            continue
        if isinstance(node.get("$ref"), str):
            yield node
        for key in ("allOf", "anyOf", "oneOf"):
            if isinstance(node.get(key), list):
                stack.extend(node[key])
        stack.extend(node[key] for key in ("not", "if", "then", "else") if key in node)


def _settle(start: dict[str, Json], resolve: Resolve, known: Settled) -> None:
    """Add ``start`` and each ``$ref`` object it leads to in place to ``known``, with whether
    it leads back to itself (Tarjan's strongly connected components, without recursion)."""

    def after(ref: dict[str, Json]) -> list[dict[str, Json]]:
        return list(_in_place(resolve(ref["$ref"])))

    index: dict[int, int] = {}
    low: dict[int, int] = {}
    path: list[dict[str, Json]] = []  # visited, not yet settled
    work: list[tuple[dict[str, Json], list[dict[str, Json]]]] = []

    def visit(node: dict[str, Json]) -> None:
        index[id(node)] = low[id(node)] = len(index)
        path.append(node)
        work.append((node, [r for r in after(node) if id(r) not in known]))

    visit(start)
    while work:
        node, todo = work[-1]
        if todo:
            found = todo.pop()
            if id(found) not in index:
                visit(found)
            elif id(found) not in known:  # on the path: a cycle through it
                low[id(node)] = min(low[id(node)], index[id(found)])
            continue
        work.pop()
        if work:
            parent = work[-1][0]
            low[id(parent)] = min(low[id(parent)], low[id(node)])
        if low[id(node)] == index[id(node)]:  # node and the ones after it: a component
            group = [path.pop()]
            while group[-1] is not node:
                group.append(path.pop())
            cyclic = len(group) > 1 or any(r is node for r in after(node))
            known.update({id(r): (r, cyclic) for r in group})


def unguarded_cycles(
    schema: Json, resolve: Resolve, known: Settled
) -> Iterator[tuple[JsonPath, str]]:
    """(path, reference) of each ``$ref`` in ``schema`` its target leads back to in place
    (``known``: what earlier calls with the same ``resolve`` settled)."""
    for node, trail in schema_nodes(schema, everything=True):
        if isinstance(node.get("$ref"), str):
            if id(node) not in known:
                _settle(node, resolve, known)
            if known[id(node)][1]:
                yield (*located(trail), "$ref"), node["$ref"]


def _bases(node: dict[str, Json], resolve: Resolve) -> list[tuple[Json, int]]:
    """(target, links) of what ``node`` inherits from (0 links: a bare ``$ref``, an alias)."""
    found: list[tuple[Json, int]] = []
    stack: list[tuple[Json, bool]] = [(node, True)]
    while stack:
        current, top = stack.pop()
        if not isinstance(current, dict):
            continue
        if isinstance(current.get("$ref"), str):
            bare = top and not set(current) - {"$ref", "title", "description"}
            found.append((resolve(current["$ref"]), 0 if bare else 1))
        members = current.get("allOf")
        stack.extend((m, False) for m in (members if isinstance(members, list) else ()))
    return found


def long_inheritance(
    roots: Iterable[tuple[JsonPath, Json, Resolve]],
    depth: Depths | None = None,
    inside: bool = True,
) -> Iterator[tuple[JsonPath, str]]:
    """(path, message) for the schema of ``roots`` with the longest chain of bases over
    ``MAX_BASES``; ``depth``: earlier calls' measures; not ``inside``: the roots alone."""
    depth = {} if depth is None else depth
    deepest: tuple[int, JsonPath] = (MAX_BASES, ())
    for where, schema, resolve in roots:
        for node, trail in schema_nodes(schema) if inside else [(schema, (None,))]:
            if "allOf" not in node and "$ref" not in node:
                continue  # (inherits nothing)
            stack, active = [(node, False)], set[int]()
            while stack:
                current, done = stack.pop()
                if id(current) in depth or (not done and id(current) in active):
                    continue
                bases = [(t, n) for t, n in _bases(current, resolve) if isinstance(t, dict)]
                if done:
                    active.discard(id(current))
                    links = [n + depth[id(t)][1] for t, n in bases if id(t) in depth]
                    depth[id(current)] = current, max(links, default=0)
                else:
                    active.add(id(current))
                    stack += [(current, True), *((t, False) for t, _ in bases)]
            if depth[id(node)][1] > deepest[0]:
                deepest = depth[id(node)][1], (*where, *located(trail))
    if deepest[0] > MAX_BASES:
        yield deepest[1], (
            f"inherits through a chain of {deepest[0]} definitions (allOf, or a $ref beside "
            f"other keywords), more than the {MAX_BASES} the model generator builds in "
            "reasonable time (its time grows with the cube of the length): shorten the chain"
        )
