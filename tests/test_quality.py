"""mcpgen's own code stays ruff-clean, black-formatted and passes mypy --strict."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_mypy_strict() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "mcpgen"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "mcpgen", "tests"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_black() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "black", "--check", "--quiet", "mcpgen", "tests"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_no_module_of_mcpgen_is_over_400_lines() -> None:
    """Modules stay small and split by responsibility (docs/architecture.md)."""
    long = {
        str(path.relative_to(ROOT)): n
        for path in (ROOT / "mcpgen").rglob("*.py")
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > 400
    }
    assert not long, long


def test_the_architecture_names_only_modules_that_exist() -> None:
    """docs/architecture.md describes the code as it is: every module it names is there
    (``mcpgen/...`` from the root, a bare ``name.py`` anywhere in the code, tests, goldens)."""
    import re

    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    files = {
        path.relative_to(ROOT).as_posix()
        for top in ("mcpgen", "tests", "generated_examples")
        for path in (ROOT / top).rglob("*.py")
    }
    named = set(re.findall(r"[\w/]*\w\.py\b", text)) - {"mcpgen/runtime/X.py"}
    stale = sorted(n for n in named if not any(f == n or f.endswith("/" + n) for f in files))
    assert not stale, f"docs/architecture.md names modules that do not exist: {stale}"
    gone = ("normalize", "writer", "modelmodules", "pytypes", "BLACK_OPTIONS")  # issue 29
    assert not [word for word in gone if word in text]
