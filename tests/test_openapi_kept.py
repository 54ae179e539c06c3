"""The OpenAPI import kept per operation in the build cache (``openapi.kept``): a rebuild
imports again only the operations that changed, and its result is a fresh import's."""

from __future__ import annotations

import copy
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

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


def test_a_reference_into_paths_is_not_kept(tmp_path: Path, builds: list[str]) -> None:
    """An operation's result depending on another one's part of ``paths``: nothing kept."""
    data = copy.deepcopy(SPEC)
    data["paths"]["/tags"]["get"]["responses"] = {
        "200": {"$ref": "#/paths/~1pets/get/responses/200"}
    }
    imported(data, tmp_path, keep=True)
    assert not list((tmp_path / "cache").glob("openapi-*.marshal"))
