"""The committed outputs in generated_examples/: in sync with their manifests, and working.

Regenerate them all with: python -m mcpgen build manifests/NAME.yaml -o generated_examples/NAME
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpgen.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p.name for p in (ROOT / "generated_examples").iterdir() if p.is_dir())


def test_every_example_manifest_has_generated_output() -> None:
    manifests = sorted(p.stem for p in (ROOT / "manifests").glob("*.yaml"))
    assert manifests == EXAMPLES


@pytest.mark.parametrize("name", EXAMPLES)
def test_generated_output_is_in_sync(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(
        main, ["build", f"manifests/{name}.yaml", "-o", f"generated_examples/{name}", "--check"]
    )
    assert result.exit_code == 0, result.output


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(cwd / "src")}
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False)


@pytest.mark.parametrize("name", EXAMPLES)
def test_generated_tests_pass(name: str) -> None:
    """Runs the example's own generated test suite (in memory and over stdio, both eras)."""
    folder = ROOT / "generated_examples" / name
    done = run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "tests"], folder
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout
    # a test over an empty list is a skip to explain away (shop's handler signatures, none)
    assert "got empty parameter set" not in done.stdout, done.stdout[-2000:]


@pytest.mark.parametrize("name", EXAMPLES)
def test_generated_code_is_lint_and_format_clean(name: str) -> None:
    folder = ROOT / "generated_examples" / name
    ruff = run([sys.executable, "-m", "ruff", "check", "."], folder)
    assert ruff.returncode == 0, ruff.stdout + ruff.stderr
    black = run([sys.executable, "-m", "black", "--check", "-q", "."], folder)
    assert black.returncode == 0, black.stdout + black.stderr
