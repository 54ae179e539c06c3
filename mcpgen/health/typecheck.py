"""Do the user's handlers still type-check against the generated models? ``mypy --strict``
on ``src/<package>/handlers`` with the project's own configuration, run in the interpreter
running mcpgen; errors in what the handlers import are reported too, apart."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from mcpgen.health import Problem

TIMEOUT = 600.0


def available() -> bool:
    return importlib.util.find_spec("mypy") is not None


def run(root: Path, package: str) -> tuple[list[Problem], str]:
    """The errors mypy finds (in the handlers, then in what they import), or why it did not
    run."""
    if not available():
        return [], "mypy is not installed in this environment (pip install mypy)"
    handlers = f"src/{package}/handlers"
    if not (root / handlers).is_dir():
        return [], f"{handlers} does not exist"
    command = [sys.executable, "-m", "mypy", "--strict", "--output", "json", "--no-error-summary"]
    if (root / "pyproject.toml").is_file():
        command += ["--config-file", "pyproject.toml"]
    try:
        done = subprocess.run(
            [*command, handlers],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return [], f"mypy took longer than {TIMEOUT:.0f} s"
    except OSError as exc:
        return [], f"mypy could not be started: {exc}"
    found: list[Problem] = []
    unparsed: list[str] = []
    for line in done.stdout.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            if line.strip():
                unparsed.append(line)
            continue
        if isinstance(entry, dict) and entry.get("severity") == "error":
            code = f"  [{entry['code']}]" if entry.get("code") else ""
            path = Path(str(entry.get("file", "?"))).as_posix()
            line_no = entry["line"] if isinstance(entry.get("line"), int) else 0
            found.append(Problem("types", path, line_no, f"{entry.get('message')}{code}"))
    if done.returncode not in (0, 1) or (done.returncode == 1 and not found):
        detail = (done.stderr.strip() or "\n".join(unparsed)).splitlines()
        reason = detail[-1] if detail else f"exit status {done.returncode}"
        return [], f"mypy failed: {reason}"
    inside = [e for e in found if e.path.startswith(handlers + "/")]
    note = " (in code the handlers import)"
    return inside + [replace(e, message=e.message + note) for e in found if e not in inside], ""
