"""The newcomer's path, for real: a fresh venv, a non-editable ``pip install`` of mcpgen (so
templates must ship inside the wheel), ``mcpgen init``/``validate``/``build``, then a
non-editable install of the generated project and its own test suite."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def sh(args: list[str], cwd: Path) -> str:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{args}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout + done.stderr


def test_fresh_venv_install_build_and_generated_tests(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    sh([sys.executable, "-m", "venv", str(venv)], tmp_path)
    python = str(venv / "bin" / "python")
    sh([python, "-m", "pip", "install", "-q", str(ROOT)], tmp_path)
    mcpgen = str(venv / "bin" / "mcpgen")
    sh([mcpgen, "init", str(tmp_path / "starter")], tmp_path)
    assert "ok (1 tool, 1 resource, 1 prompt, 0 warnings)" in sh(
        [mcpgen, "validate", str(tmp_path / "starter" / "mcpgen.yaml")], tmp_path
    )
    out = tmp_path / "calculator"
    sh([mcpgen, "build", str(ROOT / "manifests" / "calculator.yaml"), "-o", str(out)], tmp_path)
    sh(
        [mcpgen, "build", str(tmp_path / "starter" / "mcpgen.yaml"), "-o", str(tmp_path / "s")],
        tmp_path,
    )
    # list and call a project folder with only mcpgen installed (no uvx, nothing on PATH)
    bare = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    listed = subprocess.run(
        [mcpgen, "list", str(out)], env=bare, capture_output=True, text=True, check=False
    )
    assert listed.returncode == 0 and "tools (5):" in listed.stdout, listed.stderr
    called = subprocess.run(
        [mcpgen, "call", str(out), "add", "numbers=[1,2]"],
        env=bare, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert called.returncode == 1 and "is not implemented yet" in called.stderr, called.stderr
    sh([python, "-m", "pip", "install", "-q", f"{out}[test]"], tmp_path)
    result = sh([python, "-m", "pytest", "-q", "-p", "no:cacheprovider"], out)
    assert " passed" in result and "failed" not in result


EXAMPLES = sorted(p for p in (ROOT / "generated_examples").iterdir() if p.is_dir())


@pytest.mark.slow
@pytest.mark.timeout(3000)
def test_every_example_installs_alone_and_passes_its_own_tests(tmp_path: Path) -> None:
    """What each example's own CI does: a venv *without* mcpgen, ``pip install
    'example[test]'`` (non-editable), its generated tests. A module the package imports
    but does not declare fails here (one venv, each example installed and removed in turn)."""
    import shutil
    import tomllib

    venv = tmp_path / "venv"
    sh([sys.executable, "-m", "venv", str(venv)], tmp_path)
    python = str(venv / "bin" / "python")
    for example in EXAMPLES:
        copy = tmp_path / example.name
        shutil.copytree(example, copy, ignore=shutil.ignore_patterns(".mypy_cache", "__pycache__"))
        sh([python, "-m", "pip", "install", "-q", f"{copy}[test]"], tmp_path)
        found = sh([python, "-c", "import importlib.util as u; print(u.find_spec('mcpgen'))"], copy)
        assert found.strip() == "None", "mcpgen must not be importable beside the example"
        result = sh([python, "-m", "pytest", "-q", "-p", "no:cacheprovider"], copy)
        assert " passed" in result and "failed" not in result, result[-2000:]
        name = tomllib.loads((copy / "pyproject.toml").read_text("utf-8"))["project"]["name"]
        sh([python, "-m", "pip", "uninstall", "-y", "-q", name], tmp_path)
