"""Real-world OpenAPI documents (tests/fixtures/openapi-real/, MIT): each builds, lints,
and passes its own generated tests; the big one (STAPI, 120 operations) imports and builds.
Upstreams are never contacted: the generated tests accept the tool errors that an
unreachable API gives."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from mcpgen.cli import main
from mcpgen.pipeline import load_manifest

REAL = Path(__file__).resolve().parent / "fixtures" / "openapi-real"
SPECS = sorted(p.name for p in REAL.glob("*.json"))
FULL = [name for name in SPECS if not name.startswith("star-trek")]


@pytest.mark.parametrize("name", SPECS)
def test_imports_without_errors_and_with_valid_tool_schemas(name: str) -> None:
    loaded = load_manifest(REAL / name)
    assert loaded.manifest is not None, [p.format() for p in loaded.problems.errors]
    assert not loaded.problems.errors
    names = [tool.name for tool in loaded.manifest.tools]
    assert names and len(names) == len(set(names))
    for tool in loaded.manifest.tools:
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
        assert tool.input_schema.get("type") == "object"
        if tool.output_schema is not None:
            jsonschema.Draft202012Validator.check_schema(tool.output_schema)


@pytest.mark.parametrize("name", FULL)
def test_builds_lints_and_passes_its_generated_tests(name: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["build", str(REAL / name), "-o", str(out)])
    assert result.exit_code == 0, result.output
    ruff = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "."], cwd=out, capture_output=True, text=True
    )
    assert ruff.returncode == 0, ruff.stdout
    env = {**os.environ, "PYTHONPATH": str(out / "src"), "MCP_TEST_TRANSPORTS": "memory,stdio"}
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=out, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert tests.returncode == 0, tests.stdout[-4000:]


def test_the_big_one_builds(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["build", str(REAL / "star-trek-3.0.json"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    # 120 operations are too many to list: auto mode offers them through code mode
    assert "mode auto chose code" in result.output
    assert "tools/list: 2 tools" in result.output
    spec = json.loads(next((out / "src").glob("*/_spec.json")).read_text())
    assert spec["mode"] == "code" and len(spec["tools"]) == 120
