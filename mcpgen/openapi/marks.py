"""Whether schemas say ``readOnly`` through what applies beside them (the definition a
``$ref`` names, composition members), decided for the whole graph they form at once: the
least fixed point, so a reference cycle proves nothing and a definition many paths lead to
is looked at once (one by path was exponential: a chain of definitions each with two
``allOf`` references to the next ones took seconds at 24 links, doubling every ~1.2)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Json = Any
Groups = Callable[[dict[str, Json]], list[list[Json]]]


def decide(start: dict[str, Json], groups: Groups, known: dict[int, tuple[Json, bool]]) -> None:
    """Add ``start`` and each schema reachable from it through ``groups`` (lists of members
    that say it when all of them do) to ``known`` (id -> the schema, whether it says it)."""
    nodes: dict[int, tuple[dict[str, Json], list[list[dict[str, Json]]]]] = {}
    todo = [start]
    while todo:
        node = todo.pop()
        if id(node) in nodes or id(node) in known:
            continue
        whole = [g for g in groups(node) if all(isinstance(m, dict) for m in g)]
        nodes[id(node)] = node, whole
        todo += [m for g in whole for m in g]
    value = {key: node.get("readOnly") is True for key, (node, _) in nodes.items()}

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
