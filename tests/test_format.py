"""The formatting stage: ruff format writes black's bytes, and black agrees with every
generated example."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mcpgen.format import FormatError, format_files
from mcpgen.pipeline import load_manifest
from mcpgen.render import render_project

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted(p.stem for p in (ROOT / "manifests").glob("*.yaml"))


@pytest.mark.parametrize("name", EXAMPLES)
def test_ruff_writes_blacks_bytes(name: str) -> None:
    """Every rendered Python file of an example, formatted by each engine: the same text."""
    loaded = load_manifest(ROOT / "manifests" / f"{name}.yaml")
    assert loaded.manifest is not None
    out = render_project(loaded.manifest)
    python = {
        path: text
        for files in (out.generated, out.stubs)
        for path, text in files.items()
        if path.endswith(".py") and "/_runtime/" not in path
    }
    by_ruff = format_files(python, "ruff")
    by_black = format_files(python, "black")
    different = [path for path in python if by_ruff[path] != by_black[path]]
    assert not different, different
    assert any(by_ruff[path] != python[path] for path in python)  # there was work to do


def test_ruff_writes_blacks_bytes_for_long_client_parameters(tmp_path: Path) -> None:
    """Black (not ruff format) parenthesizes a union annotation that makes a parameter
    line too long; the typed client writes them so. Unions with and without a default,
    short and long, near the line length, with brackets and bars inside the strings."""
    values = ["success", "dismissed", "inactive", "full_name", "internal", "a]|b", 'q"|[']
    props = {
        f"p{'x' * n}": {"enum": values[: 3 + n % 5]} | ({"default": "success"} if n % 3 else {})
        for n in range(0, 40, 3)
    }
    props["ref_like"] = {"type": ["string", "integer", "null"]}
    manifest = tmp_path / "long.yaml"
    manifest.write_text(
        "mcpgen: 1\nserver: {name: long}\ntools:\n  - name: t\n    description: d\n"
        f"    input: {json.dumps({'type': 'object', 'properties': props, 'required': ['p']})}\n"
    )
    loaded = load_manifest(manifest)
    assert loaded.manifest is not None, loaded.problems.format()
    client = {"c.py": render_project(loaded.manifest).generated["src/long_mcp/client.py"]}
    by_ruff = format_files(client, "ruff")["c.py"]
    assert by_ruff == format_files(client, "black")["c.py"]
    assert ": (\n" in by_ruff  # a parenthesized annotation was written


def test_ruff_writes_blacks_bytes_for_long_prompt_and_resource_parameters(
    tmp_path: Path,
) -> None:
    """The same for a prompt's optional argument and a resource's query variable: their
    ``name: str | None = None`` was written as is, and ruff and black split it apart."""
    long = "a" * 80
    manifest = tmp_path / "long.yaml"
    manifest.write_text(
        "mcpgen: 1\nserver: {name: long}\n"
        f"prompts:\n  - {{name: p, description: d, handler: true, arguments: [{{name: {long}}}]}}\n"
        f"resources:\n  - {{name: r, description: d, uriTemplate: 'x://r{{?{long}}}'}}\n"
    )
    loaded = load_manifest(manifest)
    assert loaded.manifest is not None, loaded.problems.format()
    client = {"c.py": render_project(loaded.manifest).generated["src/long_mcp/client.py"]}
    by_ruff = format_files(client, "ruff")["c.py"]
    assert by_ruff == format_files(client, "black")["c.py"]
    assert by_ruff.count(": (\n") == 2  # both annotations parenthesized


def test_black_check_passes_on_the_generated_examples() -> None:
    """The contract users see: ``black --check`` (the project's settings) over the output."""
    done = subprocess.run(
        [sys.executable, "-m", "black", "--check", "-q", "-l", "100", "-t", "py311", "."],
        cwd=ROOT / "generated_examples",
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("engine", ["ruff", "black"])
def test_code_that_does_not_parse_is_an_error_naming_the_file(engine: str) -> None:
    with pytest.raises(FormatError, match=r"src/pkg/broken\.py"):
        format_files({"src/pkg/ok.py": "x = 1\n", "src/pkg/broken.py": "def f(:\n"}, engine)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", EXAMPLES)
def test_spec_json_shares_definitions_and_the_runtime_restores_them(name: str) -> None:
    """``_spec.json`` keeps each definition once; what the runtime loads is, key for key and
    in order, the self-contained spec (so tools/list sends the same bytes)."""
    import json

    from mcpgen.render.spec import spec_data, spec_json
    from mcpgen.runtime.spec import unshare_defs

    loaded = load_manifest(ROOT / "manifests" / f"{name}.yaml")
    assert loaded.manifest is not None
    whole = spec_data(loaded.manifest)
    written = json.loads(spec_json(loaded.manifest))
    assert json.dumps(unshare_defs(written)) == json.dumps(whole)


def test_definitions_with_one_name_and_two_contents_stay_apart() -> None:
    import json

    from mcpgen.render.spec import share_defs
    from mcpgen.runtime.spec import unshare_defs

    def tool(number: int, node: object) -> dict[str, object]:
        schema = {
            "type": "object",
            "properties": {"n": {"$ref": "#/$defs/N"}},
            "$defs": {"N": node},
        }
        return {"definition": {"name": f"t{number}", "inputSchema": schema}}

    spec = {
        "format": 3,
        "tools": [
            tool(1, {"type": "string"}),
            tool(2, {"type": "integer"}),
            tool(3, {"type": "string"}),
        ],
        "resources": [],
    }
    shared = share_defs(spec)
    assert shared["$defs"] == {"N": {"type": "string"}}
    assert "$defsOwn" in shared["tools"][1]["definition"]["inputSchema"]  # the other content
    assert "$defsOwn" not in shared["tools"][2]["definition"]["inputSchema"]
    assert json.dumps(unshare_defs(json.loads(json.dumps(shared)))) == json.dumps(spec)
