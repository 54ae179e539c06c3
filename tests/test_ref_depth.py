"""A chain of definitions each referring to the next nests as deep as the schemas inlined
into one: when a stage runs out of stack on it, the error names the definition's file,
line and pointer, exit status 2 (it used to end in "input nested too deeply", unlocated,
or "internal error while importing this operation: RecursionError")."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from mcpgen.check.ref_depth import MAX_BASES
from mcpgen.cli import main
from mcpgen.load import load_text
from mcpgen.openapi import import_openapi
from mcpgen.openapi.schema import SchemaConverter


def link(kind: str, ref: str, i: int) -> dict[str, object]:
    target = {"$ref": ref}
    return {
        "allOf": {
            "allOf": [target, {"type": "object", "properties": {f"p{i}": {"type": "string"}}}]
        },
        "properties": {"type": "object", "properties": {"next": target}},
        "items": {"type": "array", "items": target},
        "oneOf": {"oneOf": [target, {"type": "string"}]},
        "additionalProperties": {"type": "object", "additionalProperties": target},
    }[kind]


def openapi(n: int, kind: str) -> dict[str, object]:
    defs = {f"Def{i}": link(kind, f"#/components/schemas/Def{i + 1}", i) for i in range(n)}
    defs[f"Def{n}"] = {"type": "object", "properties": {"leaf": {"type": "string"}}}
    media = {"application/json": {"schema": {"$ref": "#/components/schemas/Def0"}}}
    operation = {
        "operationId": "op",
        "requestBody": {"content": media},
        "responses": {"200": {"description": "ok", "content": media}},
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "servers": [{"url": "https://x.example"}],
        "paths": {"/a": {"post": operation}},
        "components": {"schemas": defs},
    }


def validate(path: Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["validate", str(path)])
    return result.exit_code, result.output


CHAINS = [
    (kind, 1_000, ": nests ") for kind in ("properties", "items", "oneOf", "additionalProperties")
]
TOO_DEEP = "too deep for mcpgen to walk"


def inherits(n: int) -> str:
    """An allOf chain is refused by the importer before it marks readOnly properties."""
    return f": inherits through a chain of {n} definitions"


@pytest.mark.parametrize(
    ("kind", "n", "says"),
    [
        *CHAINS,
        ("allOf", 300, inherits(300)),
        ("allOf", 1_000, inherits(1_000)),
        ("properties", 300, ": nests "),
        ("allOf", 10_000, inherits(10_000)),
    ],
)
def test_long_reference_chain_in_openapi_is_refused_located(
    tmp_path: Path, kind: str, n: int, says: str
) -> None:
    path = tmp_path / "api.json"
    path.write_text(json.dumps(openapi(n, kind), indent=1))
    code, output = validate(path)
    line = path.read_text().splitlines().index(' "components": {') + 3  # "Def0": {
    assert code == 2, output
    assert f"{path}:{line}:" in output
    assert f"error: #/components/schemas/Def0{says}" in output, output
    assert (TOO_DEEP in output) == (says == ": nests ")
    assert "nested too deeply" not in output and "internal error" not in output


@pytest.mark.parametrize("n", [60, 150])
def test_a_chain_every_stage_can_walk_still_validates(tmp_path: Path, n: int) -> None:
    """Only a chain that fails is refused: 150 links built before this check existed."""
    path = tmp_path / "api.json"
    path.write_text(json.dumps(openapi(n, "allOf")))
    assert validate(path) == (0, f"{path}: ok (1 tool, 0 resources, 0 prompts, 0 warnings)\n")


def test_read_only_through_a_chain_looks_at_each_link_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each composed link asks which properties are readOnly through the rest of the chain
    (``one_way.relax``): with one memo per question, not per link, a chain of n costs some
    n ``_marks`` calls (it was n²: 46,203 for 150 links; 1,000 took ~20 s to refuse); the
    input's ``Request`` copies (``one_way.leave_out``) ask again: 16n + 8 in all."""
    n, calls = 150, list[object]()
    data = openapi(n, "allOf")
    schemas = data["components"]["schemas"]  # type: ignore[index]
    schemas[f"Def{n}"]["properties"]["leaf"]["readOnly"] = True  # the server sets it
    schemas["Def0"]["required"] = ["leaf", "p0"]  # so a request cannot be asked for it
    marks = SchemaConverter._marks

    def counted(*args: Any) -> dict[str, bool]:
        calls.append(args)
        return marks(*args)

    monkeypatch.setattr(SchemaConverter, "_marks", counted)
    doc = load_text(json.dumps(data), "api.json", Path("."), json_first=True)
    result = import_openapi(doc)
    assert not [p for p in result.problems if p.level.value == "error"]
    assert result.tools[0]["input"]["$defs"]["Def0Request"]["required"] == ["p0"]
    assert len(calls) < 20 * n


