"""Review r11 of the kept import (branch n7): rebuilds through the cache that differ from a
fresh import. Each test fails on n7. Findings 1 and 2 (derived copies made in the first
operation's context) pass with o1's one_way change (main, 6470339c); 3 to 5 are fixed by o2."""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from mcpgen.check import formats
from mcpgen.load import load_text
from mcpgen.openapi import import_openapi, kept, keywords
from mcpgen.openapi.schema import SchemaConverter
from mcpgen.problems import Level
from tests.test_openapi_kept import imported
from tests.test_openapi_paths_order import ITEMS, TREES, ref, spec


def answer(schema: Any) -> dict[str, Any]:
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


NONE = {"204": {"description": "none"}}


# Cred.token is writeOnly; Tree (allOf List) says node: a list of Cred; List says node is
# writeOnly as a whole. Through List, Tree's answer copy never reaches Cred (so keeps it);
# through Page, TreeAnswer must refer to CredAnswer (token left out). (TREES: the
# paths-order test's.)


def trees(b: dict[str, Any], c: dict[str, Any]) -> dict[str, Any]:
    paths = {
        "/b": {"get": {"operationId": "b", "responses": b}},
        "/c": {"get": {"operationId": "c", "responses": c}},
    }
    return spec(paths, TREES)


def test_a_derived_answer_copy_from_an_earlier_build_is_not_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both operations changed (both built again), yet b's answer refers to ``Cred`` with its
    writeOnly ``token``: ``TreeAnswer`` was made by the build before, for c, and restored."""
    monkeypatch.setenv("MCPGEN_CACHE_DIR", str(tmp_path / "cache"))
    imported(trees(NONE, answer(ref("List"))), tmp_path, keep=True)
    after = trees(answer(ref("Page")), NONE)
    fresh = imported(after, tmp_path, keep=False)
    assert "CredAnswer" in fresh[2]  # (the token left out of the answer)
    assert imported(after, tmp_path, keep=True) == fresh


# Base.id is readOnly; Item redeclares id (allOf List); List's items say child (an Item) is
# readOnly. ItemRequest is made once, by whichever operation needs it first. (ITEMS: the
# paths-order test's.)


def items(with_body: bool) -> dict[str, Any]:
    body = {"content": {"application/json": {"schema": ref("List")}}}
    paths = {
        "/a": {
            "post": {
                "operationId": "a",
                **({"requestBody": body} if with_body else {}),
                "responses": NONE,
            }
        },
        "/c": {
            "get": {
                "operationId": "c",
                "parameters": [{"name": "q", "in": "query", "schema": ref("Item")}],
                "responses": NONE,
            }
        },
    }
    return spec(paths, ITEMS)


def test_a_kept_operation_s_request_copy_is_a_fresh_build_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """c is kept (unchanged); a now sends a List first: a fresh import's ItemRequest refers to
    Base (made for a), the kept c's to BaseRequest (made for c alone)."""
    monkeypatch.setenv("MCPGEN_CACHE_DIR", str(tmp_path / "cache"))
    imported(items(False), tmp_path, keep=True)
    fresh = imported(items(True), tmp_path, keep=False)
    assert imported(items(True), tmp_path, keep=True) == fresh


def test_the_request_copy_does_not_depend_on_the_order_of_paths_in_a_fresh_import(
    tmp_path: Path,
) -> None:
    """The cause of the one above, on main too: the same document, paths in the other order,
    another input schema for c (a fresh import, no cache)."""
    one = items(True)
    other = {**one, "paths": dict(reversed(list(one["paths"].items())))}
    first, second = imported(one, tmp_path, keep=False), imported(other, tmp_path, keep=False)
    (c1,) = [t for t in first[0] if t["name"] == "c"]
    (c2,) = [t for t in second[0] if t["name"] == "c"]
    assert c1["input"]["$defs"] == c2["input"]["$defs"]


# -- r11's findings 3 to 5 (their repro scripts: bench/r11_kept/repro4.py to repro6.py) ----


def imported_text(text: str, name: str, folder: Path, keep: bool) -> Any:
    """``imported`` of a document as written (escapes, YAML)."""
    (folder / name).write_text(text)
    doc = load_text(text, name, folder, json_first=name.endswith(".json"))
    result = import_openapi(doc, {}, keep=keep)
    return result.tools, result.defs, [(p.level, p.location, p.message) for p in result.problems]


