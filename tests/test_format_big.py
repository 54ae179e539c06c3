"""The formatting contract on a GitHub-sized build: ``black --check`` passes over every
Python file of the package a ~1,200-operation OpenAPI document (bench/synthetic_spec.py,
GitHub's shape) builds with the default engine (ruff format set to black's bytes)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_black_check_passes_on_a_github_sized_build(tmp_path: Path) -> None:
    spec = tmp_path / "github-like.json"
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "synthetic_spec.py"), "-o", str(spec)], check=True
    )
    out = tmp_path / "out"
    env = {**os.environ, "MCPGEN_CACHE_DIR": str(tmp_path / "cache")}
    built = subprocess.run(
        [sys.executable, "-m", "mcpgen", "build", str(spec), "-o", str(out)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    python = list(out.rglob("*.py"))
    assert len(python) > 50 and sum(p.stat().st_size for p in python) > 5_000_000  # ~250k lines
    checked = subprocess.run(
        [sys.executable, "-m", "black", "--check", "-q", "-l", "100", "-t", "py311", "."],
        cwd=out,
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stderr[-3000:]
