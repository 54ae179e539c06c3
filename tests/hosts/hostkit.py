"""Helpers for the host tests: a generated example copied with a venv-style console script
(what ``pip install`` leaves in ``.venv/bin``), running ``python -m mcpgen``, ports."""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "generated_examples"
EXAMPLE_NAMES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "pyproject.toml").is_file())
MCPB_VERSION = "2.1.2"

SCRIPT = """#!{python}
# what pip writes for a console script
import sys
from {package}.__main__ import main
sys.exit(main())
"""


def copy_example(name: str, dest: Path, venv_script: bool = True) -> Path:
    """generated_examples/NAME copied to ``dest`` (tests stay out of the repository), with
    ``.venv/bin/<script>`` when ``venv_script``, its ``#!`` a python importing the package
    from the copy's ``src`` (as ``pip install -e`` leaves it)."""
    target = dest / name
    shutil.copytree(
        EXAMPLES / name, target, ignore=shutil.ignore_patterns("__pycache__", ".mypy_cache")
    )
    if venv_script:
        from mcpgen.hosts.project import describe

        project = describe(target)
        python = fake_venv(target / ".venv", src=target / "src")
        script = python.parent / project.script
        script.write_text(SCRIPT.format(python=python, package=project.package))
        script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return target


def private_copy(dest: Path, package: str = "calc_copy_mcp", script: str = "calc-copy") -> Path:
    """The calculator example copied under a package and console script no interpreter has
    installed: a test of which launcher wins must not depend on a ``calculator`` that the
    README's quickstart installed into the venv running the tests."""
    target = copy_example("calculator", dest, venv_script=False)
    for path in target.rglob("*"):
        if path.is_file() and path.suffix in {".py", ".json", ".toml", ".md"}:
            text = path.read_text(encoding="utf-8")
            path.write_text(text.replace("calculator_mcp", package), encoding="utf-8")
    (target / "src" / "calculator_mcp").rename(target / "src" / package)
    pyproject = target / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    pyproject.write_text(text.replace('"calculator" = ', f'"{script}" = '), encoding="utf-8")
    return target


def fake_venv(where: Path, scripts: tuple[str, ...] = (), src: Path | None = None) -> Path:
    """A venv's python (this interpreter, through a wrapper; ``src`` after PYTHONPATH, as an
    editable install's .pth puts it) with ``scripts`` beside it, as ``pip install`` of
    another project leaves them: each prints to stderr and exits 3."""
    bindir = where / "bin"
    bindir.mkdir(parents=True)
    python = bindir / "python"
    path = f'PYTHONPATH="${{PYTHONPATH:+$PYTHONPATH:}}{src}" ' if src else ""
    python.write_text(f'#!/bin/sh\n{path}exec {shlex.quote(sys.executable)} "$@"\n')
    python.chmod(0o755)
    for name in scripts:
        script = bindir / name
        script.write_text("#!/bin/sh\necho another project >&2\nexit 3\n")
        script.chmod(0o755)
    return python


def cli_env(**extra: str) -> dict[str, str]:
    """The environment ``python -m mcpgen`` runs in: this checkout first on the path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.update(extra)
    return env


def mcpgen(
    *args: str, cwd: Path | None = None, timeout: float = 120, **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpgen", *args],
        cwd=cwd,
        env=cli_env(**env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server exited with status {process.returncode}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"nothing listened on port {port} within {timeout} s")