PETS = """{"openapi": "3.1.0", "info": {"title": "T", "version": "1"},
 "servers": [{"url": "https://x.example"}], "paths": {"/pets": {"get": {"operationId": "pets",
 "responses": {"200": {"description": "ok",
 "content": {"application/json": {"schema": {%s: "other.json#/Pet"}}}}}}}}}"""
PETS_YAML = """openapi: 3.1.0
info: {title: T, version: "1"}
servers: [{url: "https://x.example"}]
paths:
  /pets:
    get:
      operationId: pets
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                %s other.json#/Pet
"""


@pytest.mark.parametrize(
    ("text", "name"),
    [
        (PETS % '"\\u0024ref"', "api.json"),  # r11's: the text check reads no `$ref` there
        (PETS % '"$\\u0072ef"', "api.json"),
        (PETS_YAML % '"\\x24ref":', "api.yaml"),
        (PETS_YAML % "? $ref  # (a comment)\n                :", "api.yaml"),
    ],
)
def test_a_reference_to_another_file_however_spelled_is_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, name: str
) -> None:
    """The other file changes between builds: the rebuild sees it, as a fresh build does."""
    for n, (prop, kind) in enumerate([("name", "string"), ("age", "integer")]):
        pet = {"properties": {prop: {"type": kind}}}
        (tmp_path / "other.json").write_text(json.dumps({"Pet": pet}))
        monkeypatch.setenv("MCPGEN_CACHE_DIR", str(tmp_path / f"empty{n}"))
        fresh = imported_text(text, name, tmp_path, keep=True)
        assert prop in json.dumps(fresh[0])  # (the other file's Pet)
        monkeypatch.setenv("MCPGEN_CACHE_DIR", str(tmp_path / "cache"))
        assert imported_text(text, name, tmp_path, keep=True) == fresh


class _Lenient:
    """A pydantic that takes any date (one whose verdict on a default differs)."""

    def validate_python(self, value: Any) -> Any:
        return value


class _Installed:
    """That pydantic's installed metadata."""

    def read_text(self, name: str) -> str:
        return "Metadata-Version: 2.4\nName: pydantic\nVersion: 99.0\n"


@pytest.fixture
def fresh_verdicts() -> Iterator[None]:
    """The verdicts a process keeps, forgotten before and after (as in a new process)."""
    caches = (formats._verdicts, keywords._fits, kept.code_digest)
    for cached in caches:
        cached.cache_clear()
    yield
    for cached in caches:
        cached.cache_clear()


def test_another_pydantic_is_another_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_verdicts: None
) -> None:
    """Its verdicts decide which defaults are left out (warned): pydantic's version (and
    every library's whose answers make the import's output) is in the kept file's key."""
    monkeypatch.setenv("MCPGEN_CACHE_DIR", str(tmp_path / "cache"))
    day = {"type": "string", "format": "date", "default": "2024-1-5"}
    q = [{"name": "since", "in": "query", "schema": ref("Day")}]
    data = spec({"/a": {"get": {"operationId": "a", "parameters": q, "responses": NONE}}}, {})
    data["components"]["schemas"]["Day"] = day
    before = imported(data, tmp_path, keep=True)
    assert any("'default'" in p[3] for p in before[4])
    version, installed = metadata.version, metadata.distribution
    monkeypatch.setattr(formats, "_adapter", lambda name: _Lenient())
    monkeypatch.setattr(metadata, "version", lambda n: "99.0" if n == "pydantic" else version(n))
    other = {"pydantic": _Installed()}
    monkeypatch.setattr(metadata, "distribution", lambda n: other.get(n) or installed(n))
    for cached in (formats._verdicts, keywords._fits, kept.code_digest):
        cached.cache_clear()  # (another process, with the other pydantic)
    fresh = imported(data, tmp_path, keep=False)
    assert not any("'default'" in p[3] for p in fresh[4])
    assert imported(data, tmp_path, keep=True) == fresh


