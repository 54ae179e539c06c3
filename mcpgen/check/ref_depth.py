"""Chains of local ``$ref``. References that lead back to themselves without describing a
value (``A: {$ref: B}``, ``B: {allOf: [{$ref: A}]}``): a validator recurses for ever and
pydantic refuses the model, so validation refuses them (a recursion under properties or
items is a tree, and fine). And where a document that ran a stage out of stack nests deepest
once its references are followed: a chain of definitions each referring to the next
(``Def0 = allOf[$ref Def1, ...]``, ...) is as deep as the schemas inlined into one, deeper
than the generator's walks may go. Measured without recursion, and only when a walk failed
(``pipeline``): measuring every document up front cost 0.22 s of GitHub's 1.4 s rebuild."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from mcpgen.check.schemas import Json, located, pointer, pointer_target, schema_nodes
from mcpgen.load import Document, JsonPath
from mcpgen.problems import Level, Problem, Problems

Resolve = Callable[[str], Json]  # a local $ref's target (None when it names nothing)


def _target(data: Json, node: dict[str, Json]) -> tuple[JsonPath, Json] | None:
    ref = node.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#"):
        return None
    found = pointer_target(data, ref)
    return found if found is not None and isinstance(found[1], dict | list) else None


def deep_references(doc: Document) -> Problems:
    """An error for the referenced definition that nests deepest, counting through
    references (a reference back into its own chain, a recursive type, counts nothing);
    none when the document refers to nothing."""
    data = doc.data
    height: dict[int, int] = {}  # id of a container -> levels at and below it
    targets: dict[int, JsonPath] = {}  # id of a referenced container -> its path
    active: set[int] = set()
    stack: list[tuple[Json, bool]] = [(data, False)] if isinstance(data, dict | list) else []
    while stack:
        node, done = stack.pop()
        key = id(node)
        if not done:
            if key in height or key in active:
                continue
            active.add(key)
            stack.append((node, True))
            kids = list(node.values()) if isinstance(node, dict) else node
            stack.extend((kid, False) for kid in kids if isinstance(kid, dict | list))
            if isinstance(node, dict) and (found := _target(data, node)) is not None:
                targets[id(found[1])] = found[0]
                stack.append((found[1], False))
            continue
        active.discard(key)
        kids = list(node.values()) if isinstance(node, dict) else list(node)
        if isinstance(node, dict) and (found := _target(data, node)) is not None:
            kids.append(found[1])
        height[key] = 1 + max(
            (height.get(id(k), 0) for k in kids if isinstance(k, dict | list)), default=0
        )
    problems = Problems()
    deep = [(height[key], path) for key, path in targets.items()]
    if deep:
        levels, path = max(deep, key=lambda item: item[0])
        message = (
            f"nests {levels} levels deep once its $ref are followed (a chain of definitions "
            "each referring to the next), too deep for mcpgen to walk: shorten the chain"
        )
        problems.add(Problem(Level.ERROR, doc.locate(path), pointer(path), message, path))
    return problems


def _in_place(schema: Json) -> Iterator[dict[str, Json]]:
    """The ``$ref`` objects that apply to the very value ``schema`` does: itself, or
    through allOf, anyOf, oneOf, not, if, then, else."""
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


def _leads_back(ref: dict[str, Json], resolve: Resolve) -> bool:
    seen: set[int] = set()
    todo = [resolve(ref["$ref"])]
    while todo:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        for found in _in_place(current):
            if found is ref:
                return True
            todo.append(resolve(found["$ref"]))
    return False


def unguarded_cycles(schema: Json, resolve: Resolve) -> Iterator[tuple[JsonPath, str]]:
    """(path, reference) of each ``$ref`` in ``schema`` that its own target leads back to
    through in-place references alone."""
    for node, trail in schema_nodes(schema, everything=True):
        if isinstance(node.get("$ref"), str) and _leads_back(node, resolve):
            yield (*located(trail), "$ref"), node["$ref"]