DEFS = "#/components/schemas/Def"


def test_a_long_allof_chain_is_refused_before_it_is_marked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each link's readOnly marks hold every property below it: a chain of 10,000 made some
    50 million entries (12-18 s) before it was refused. The chain is measured as its
    definitions are converted, each schema once (what an earlier operation converted is
    remembered), and a long one is refused before its marks: here only the first
    operation's 101 definitions are marked (501 ``_marks`` calls; marking all: 3,676)."""
    module, n, calls = importlib.import_module("mcpgen.check.ref_depth"), 1_000, list[str]()
    data = openapi(n, "allOf")
    first = json.loads(json.dumps(data["paths"]["/a"]["post"]))  # type: ignore[index]
    first["operationId"] = "first"
    first["requestBody"]["content"]["application/json"]["schema"] = {"$ref": DEFS + "900"}
    data["paths"] = {"/first": {"post": first}, **data["paths"]}  # type: ignore[dict-item]
    bases, marks = module._bases, SchemaConverter._marks
    monkeypatch.setattr(module, "_bases", lambda *args: calls.append("bases") or bases(*args))
    monkeypatch.setattr(
        SchemaConverter, "_marks", lambda *args: calls.append("marks") or marks(*args)
    )
    result = import_openapi(load_text(json.dumps(data), "api.json", Path("."), json_first=True))
    assert calls.count("marks") < 6 * 101  # (and each definition measured once: in, out)
    assert calls.count("bases") <= 2 * (n + 1)
    errors = [p for p in result.problems if p.level.value == "error"]
    assert [(e.field, e.location.line) for e in errors] == [("#/components/schemas/Def0", 1)]
    assert inherits(n)[2:] in errors[0].message and not result.tools


def manifest(n: int, kind: str) -> dict[str, object]:
    defs = {f"D{i}": link(kind, f"#/$defs/D{i + 1}", i) for i in range(n)}
    defs[f"D{n}"] = {"type": "object", "properties": {"leaf": {"type": "string"}}}
    schema = {"type": "object", "properties": {"x": {"$ref": "#/$defs/D0"}}}
    tool = {"name": "a", "description": "d", "input": schema}
    return {"mcpgen": 1, "server": {"name": "deep"}, "$defs": defs, "tools": [tool]}


@pytest.mark.parametrize(
    ("kind", "n", "says"),
    [
        ("properties", 300, "error: #/$defs/D0: nests "),
        ("allOf", 151, "error: $defs.D0: inherits through a chain of 151 definitions"),
        ("allOf", 400, "error: $defs.D0: inherits through a chain of 400 definitions"),
    ],
)
def test_long_reference_chain_in_manifest_defs_is_refused_located(
    tmp_path: Path, kind: str, n: int, says: str
) -> None:
    """An allOf chain past ``MAX_BASES`` validated, then kept the model generator busy
    for minutes (400: 187 s; 3,000: hours)."""
    path = tmp_path / "mcpgen.yaml"
    path.write_text(yaml.safe_dump(manifest(n, kind), sort_keys=False))
    code, output = validate(path)
    assert code == 2, output
    line = path.read_text().splitlines().index("  D0:") + 2
    assert f"{path}:{line}:" in output and says in output, output


