"""How the models package is split: ``_shared`` plus parts, and when it stays one module."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpgen.cli import main
from mcpgen.pipeline import load_manifest
from mcpgen.render import model_parts as modelmodules

HEAD = "mcpgen: 1\nserver: {name: split}\n$defs:\n  Person: {type: object, properties: {name: {type: string}}}\n"


def _plan(tmp_path: Path, body: str) -> list[modelmodules.ModelModule]:
    source = tmp_path / "m.yaml"
    source.write_text(body)
    loaded = load_manifest(source)
    assert loaded.manifest is not None, loaded.problems
    return modelmodules.plan(loaded.manifest)


def test_shared_definitions_and_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(modelmodules, "PART_SIZE", 2)
    tools = [
        f"  - name: t{i}\n    description: d\n"
        f"    input: {{type: object, properties: {{who: {{$ref: '#/$defs/Person'}}, n{i}: {{}}}}}}\n"
        for i in range(6)
    ]
    modules = _plan(tmp_path, HEAD + "tools:\n" + "".join(tools))
    assert modules[0].name == "_shared" and modules[0].classes == ("Person",)
    parts = modules[1:]
    assert len(parts) >= 2
    assert sorted(c for m in parts for c in m.classes) == sorted(f"T{i}Input" for i in range(6))
    for part in parts:
        assert part.shared is not None
        assert part.shared["$defs"] == {"Person": modules[0].document["$defs"]["Person"]}
        assert "Person" not in part.document["$defs"]  # imported, not generated again
    # the same manifest always gives the same split (hash of the class name, not order)
    again = _plan(tmp_path, HEAD + "tools:\n" + "".join(reversed(tools)))
    assert {m.name: m.classes for m in again} == {m.name: m.classes for m in modules}


def test_a_reference_into_a_shared_definition_keeps_one_module(tmp_path: Path) -> None:
    body = HEAD + (
        "tools:\n  - name: t\n    description: d\n"
        "    input: {type: object, properties: {n: {$ref: '#/$defs/Person/properties/name'}}}\n"
    )
    modules = _plan(tmp_path, body)
    assert [m.name for m in modules] == ["_part00"]
    assert set(modules[0].classes) == {"Person", "TInput"}
    source = tmp_path / "m.yaml"
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["build", str(source), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "src/split_mcp/models/_part00.py").is_file()
    assert not (out / "src/split_mcp/models/_shared.py").exists()


def test_no_tools_no_models(tmp_path: Path) -> None:
    source = tmp_path / "m.yaml"
    source.write_text(
        "mcpgen: 1\nserver: {name: empty}\nresources:\n"
        "  - {uri: 'file:///a', name: a, text: hello}\n"
    )
    loaded = load_manifest(source)
    assert loaded.manifest is not None, loaded.problems
    assert modelmodules.plan(loaded.manifest) == []
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["build", str(source), "-o", str(out)])
    assert result.exit_code == 0, result.output
    init = (out / "src/empty_mcp/models/__init__.py").read_text()
    assert "none: this server declares no tools or prompts" in init


PARENT = os.getpid()
GENERATE = modelmodules._generate_checked


def _dies_in_a_worker(module: modelmodules.ModelModule, package: str) -> tuple[str, str | None]:
    if os.getpid() != PARENT:
        os._exit(1)  # what the kernel's OOM killer would leave behind
    return GENERATE(module, package)


def test_a_dead_pool_worker_falls_back_to_generating_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCPGEN_CACHE_DIR", "")
    monkeypatch.setattr(modelmodules, "_generate_checked", _dies_in_a_worker)
    source = tmp_path / "m.yaml"
    source.write_text(
        HEAD + "tools:\n  - name: t\n    description: d\n"
        "    input: {type: object, properties: {who: {$ref: '#/$defs/Person'}}}\n"
    )
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["build", str(source), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "class TInput(McpgenBaseModel)" in (out / "src/split_mcp/models/_part00.py").read_text()


def test_data_that_looks_like_a_reference_is_left_alone(tmp_path: Path) -> None:
    body = HEAD + (
        "tools:\n  - name: t\n    description: d\n    input:\n      type: object\n"
        "      properties:\n        who: {$ref: '#/$defs/Person'}\n"
        "        raw: {type: object, examples: [{$ref: '#/$defs/Person'}]}\n"
    )
    part = _plan(tmp_path, body)[1]
    properties = part.document["$defs"]["TInput"]["properties"]
    assert properties["who"] == {"$ref": "__mcpgen_shared__.json#/$defs/Person"}
    assert properties["raw"]["examples"] == [{"$ref": "#/$defs/Person"}]


def test_a_part_the_generator_rejects_falls_back_to_one_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the generator fails on a split part (a limit of references across modules, say),
    every model is generated as one module; the build still succeeds."""
    original = modelmodules.generate_module

    def no_split(module: modelmodules.ModelModule, package: str) -> str:
        if module.shared is not None:
            raise ValueError("cannot resolve a reference across modules")
        return original(module, package)

    monkeypatch.setenv("MCPGEN_CACHE_DIR", "")
    monkeypatch.setattr(modelmodules, "generate_module", no_split)
    source = tmp_path / "m.yaml"
    source.write_text(
        HEAD + "tools:\n  - name: t\n    description: d\n"
        "    input: {type: object, properties: {who: {$ref: '#/$defs/Person'}}}\n"
    )
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["build", str(source), "-o", str(out)])
    assert result.exit_code == 0, result.output
    package = out / "src/split_mcp/models"
    assert sorted(p.name for p in package.glob("*.py")) == ["__init__.py", "_base.py", "_part00.py"]
    source_text = (package / "_part00.py").read_text()
    assert "class Person(McpgenBaseModel)" in source_text
    assert "class TInput(McpgenBaseModel)" in source_text
    init = (package / "__init__.py").read_text()
    assert "from ._part00 import (\n        Person as Person,\n        TInput as TInput,\n" in init
    assert '    "_part00": "Person TInput",\n' in init


