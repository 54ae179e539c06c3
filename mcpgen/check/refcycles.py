"""References that lead back to themselves without describing a value (``A: {$ref: B}``,
``B: {allOf: [{$ref: A}]}``): a validator recurses for ever and pydantic refuses the model,
so validation refuses them. A recursion under properties or items is a tree, and fine."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from mcpgen.check.schemas import Json, located, schema_nodes
from mcpgen.load import JsonPath

Resolve = Callable[[str], Json]  # a local $ref's target (None when it names nothing)


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