def chain(a: Any, b: Any) -> dict[str, Any]:
    """a answers ``a``, b ``b``: Warn has a default warned, C0 starts a chain of 160 allOf
    bases (refused past 150: the import stops there)."""
    schemas: dict[str, Any] = {
        "Warn": {"type": "object", "properties": {"n": {"type": "integer", "default": "x"}}}
    }
    for i in range(160):
        schemas[f"C{i}"] = {"allOf": [ref(f"C{i + 1}")]} if i < 159 else {"type": "object"}
    paths = {
        "/a": {"get": {"operationId": "a", "responses": answer(a)}},
        "/b": {"get": {"operationId": "b", "responses": answer(b)}},
    }
    return spec(paths, schemas)


WARN_AND_C0 = {"type": "object", "properties": {"w": ref("Warn"), "c": ref("C0")}}


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (ref("Warn"), ref("C0")),  # Warn met by a, kept
        ({"type": "string"}, WARN_AND_C0),  # Warn met by b, the operation that stops it
    ],
)
def test_an_import_that_stops_reports_what_its_kept_definitions_did(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, a: Any, b: Any
) -> None:
    """Warn converted and kept by the build before (a answered it); b now stops the import:
    Warn's warning (reported by the kept definition when the kept import closes) is still
    there, as in a fresh build."""
    monkeypatch.setenv("MCPGEN_CACHE_DIR", str(tmp_path / "cache"))
    imported(chain(ref("Warn"), {"type": "string"}), tmp_path, keep=True)
    fresh = imported(chain(a, b), tmp_path, keep=False)
    assert any("'default'" in p[3] for p in fresh[4])
    assert any(p[0] == Level.ERROR for p in fresh[4])
    assert imported(chain(a, b), tmp_path, keep=True) == fresh


def test_an_import_that_stops_keeps_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopped inside a definition's conversion (a RecursionError, as from a deep document),
    the converter is half done: B named, never converted. Kept, the next build would take
    B as converted and find no body for it."""
    monkeypatch.setenv("MCPGEN_CACHE_DIR", str(tmp_path / "cache"))
    to_b = {"type": "object", "properties": {"x": ref("B")}}
    paths = {
        "/a": {"get": {"operationId": "a", "responses": answer(ref("A"))}},
        "/b": {"get": {"operationId": "b", "responses": answer(to_b)}},
    }
    data = spec(paths, {"A": {"type": "object"}, "B": {"type": "object"}})
    real = SchemaConverter._schema

    def deep(self: SchemaConverter, src: int, path: Any, node: Any, deps: set[str]) -> Any:
        if path == ("components", "schemas", "B"):
            raise RecursionError
        return real(self, src, path, node, deps)

    monkeypatch.setattr(SchemaConverter, "_schema", deep)
    stopped = imported(data, tmp_path, keep=True)
    assert stopped[0] == [] and stopped[4][0][0] == Level.ERROR  # (blamed on B's depth)
    monkeypatch.setattr(SchemaConverter, "_schema", real)
    fresh = imported(data, tmp_path, keep=False)
    assert "B" in fresh[2]
    assert imported(data, tmp_path, keep=True) == fresh


# Base and Node refer to each other (Node is allOf Base), Secret to itself through a property
# of the same name; its key is writeOnly (bench/r11_kept/residual/seed502156.json, shrunk)
CYCLE = {
    "Base": {"properties": {"up": ref("Node")}},
    "Node": {"allOf": [ref("Base"), {"properties": {"up": {"allOf": [ref("Secret")]}}}]},
    "Secret": {
        "properties": {"up": {"additionalProperties": ref("Secret")}, "key": {"writeOnly": True}}
    },
}


def test_a_rebuilt_operation_entering_a_cycle_is_a_fresh_build_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """a changed, b kept: a fresh import makes the cycle's copies for a; the rebuild had them
    (kept from the build before), skipped NodeAnswer's visit and made a's again from another
    entry into the cycle: a longer chain of equal copies under other names (o2: it differed)."""
    monkeypatch.setenv("MCPGEN_CACHE_DIR", str(tmp_path / "cache"))
    paths = {
        p: {"get": {"operationId": p[1:], "responses": answer(ref("Node"))}} for p in ("/a", "/b")
    }
    imported(spec(paths, CYCLE), tmp_path, keep=True)
    paths["/a"]["get"]["description"] = "changed"
    fresh = imported(spec(paths, CYCLE), tmp_path, keep=False)
    assert imported(spec(paths, CYCLE), tmp_path, keep=True) == fresh