def test_reference_cycles_are_found_looking_at_each_reference_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether a reference leads back to itself was a walk from each one: a chain of n cost
    n² looks (3,000 links: 9 million, 17 s, before the chain was refused)."""
    module, n, calls = importlib.import_module("mcpgen.check.ref_depth"), 400, list[object]()
    in_place = module._in_place

    def counted(schema: Any) -> Any:
        calls.append(schema)
        return in_place(schema)

    monkeypatch.setattr(module, "_in_place", counted)
    path = tmp_path / "mcpgen.yaml"
    path.write_text(yaml.safe_dump(manifest(n, "allOf"), sort_keys=False))
    code, output = validate(path)
    assert code == 2 and "inherits through a chain of 400 definitions" in output, output
    assert len(calls) < 10 * n


def test_an_allof_chain_the_model_generator_builds_still_validates(tmp_path: Path) -> None:
    path = tmp_path / "mcpgen.yaml"
    path.write_text(yaml.safe_dump(manifest(MAX_BASES, "allOf"), sort_keys=False))
    assert validate(path) == (0, f"{path}: ok (1 tool, 0 resources, 0 prompts, 0 warnings)\n")


@pytest.mark.parametrize("text", ["42\n", "just text\n", "null\n"])
def test_a_document_that_is_no_container_is_measured_too(tmp_path: Path, text: str) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(text)
    code, output = validate(path)
    assert code == 2 and "nests" not in output and "Traceback" not in output, output


@pytest.mark.parametrize(
    ("ext", "starts_in_other", "bare", "kind"),
    [
        ("yaml", True, False, "allOf"),
        ("json", True, True, "properties"),
        ("yaml", False, True, "properties"),
        ("json", False, False, "allOf"),
    ],
)
def test_chain_across_files_is_refused_where_it_starts(
    tmp_path: Path, ext: str, starts_in_other: bool, bare: bool, kind: str
) -> None:
    """Def0 -> Def1 -> ... with every other definition in other.EXT (it used to end in
    "input nested too deeply", or be measured in the main file alone: "nests 5 levels")."""
    n, main_file, other = 1_000, f"api.{ext}", f"other.{ext}"

    def home(i: int) -> str:
        return other if (i % 2 == 0) == starts_in_other else main_file

    def ref(i: int, here: str) -> str:
        return ("" if home(i) == here else home(i)) + f"#/components/schemas/Def{i}"

    files: dict[str, dict[str, object]] = {main_file: openapi(0, "allOf"), other: {}}
    for name in files:
        files[name]["components"] = {"schemas": {}}
    for i in range(n + 1):
        schema = link(kind, ref(i + 1, home(i)), i) if i < n else {"type": "string"}
        files[home(i)]["components"]["schemas"][f"Def{i}"] = schema  # type: ignore[index]
    media = {"application/json": {"schema": {"$ref": ref(0, main_file)}}}
    files[main_file]["paths"] = {
        "/a": {
            "post": {
                "operationId": "op",
                "requestBody": {"content": media},
                "responses": {"200": {"description": "ok", "content": media}},
            }
        }
    }
    for name, data in files.items():
        dump = (
            json.dumps(data, indent=1) if ext == "json" else yaml.safe_dump(data, sort_keys=False)
        )
        (tmp_path / name).write_text(dump)
    (tmp_path / "mcpgen.yaml").write_text(
        f"mcpgen: 1\nserver: {{name: deep}}\nopenapi: {{source: {main_file}}}\n"
    )
    code, output = validate(tmp_path / (main_file if bare else "mcpgen.yaml"))
    lines = (tmp_path / home(0)).read_text().splitlines()
    line = lines.index('   "Def0": {') + 1 if ext == "json" else lines.index("    Def0:") + 2
    assert code == 2, output
    assert f"{tmp_path / home(0)}:{line}:" in output, output
    assert "nested too deeply" not in output and "no operation" not in output
    if kind == "allOf":
        assert f"error: #/components/schemas/Def0{inherits(n)}" in output, output
    else:
        levels = int(output.split("error: #/components/schemas/Def0: nests ")[1].split()[0])
        assert levels > n


def test_a_chain_that_breaks_a_stage_after_load_is_refused_located(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chain loading walks but rendering does not (simulated: the renderer runs out of
    stack) is located as at load, and nothing is written (it was "input nested too
    deeply")."""

    def deep(*args: object) -> None:
        raise RecursionError

    monkeypatch.setattr(importlib.import_module("mcpgen.cli.build"), "render_files", deep)
    path = tmp_path / "api.json"
    path.write_text(json.dumps(openapi(150, "allOf"), indent=1))
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["build", str(path), "-o", str(out)])
    line = path.read_text().splitlines().index(' "components": {') + 3  # "Def0": {
    assert result.exit_code == 2, result.output
    assert f"{path}:{line}:" in result.output and "#/components/schemas/Def0" in result.output
    assert "nested too deeply" not in result.output and not out.exists()
