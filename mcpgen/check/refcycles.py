"""``$defs`` that refer back to themselves without describing a value (``A: {$ref: B}``,
``B: {$ref: A}``): a validator recurses for ever and pydantic refuses the model, so
validation refuses them. A recursion under properties or items is a tree, and fine."""

from __future__ import annotations

from collections.abc import Iterator

from mcpgen.check.schemas import Json, def_name
from mcpgen.load import JsonPath


def _in_place_refs(schema: Json) -> Iterator[tuple[JsonPath, str]]:
    """The ``#/$defs/Name`` references that apply to the very value ``schema`` does (itself
    or through allOf, anyOf, oneOf, not, if, then, else), with their paths."""
    stack: list[tuple[Json, JsonPath]] = [(schema, ())]
    while stack:
        node, path = stack.pop()
        if not isinstance(node, dict):
            continue
        name = def_name(node.get("$ref"))
        if name is not None:
            yield (*path, "$ref"), name
        for key in ("allOf", "anyOf", "oneOf"):
            if isinstance(node.get(key), list):
                stack.extend((v, (*path, key, i)) for i, v in enumerate(node[key]))
        stack.extend(
            (node[key], (*path, key)) for key in ("not", "if", "then", "else") if key in node
        )


def unguarded_cycles(shared: dict[str, Json]) -> Iterator[tuple[str, JsonPath, str]]:
    """(definition, path of a ``$ref`` in it, the definition it names) for each reference
    that leads back to its own definition through in-place references alone: such a
    definition never reaches a value (a recursion under properties or items does)."""
    edges = {name: list(_in_place_refs(schema)) for name, schema in shared.items()}
    for name in sorted(edges):
        for path, target in edges[name]:
            seen: set[str] = set()
            todo = [target]
            while todo:
                current = todo.pop()
                if current == name:
                    yield name, path, target
                    break
                if current not in seen and current in edges:
                    seen.add(current)
                    todo.extend(t for _, t in edges[current])
            else:
                continue
            break  # one problem per definition
