"""The official MCP conformance suite against the server mcpgen generates from
manifests/conformance.yaml: version 0.1.16 (handshake era) and the 0.2.0 alpha at
2026-07-28. Installs Node 22 and both suites locally (.ci/install-conformance.sh)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import running

from mcpgen.runtime.testing import free_port

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "generated_examples" / "conformance"
TOOLS = Path(os.environ.get("MCPGEN_TOOLS", ROOT / ".ci" / "cache" / "tools"))
# The SDK's reference "everything" server scores exactly these on mcp 2.3.0.
REFERENCE = {"0.1.16": 44, "alpha": 152}


@pytest.fixture(scope="module")
def node_bin() -> str:
    done = subprocess.run(
        ["bash", str(ROOT / ".ci" / "install-conformance.sh")],
        env={**os.environ, "TOOLS": str(TOOLS)},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(EXAMPLE / "src")}
    command = [sys.executable, "-m", "conformance_mcp", "--transport", "http", "--port", str(port)]
    with running(command, port, env):
        yield f"http://localhost:{port}/mcp"


def run_suite(node_bin: str, suite: str, url: str, *extra: str) -> tuple[int, int, str]:
    env = {**os.environ, "PATH": node_bin + os.pathsep + os.environ.get("PATH", "")}
    binary = TOOLS / f"conf-{suite}" / "node_modules" / ".bin" / "conformance"
    done = subprocess.run(
        [str(binary), "server", "--url", url, "--suite", "all", *extra],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    output = done.stdout + done.stderr
    match = re.search(r"Total: (\d+) passed, (\d+) failed", output)
    assert match, output[-4000:]
    return int(match.group(1)), int(match.group(2)), output


@pytest.mark.parametrize(
    ("suite", "extra"), [("0.1.16", ()), ("alpha", ("--spec-version", "2026-07-28"))]
)
def test_conformance_suite(
    node_bin: str, server_url: str, suite: str, extra: tuple[str, ...]
) -> None:
    passed, failed, output = run_suite(node_bin, suite, server_url, *extra)
    failures = [line for line in output.splitlines() if line.startswith("✗")]
    print(f"conformance {suite}: {passed} passed, {failed} failed")
    assert failed == 0, "\n".join(failures) or output[-4000:]
    assert (
        passed >= REFERENCE[suite]
    ), f"{passed} passed, the reference server passes {REFERENCE[suite]}"
