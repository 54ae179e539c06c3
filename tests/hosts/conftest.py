"""Fixtures for the host tests: a temporary home, the mcpb CLI, the calculator over HTTP."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hostkit import EXAMPLES, MCPB_VERSION, ROOT, wait_for_port
from support import npm_install

from mcpgen.runtime.testing import free_port


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary home: HOME, APPDATA and XDG_CONFIG_HOME point into it."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    monkeypatch.setenv("APPDATA", str(home / "AppData" / "Roaming"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    return home


@pytest.fixture(scope="session")
def mcpb() -> list[str]:
    """The official mcpb CLI (npm @anthropic-ai/mcpb), installed once into .ci/cache/."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.skip("npm is not installed")
    prefix = ROOT / ".ci" / "cache" / f"mcpb-{MCPB_VERSION}"
    cli = prefix / "node_modules" / "@anthropic-ai" / "mcpb" / "dist" / "cli" / "cli.js"
    npm_install(prefix, f"@anthropic-ai/mcpb@{MCPB_VERSION}")
    return [str(shutil.which("node")), str(cli)]


@pytest.fixture
def calculator_http() -> Iterator[str]:
    """The calculator example serving streamable HTTP on a free port."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(EXAMPLES / "calculator" / "src")}
    process = subprocess.Popen(
        [sys.executable, "-m", "calculator_mcp", "--transport", "http", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=15)
