"""The OpenAPI import kept per operation in the build cache (``openapi.kept``): a rebuild
imports again only the operations that changed, and its result is a fresh import's."""

from __future__ import annotations

import copy
import json
import marshal
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpgen.load import load_text
from mcpgen.openapi import import_openapi
from mcpgen.openapi import importer as importer_module

PET = {"$ref": "#/components/schemas/Pet"}
TAG = {"$ref": "#/components/schemas/Tag"}


def ok(schema: Any) -> dict[str, Any]:
    return {"description": "ok", "content": {"application/json": {"schema": schema}}}


SPEC: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "Pets", "version": "1"},
    "servers": [{"url": "https://pets.example"}],
    "paths": {
        "/pets": {
            "get": {"operationId": "listPets", "description": "all", "responses": {"200": ok(PET)}},
            "post": {
                "operationId": "addPet",
                "requestBody": {"required": True, "content": {"application/json": {"schema": PET}}},
                "responses": {"201": ok(PET)},
            },
        },
        "/tags": {"get": {"operationId": "listTags", "responses": {"200": ok(TAG)}}},
    },
    "components": {
        "schemas": {
            "Pet": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "id": {"type": "integer", "readOnly": True},
                },
            },
            # only listTags meets Tag; its default is left out (warned, where the Tag is)
            "Tag": {"type": "object", "properties": {"label": {"type": "string", "default": 5}}},
        }
    },
}


def imported(data: Any, folder: Path, keep: bool) -> Any:
    doc = load_text(json.dumps(data, indent=1), "api.json", folder, json_first=True)
    result = import_openapi(doc, {}, keep=keep)
    return (
        result.tools,
        [asdict(o) for o in result.operations],
        result.defs,
        result.def_origins,
        [(p.level, p.location, p.field, p.message) for p in result.problems],
    )


@pytest.fixture
def builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The operations built (not taken from the cache), by URL and method."""
    monkeypatch.setenv("MCPGEN_CACHE_DIR", str(tmp_path / "cache"))
    built: list[str] = []
    real = importer_module._Importer.build

    def counted(self: Any, cand: Any, name: str) -> Any:
        built.append(f"{cand.method} {cand.url}")
        return real(self, cand, name)

    monkeypatch.setattr(importer_module._Importer, "build", counted)
    return built


def test_a_rebuild_builds_only_the_operation_changed(tmp_path: Path, builds: list[str]) -> None:
    fresh = imported(SPEC, tmp_path, keep=False)
    assert any("'default'" in p[3] for p in fresh[4])  # (Tag's, reported by its conversion)
    assert imported(SPEC, tmp_path, keep=True) == fresh
    builds.clear()
    assert imported(SPEC, tmp_path, keep=True) == fresh  # all kept: the same problems too
    assert builds == []
    touched = copy.deepcopy(SPEC)
    touched["paths"]["/tags"]["get"]["description"] = "the tags"
    fresh = imported(touched, tmp_path, keep=False)
    builds.clear()
    # listTags built again, its definitions already converted: Tag's warning still reported
    assert imported(touched, tmp_path, keep=True) == fresh
    assert builds == ["get /tags"]


def test_a_definition_no_longer_met_reports_nothing(tmp_path: Path, builds: list[str]) -> None:
    imported(SPEC, tmp_path, keep=True)
    changed = copy.deepcopy(SPEC)
    changed["paths"]["/tags"]["get"]["responses"] = {"200": ok({"type": "object"})}
    fresh = imported(changed, tmp_path, keep=False)
    assert not any("'default'" in p[3] for p in fresh[4])
    assert imported(changed, tmp_path, keep=True) == fresh


def test_a_component_changed_is_a_fresh_import(tmp_path: Path, builds: list[str]) -> None:
    """The operations did not change, a component they use did: none is taken as it was."""
    imported(SPEC, tmp_path, keep=True)
    changed = copy.deepcopy(SPEC)
    changed["components"]["schemas"]["Pet"]["properties"]["age"] = {"type": "integer"}
    fresh = imported(changed, tmp_path, keep=False)
    assert "age" in json.dumps(fresh[0])
    builds.clear()
    assert imported(changed, tmp_path, keep=True) == fresh
    assert len(builds) == 3


def test_a_damaged_cache_is_built_again(tmp_path: Path, builds: list[str]) -> None:
    fresh = imported(SPEC, tmp_path, keep=False)
    imported(SPEC, tmp_path, keep=True)
    (kept,) = (tmp_path / "cache").glob("openapi-*.marshal")
    kept.write_bytes(kept.read_bytes()[:100])
    assert imported(SPEC, tmp_path, keep=True) == fresh


@pytest.mark.parametrize(
    "pack", [(1, 2), {"a": 1}, ("0" * 40, *[{}] * 7, {"k": (1,)}), [None] * 9, b"", 3.5]
)
def test_a_file_of_another_shape_is_built_again(
    tmp_path: Path, builds: list[str], pack: Any
) -> None:
    """Whatever ``marshal`` reads back, a file not of this code's shape is a miss."""
    fresh = imported(SPEC, tmp_path, keep=False)
    imported(SPEC, tmp_path, keep=True)
    (kept,) = (tmp_path / "cache").glob("openapi-*.marshal")
    base, *parts = marshal.loads(kept.read_bytes())
    kept.write_bytes(marshal.dumps((base, *parts[:7], {k: (1,) for k in parts[7]})))
    assert imported(SPEC, tmp_path, keep=True) == fresh  # (its entries damaged)
    kept.write_bytes(marshal.dumps(pack))
    assert imported(SPEC, tmp_path, keep=True) == fresh