def test_a_part_gets_only_the_shared_definitions_it_needs(tmp_path: Path) -> None:
    """The file a part's references point into holds what it uses, and what that uses."""
    body = (
        "mcpgen: 1\nserver: {name: split}\n$defs:\n"
        "  Person: {type: object, properties: {home: {$ref: '#/$defs/Address'}}}\n"
        "  Address: {type: object, properties: {city: {type: string}}}\n"
        "  Unused: {type: object, properties: {x: {type: string}}}\n"
        "tools:\n  - name: t\n    description: d\n"
        "    input: {type: object, properties: {who: {$ref: '#/$defs/Person'}}}\n"
    )
    shared, part = _plan(tmp_path, body)
    assert shared.classes == ("Address", "Person", "Unused")
    assert part.shared is not None and sorted(part.shared["$defs"]) == ["Address", "Person"]


def test_tools_with_the_same_schema_share_one_class(tmp_path: Path) -> None:
    """Identical schemas are generated once: the others subclass the first, in its module;
    a tool schema that is a copy of a shared definition subclasses that definition. The
    same properties' names with another type are another class."""
    same = "{type: object, properties: {owner: {type: string}, repo: {type: string}}}"
    tools = "".join(
        f"  - name: t{i}\n    description: d\n    input: {same}\n" for i in range(3)
    ) + (
        "  - name: copy\n    description: d\n"
        "    input: {type: object, properties: {name: {type: string}}}\n"
        "  - name: near\n    description: d\n"
        "    input: {type: object, properties: {name: {type: integer}}}\n"
        "  - name: other\n    description: d\n"
        "    input: {type: object, properties: {owner: {type: integer}, repo: {type: string}}}\n"
    )
    source = tmp_path / "m.yaml"
    source.write_text(HEAD + "tools:\n" + tools)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["build", str(source), "-o", str(out)])
    assert result.exit_code == 0, result.output
    package = out / "src/split_mcp/models"
    code = "".join(p.read_text() for p in sorted(package.glob("_part*.py")))
    assert "class T0Input(McpgenBaseModel):" in code
    assert "class T1Input(T0Input):" in code and "class T2Input(T0Input):" in code
    assert "class CopyInput(Person):" in code
    assert "class NearInput(McpgenBaseModel):" in code
    assert "class OtherInput(McpgenBaseModel):" in code


def test_model_modules_are_kept_formatted_and_not_formatted_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build cache keeps a model module as it is written (formatted): a rebuild that
    reads it from there hands it to the formatter no more, and writes the same bytes."""
    from mcpgen import format as formatting
    from mcpgen import pipeline

    monkeypatch.setenv("MCPGEN_CACHE_DIR", str(tmp_path / "cache"))
    formatted: list[str] = []
    engine = formatting.format_files

    def spy(files: dict[str, str], *args: formatting.Engine) -> dict[str, str]:
        formatted.extend(files)
        return engine(files, *args)

    monkeypatch.setattr(pipeline, "format_files", spy)  # (format_output's formatter)
    source = tmp_path / "m.yaml"
    source.write_text(
        HEAD + "tools:\n  - name: t\n    description: d\n"
        "    input: {type: object, properties: {who: {$ref: '#/$defs/Person'}}}\n"
    )
    models = {"src/split_mcp/models/_shared.py", "src/split_mcp/models/_part00.py"}
    written = {}
    for build in ("cold", "warm"):
        formatted.clear()
        out = tmp_path / build
        result = CliRunner().invoke(main, ["build", str(source), "-o", str(out)])
        assert result.exit_code == 0, result.output
        written[build] = {path: (out / path).read_text() for path in models}
        assert (models <= set(formatted)) == (build == "cold")
    assert written["cold"] == written["warm"]
    kept = {p.read_text() for p in (tmp_path / "cache").glob("models-*.py")}
    assert kept == set(written["cold"].values())


def test_a_password_a_handler_returns_reaches_the_client(tmp_path: Path) -> None:
    """``format: password`` is a plain ``str``: pydantic's ``SecretStr`` sent ``**********``."""
    source = tmp_path / "m.yaml"
    source.write_text(
        "mcpgen: 1\nserver: {name: pw}\ntools:\n  - name: t\n    description: d\n"
        "    output: {type: object, properties: {p: {type: string, format: password}}}\n"
    )
    out = tmp_path / "out"
    assert CliRunner().invoke(main, ["build", str(source), "-o", str(out)]).exit_code == 0
    probe = "from pw_mcp.models import TOutput; from pw_mcp._runtime.content import to_result\n"
    probe += "print(to_result(TOutput(p='hunter2')).structured_content)"
    run = subprocess.run(
        [sys.executable, "-c", probe],
        env={**os.environ, "PYTHONPATH": str(out / "src")},
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.stdout == "{'p': 'hunter2'}\n", run.stderr[-2000:]
