"""The check and the model share their walks of each schema's ``$ref`` strings
(``schemas.walks_shared``, around both in ``pipeline``): sound only because nothing writes
the document's data between them. These tests load every manifest and OpenAPI fixture of
the repository (1) with the data frozen when the check starts: any write raises; (2) with
every shared walk compared to a fresh walk of the same object at the moment it is used."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, NoReturn

import pytest

from mcpgen import pipeline
from mcpgen.check import schemas

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(
    [
        *(ROOT / "manifests").glob("*.yaml"),
        *(ROOT / "manifests" / "openapi").glob("*.yaml"),
        *(ROOT / "tests" / "fixtures" / "openapi").glob("*.yaml"),
        *(ROOT / "tests" / "fixtures" / "openapi-real").glob("*.json"),
        *(ROOT / "tests" / "fixtures" / "openapi-e2e").glob("*.yaml"),
    ]
)

PARTS = ("broken.yaml", "common.yaml")  # not manifests: a broken one, one included by others


def _refuse(*_: Any, **__: Any) -> NoReturn:
    raise AssertionError("the document's data was written between the check and the model")


class FrozenDict(dict[Any, Any]):
    __setitem__ = __delitem__ = __ior__ = _refuse
    pop = popitem = setdefault = update = clear = _refuse

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[Any, Any]:
        return copy.deepcopy(dict(self), memo)


class FrozenList(list[Any]):
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return copy.deepcopy(list(self), memo)


def freeze(value: Any, seen: dict[int, Any]) -> Any:
    """``value`` rebuilt of frozen containers (an object used twice stays one object)."""
    if id(value) in seen:
        return seen[id(value)]
    if isinstance(value, dict):
        out: Any = FrozenDict((k, freeze(v, seen)) for k, v in value.items())
    elif isinstance(value, list):
        out = FrozenList(freeze(v, seen) for v in value)
    else:
        return value
    seen[id(value)] = out
    return out


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_nothing_writes_the_data_between_the_walks(
    source: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    check = pipeline.check

    def frozen_check(doc: Any) -> Any:
        doc.data = freeze(doc.data, {})
        return check(doc)

    plain = pipeline.load_manifest(source)
    monkeypatch.setattr(pipeline, "check", frozen_check)
    frozen = pipeline.load_manifest(source)
    assert [str(p) for p in frozen.problems.items] == [str(p) for p in plain.problems.items]
    assert frozen.manifest == plain.manifest
    assert plain.manifest is not None or source.name in PARTS


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_each_shared_walk_is_what_a_fresh_walk_finds(
    source: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared, used = schemas.ref_strings, [0]

    def compared(schema: Any) -> frozenset[str]:
        found = shared(schema)
        assert found == frozenset(schemas._ref_values(schema))
        used[0] += 1
        return found

    monkeypatch.setattr(schemas, "ref_strings", compared)
    assert pipeline.load_manifest(source).problems is not None
    assert used[0] > 0 or source.suffix == ".yaml"


def test_walks_are_shared_within_the_scope_only() -> None:
    one = {"properties": {"a": {"$ref": "#/$defs/A"}}}
    other = {"items": {"$ref": "#/$defs/B"}}
    with schemas.walks_shared():
        first = schemas.ref_strings(one)
        assert schemas.ref_strings(one) is first  # walked once
        assert schemas.ref_strings(other) == {"#/$defs/B"}  # each object its own entry
        assert first == {"#/$defs/A"}
    one["properties"]["a"]["$ref"] = "#/$defs/C"  # outside: every call walks
    assert schemas.ref_strings(one) == {"#/$defs/C"}