def test_a_reference_into_paths_is_not_kept(tmp_path: Path, builds: list[str]) -> None:
    """An operation's result depending on another one's part of ``paths``: nothing kept."""
    data = copy.deepcopy(SPEC)
    data["paths"]["/tags"]["get"]["responses"] = {
        "200": {"$ref": "#/paths/~1pets/get/responses/200"}
    }
    imported(data, tmp_path, keep=True)
    assert not list((tmp_path / "cache").glob("openapi-*.marshal"))


# -- the promise: after every edit, a rebuild through the cache is a fresh build ----------

ERROR = {"$ref": "#/components/responses/Error"}


def shop(version: str = "3.1.0") -> dict[str, Any]:
    """Three operations sharing an error response whose schema warns (its own default, and
    a definition reached only through it); Swagger 2.0's the same with its own places."""
    detail = {"type": "object", "properties": {"code": {"type": "string", "default": 7}}}
    error: dict[str, Any] = {
        "type": "object",
        "properties": {"why": {"type": "string", "default": 3}, "detail": {"$ref": "Detail"}},
    }
    ops = {
        "/items": {
            "get": {"operationId": "listItems", "responses": {"200": ok(PET), "404": ERROR}},
            "post": {
                "operationId": "addItem",
                "requestBody": {"content": {"application/json": {"schema": PET}}},
                "responses": {"201": ok(PET), "404": ERROR},
            },
        },
        "/tags": {"get": {"operationId": "listTags", "responses": {"200": ok(TAG), "404": ERROR}}},
    }
    schemas = {**copy.deepcopy(SPEC["components"]["schemas"]), "Detail": detail}
    if version != "2.0":
        error["properties"]["detail"]["$ref"] = "#/components/schemas/Detail"
        responses = {"Error": ok(error)}
        return {**SPEC, "paths": ops, "components": {"schemas": schemas, "responses": responses}}
    text = json.dumps({"paths": ops, "definitions": schemas, "responses": {"Error": ok(error)}})
    text = text.replace("#/components/schemas/", "#/definitions/").replace(
        "#/components/responses/", "#/responses/"
    )
    two = json.loads(text.replace('"Detail"}', '"#/definitions/Detail"}'))
    for item in two["paths"].values():
        for op in item.values():
            op["produces"] = ["application/json"]
            for response in op["responses"].values():
                response.update(response.pop("content", {}).get("application/json", {}))
            body = op.pop("requestBody", None)
            if body:
                schema = body["content"]["application/json"]["schema"]
                op["parameters"] = [{"name": "body", "in": "body", "schema": schema}]
    error_2 = two["responses"]["Error"]
    error_2.update(error_2.pop("content")["application/json"])
    info = {"info": SPEC["info"], "host": "pets.example", "schemes": ["https"]}
    return {"swagger": "2.0", **info, **two}


def _op(data: dict[str, Any], path: str, method: str) -> dict[str, Any]:
    op: dict[str, Any] = data["paths"][path][method]
    return op


def touch(data: dict[str, Any]) -> None:
    _op(data, "/tags", "get")["description"] = "the tags, " + str(len(json.dumps(data)))


def add_parameter(data: dict[str, Any]) -> None:
    op = _op(data, "/items", "get")
    param: dict[str, Any] = {
        "name": f"q{len(op.get('parameters', []))}",
        "in": "query",
        "type": "string",
    }
    if "swagger" not in data:
        param["schema"] = {"type": param.pop("type")}
    op.setdefault("parameters", []).append(param)


def change_component(data: dict[str, Any]) -> None:
    schemas = data.get("definitions") or data["components"]["schemas"]
    schemas["Pet"]["properties"]["age"] = {"type": "integer", "default": "old"}


