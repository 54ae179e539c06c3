"""``mcpgen dev``: builds and serves, restarts on a handler edit, rebuilds on a manifest
edit, and keeps the last good server when a build fails (one located line per event)."""

from __future__ import annotations

import queue
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from hostkit import ROOT, cli_env

from mcpgen.runtime.testing import free_port

pytestmark = pytest.mark.timeout(240)

HANDLER = """from __future__ import annotations

from ...models import AddInput, AddOutput


async def handle(args: AddInput) -> AddOutput:
    return AddOutput(sum=sum(args.numbers) + {bonus})
"""
NEW_TOOL = """
  - name: negate
    description: Negate a number.
    input:
      type: object
      properties: {x: {type: number}}
      required: [x]
"""


class Dev:
    """``mcpgen dev`` running in a subprocess; its ``dev:`` lines read as they come."""

    def __init__(self, manifest: Path, output: Path, port: int) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mcpgen", "dev", str(manifest), "-o", str(output),
             "--port", str(port)],
            env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            if line.startswith("dev: "):
                self.lines.put(line[5:].rstrip("\n"))

    def expect(self, text: str, timeout: float = 90) -> list[str]:
        """The dev lines up to and including the first containing ``text``."""
        seen: list[str] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.5)
            except queue.Empty:
                assert self.process.poll() is None, f"mcpgen dev exited: {seen}"
                continue
            seen.append(line)
            if text in line:
                return seen
        raise AssertionError(f"no line with {text!r} within {timeout} s: {seen}")


@pytest.fixture
def dev(tmp_path: Path) -> Iterator[tuple[Dev, Path, Path, str]]:
    manifest = tmp_path / "calculator.yaml"
    shutil.copy(ROOT / "manifests" / "calculator.yaml", manifest)
    output = tmp_path / "out"
    port = free_port()
    running = Dev(manifest, output, port)
    try:
        yield running, manifest, output, f"http://127.0.0.1:{port}/mcp"
    finally:
        running.process.terminate()
        running.process.wait(timeout=30)


async def _call(url: str, tool: str, arguments: dict[str, object]) -> object:
    from mcp.client import Client

    async with Client(url) as client:
        return (await client.call_tool(tool, arguments)).structured_content


async def _tools(url: str) -> list[str]:
    from mcp.client import Client

    async with Client(url) as client:
        return sorted(t.name for t in (await client.list_tools()).tools)


def _touch_later(path: Path, text: str) -> None:
    """Write ``text`` with a modification time surely after the previous one."""
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text)
    while path.stat().st_mtime_ns == before:
        time.sleep(0.05)
        path.write_text(text)


def test_dev_picks_up_a_handler_edit_and_a_manifest_edit(
    dev: tuple[Dev, Path, Path, str],
) -> None:
    running, manifest, output, url = dev
    first = running.expect("serving")[-1]
    assert first.startswith("built ") and url in first

    handler = output / "src" / "calculator_mcp" / "handlers" / "tools" / "add.py"
    _touch_later(handler, HANDLER.format(bonus=100))
    line = running.expect("restarted")[-1]
    assert line.startswith("out/src/calculator_mcp/handlers/tools/add.py changed: restarted")
    assert anyio.run(_call, url, "add", {"numbers": [1, 2]}) == {"sum": 103}

    text = manifest.read_text()
    _touch_later(manifest, text.replace("\ntools:\n", "\ntools:\n" + NEW_TOOL, 1))
    seen = running.expect("restarted")
    assert seen[-1].startswith("calculator.yaml changed: rebuilt in ")
    # what build says is shown too (issue 34 item 6)
    assert any("new stub: src/calculator_mcp/handlers/tools/negate.py" in s for s in seen), seen
    assert "negate" in anyio.run(_tools, url)
    assert (output / "src/calculator_mcp/handlers/tools/negate.py").is_file()
    assert anyio.run(_call, url, "add", {"numbers": [1, 2]}) == {"sum": 103}  # kept

    # a handler that does not compile: located, and the last good server keeps running
    _touch_later(handler, "async def handle(args:\n")
    kept = running.expect("not restarted")
    assert kept[-1].endswith("changed: not restarted; the last good server keeps running:")
    assert re.search(r"handlers/tools/add\.py:1: ", running.expect("add.py:")[-1])
    assert anyio.run(_call, url, "add", {"numbers": [1, 2]}) == {"sum": 103}
    _touch_later(handler, HANDLER.format(bonus=100))
    running.expect("restarted")

    _touch_later(manifest, manifest.read_text() + "broken: [\n")
    failed = running.expect("build failed")
    assert (
        failed[-1] == "calculator.yaml changed: build failed; the last good server keeps running:"
    )
    located = running.expect("error")[-1]
    assert re.search(r"calculator\.yaml:\d+:\d+: error: ", located), located
    assert "negate" in anyio.run(_tools, url)  # the last good server still answers


def test_the_files_dev_watches_are_read_with_mcpgens_loader(tmp_path: Path) -> None:
    """What a manifest names is found; a manifest that is not UTF-8 or is an alias bomb
    names nothing (it was an internal error, and a walk of 9**9 nodes that never ended)."""
    from mcpgen.hosts.dev import referenced_files

    good = tmp_path / "good.yaml"
    good.write_text("mcpgen: 1\nresources: [{uri: 'x://a', file: docs/a.md}]\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("a\n")
    assert referenced_files(good) == [(tmp_path / "docs" / "a.md").resolve()]
    latin1 = tmp_path / "latin1.yaml"
    latin1.write_bytes(b"mcpgen: 1\nserver: {name: caf\xe9}\n")
    bomb = tmp_path / "bomb.yaml"
    lines = ["a: &a [" + ", ".join(["x"] * 9) + "]"]
    lines += [
        f"{n}: &{n} [" + ", ".join([f"*{p}"] * 9) + "]"
        for p, n in zip("abcdefgh", "bcdefghi", strict=True)
    ]
    bomb.write_text("\n".join(lines) + "\nfile: *i\n")
    started = time.monotonic()
    assert referenced_files(latin1) == referenced_files(bomb) == []
    assert time.monotonic() - started < 5
