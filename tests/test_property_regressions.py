"""Bugs the property test of the manifest -> code promise found (tests/test_property_manifests.py),
each minimised to a plain case: validate refuses it with a located error, or the build is sound.
"""

from __future__ import annotations

import json
from pathlib import Path

import property_harness as harness
import pytest

pytestmark = pytest.mark.timeout(300)


def _case(tmp_path: Path, manifest: dict[str, object], api: object = None) -> Path:
    harness.write_case(tmp_path, manifest, api)
    return tmp_path


def _errors(folder: Path) -> list[dict[str, object]]:
    """The located errors of a refused case (the harness checks file, line and field)."""
    assert harness.validate(folder) is not None, "validate accepted the case"
    code, out, _ = harness._cli(folder, "validate", "--format", "json", harness.MANIFEST)
    assert code == 2
    return [p for p in json.loads(out)["problems"] if p["level"] == "error"]


def _line_of(folder: Path, text: str, file: str = harness.MANIFEST) -> int:
    lines = (folder / file).read_text("utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


# -- 1. shared definitions the model generator renames ----------------------------------
# A $defs name is the name of its model class; datamodel-code-generator capitalises it,
# drops its underscores and renames keywords, so `foo` became `Foo` and the build failed
# ("model generation produced no class for foo"), `class` made code that did not parse and
# `Field` failed unlocated. The same for an OpenAPI component named `True` or `none`.
@pytest.mark.parametrize(
    ("name", "better"),
    [
        ("annotations", "Annotations"),
        ("foo", "Foo"),
        ("_x", "X"),
        ("x_", "X"),
        ("Foo_bar", "FooBar"),
        ("class", "Class"),
        ("None", "NoneModel"),
        ("Field", "FieldModel"),
    ],
)
def test_defs_names_that_would_be_renamed_are_refused(
    tmp_path: Path, name: str, better: str
) -> None:
    manifest = {
        "mcpgen": 1,
        "server": {"name": "defs"},
        "$defs": {name: {"type": "object", "properties": {"a": {"type": "string"}}}},
        "tools": [{"name": "only", "description": "A tool."}],
    }
    folder = _case(tmp_path, manifest)
    (error,) = _errors(folder)
    assert error["field"] == f"$defs.{name}"
    assert error["line"] == _line_of(folder, f"{name}:")
    assert f"call it {better!r}" in str(error["message"])


def test_pascal_case_defs_names_build(tmp_path: Path) -> None:
    defs = {n: {"type": "object", "properties": {"a": {"type": "string"}}} for n in ("Foo", "FOO")}
    tool = {"name": "t", "description": "A tool.", "input": {"$ref": "#/$defs/Foo"}}
    manifest = {"mcpgen": 1, "server": {"name": "pascal"}, "$defs": defs, "tools": [tool]}
    built = harness.build(_case(tmp_path, manifest))
    shared = (built.out / "src" / built.package / "models" / "_shared.py").read_text("utf-8")
    assert "class Foo(" in shared and "class FOO(" in shared


def test_openapi_components_named_like_keywords_build(tmp_path: Path) -> None:
    refs = {k: {"$ref": f"#/components/schemas/{k}"} for k in ("True", "none", "Field")}
    schema = {"type": "object", "properties": refs}
    answer = {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}
    component = {"type": "object", "properties": {"x": {"type": "string"}}}
    api = {
        "openapi": "3.0.3",
        "info": {"title": "Api", "version": "1"},
        "paths": {"/a": {"get": {"operationId": "getA", "responses": answer}}},
        "components": {"schemas": dict.fromkeys(refs, component)},
    }
    source = {"source": harness.API, "baseUrl": "http://127.0.0.1:9"}
    manifest = {"mcpgen": 1, "server": {"name": "keywords"}, "openapi": source}
    folder = _case(tmp_path, manifest, api)
    assert harness.validate(folder) is None
    built = harness.build(folder)  # was: "model generation produced no class for True"
    shared = (built.out / "src" / built.package / "models" / "_shared.py").read_text("utf-8")
    classes = [line.split("(")[0][6:] for line in shared.splitlines() if line.startswith("class ")]
    assert len(classes) == 3 and not {"True", "Field", "None"} & set(classes), classes


# -- 2. a client without tools imported what only tool methods use ------------------------
# A server of prompts or resources only: client.py imported ProgressCallback and arguments
# unused, so the generated project failed its own `ruff check` (F401).
@pytest.mark.parametrize(
    "entries",
    [
        {
            "prompts": [
                {"name": "p", "description": "d", "messages": [{"role": "user", "text": "hi"}]}
            ]
        },
        {"resources": [{"name": "r", "uri": "app://x", "description": "d", "text": "hi"}]},
        {"resources": [{"name": "r", "uriTemplate": "app://x/{id}", "description": "d"}]},
    ],
    ids=["prompt", "resource", "template"],
)
def test_client_without_tools_imports_only_what_it_uses(
    tmp_path: Path, entries: dict[str, object]
) -> None:
    manifest = {"mcpgen": 1, "server": {"name": "notools"}, **entries}
    built = harness.build(_case(tmp_path, manifest))  # ruff --select F on the project
    client = (built.out / "src" / built.package / "client.py").read_text("utf-8")
    assert "ProgressCallback" not in client and "arguments" not in client