def drop_error(data: dict[str, Any]) -> None:
    """The first operation to reach the shared error response no longer does."""
    _op(data, "/items", "get")["responses"].pop("404", None)


def restore_error(data: dict[str, Any]) -> None:
    _op(data, "/items", "get")["responses"]["404"] = copy.deepcopy(
        _op(data, "/tags", "get")["responses"]["404"]
    )


def refer_to_other_file(data: dict[str, Any]) -> None:
    """``listTags`` answers a schema of another file (whose names then avoid the document's)."""
    other = {"type": "object", "properties": {"name": {"$ref": "other.json#/Mark"}}}
    response = _op(data, "/tags", "get")["responses"]["200"]
    if "swagger" in data:
        response["schema"] = other
    else:
        response["content"]["application/json"]["schema"] = other


def drop_other_file(data: dict[str, Any]) -> None:
    response = _op(data, "/tags", "get")["responses"]["200"]
    ref = "#/definitions/Tag" if "swagger" in data else "#/components/schemas/Tag"
    if "swagger" in data:
        response["schema"] = {"$ref": ref}
    else:
        response["content"]["application/json"]["schema"] = {"$ref": ref}


EDITS = [
    touch,
    add_parameter,
    change_component,
    drop_error,
    touch,
    restore_error,
    refer_to_other_file,
    touch,
    drop_other_file,
    touch,
]
OTHER = {"Mark": {"type": "object", "properties": {"mark": {"type": "integer", "default": "x"}}}}


def fresh_and_kept(data: Any, folder: Path, monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    """The import through the cache (``folder/cache``) equals one with an empty cache."""
    monkeypatch.setenv("MCPGEN_CACHE_DIR", str(folder / f"empty{n}"))
    fresh = imported(data, folder, keep=True)
    monkeypatch.setenv("MCPGEN_CACHE_DIR", str(folder / "cache"))
    assert imported(data, folder, keep=True) == fresh, n
    assert len(list((folder / "cache").iterdir())) == 1  # one file for the document


@pytest.mark.parametrize("version", ["3.1.0", "3.0.3", "2.0"])
def test_after_every_edit_a_rebuild_is_a_fresh_build(
    version: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, builds: list[str]
) -> None:
    (tmp_path / "other.json").write_text(json.dumps(OTHER))
    data = shop(version)
    fresh_and_kept(data, tmp_path, monkeypatch, 0)
    builds.clear()
    warned = [p[2] for p in imported(data, tmp_path, True)[4]]  # (the error's and Detail's)
    assert any("Error" in w for w in warned) and any("Detail" in w for w in warned)
    for n, edit in enumerate(EDITS, 1):
        edit(data)
        fresh_and_kept(data, tmp_path, monkeypatch, n)
        if edit is touch and n != 8:  # (8: another file referred to, nothing kept)
            assert builds[3:] == ["get /tags"], n  # (the fresh import's three first)
        builds.clear()


@settings(max_examples=8, deadline=None)
@given(
    st.sampled_from(["3.1.0", "2.0"]),
    st.lists(st.sampled_from(EDITS[:-1]), min_size=1, max_size=5),
)
def test_any_sequence_of_edits_rebuilds_as_a_fresh_build(version: str, edits: list[Any]) -> None:
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as monkeypatch:
        (Path(folder) / "other.json").write_text(json.dumps(OTHER))
        data = shop(version)
        fresh_and_kept(data, Path(folder), monkeypatch, 0)
        for n, edit in enumerate(edits, 1):
            edit(data)
            fresh_and_kept(data, Path(folder), monkeypatch, n)


def _package(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_after_every_edit_the_package_and_warnings_are_a_fresh_build_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The promise through ``mcpgen build``: the package's files and the warnings printed,
    each build through the cache into the same folder, each fresh one into a new one."""
    from click.testing import CliRunner

    from mcpgen.cli import main

    (tmp_path / "other.json").write_text(json.dumps(OTHER))
    data, spec = shop(), tmp_path / "api.json"
    for n, edit in enumerate([touch, add_parameter, change_component, drop_error, refer_to_other_file, drop_other_file, touch, None]):  # fmt: skip
        spec.write_text(json.dumps(data, indent=1))
        results = []
        for store in (tmp_path / f"empty{n}", tmp_path / "cache"):
            monkeypatch.setenv("MCPGEN_CACHE_DIR", str(store))
            out = tmp_path / store.name / "out"
            result = CliRunner().invoke(main, ["build", str(spec), "-o", str(out)])
            assert result.exit_code == 0, result.output
            warned = [line for line in result.output.splitlines() if ": warning: " in line]
            results.append((warned, _package(out)))  # (the summary says what was written)
        assert results[0] == results[1], n
        if edit is not None:
            edit(data)
