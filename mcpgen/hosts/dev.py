"""``mcpgen dev MANIFEST``: build, run the server, and on every change (polled) rebuild
(the manifest and its files) or restart (handler code); a failed build keeps the last."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpgen.host_entry import ProjectError

from .project import describe, launcher, script_in, venv_bin

POLL = 0.3  # seconds between two looks at the modification times


def say(line: str, details: Sequence[str] = ()) -> None:
    for text in [line, *("  " + detail for detail in details)]:
        print("dev: " + text, file=sys.stderr, flush=True)


def referenced_files(manifest: Path) -> list[Path]:
    """The local files ``manifest`` names (resource ``file``, ``jwksFile``, OpenAPI ``source``)."""
    from mcpgen.load import load_file
    from mcpgen.problems import InputError

    try:  # mcpgen's loader: it refuses what is not UTF-8, an alias bomb, deep nesting
        data = load_file(manifest).data
    except InputError:
        return []

    def walk(node: Any) -> Iterator[str]:
        node = dict(enumerate(node)) if isinstance(node, list) else node
        for key, value in node.items() if isinstance(node, dict) else ():
            if key in ("file", "jwksFile") and isinstance(value, str):
                yield value
            else:
                yield from walk(value)

    found = list(walk(data))
    match data:
        case {"openapi": {"source": str(source)}}:
            found.append(source)
    base = manifest.parent
    return sorted({(base / f).resolve() for f in found if "://" not in f and (base / f).is_file()})


def snapshot(paths: list[Path], folders: list[Path]) -> dict[Path, int]:
    """Modification times (-1: missing) of ``paths`` and the ``.py`` files under ``folders``."""
    code = [p for folder in folders for p in folder.rglob("*.py") if "__pycache__" not in p.parts]
    times: dict[Path, int] = {}
    for path in [*paths, *code]:
        try:
            times[path] = path.stat().st_mtime_ns
        except OSError:
            times[path] = -1
    return times


def build(manifest: Path, output: Path) -> tuple[bool, float, list[str]]:
    """``mcpgen build MANIFEST -o OUTPUT`` in a subprocess: (ok, seconds, its messages)."""
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "mcpgen", "build", str(manifest), "-o", str(output)],
        capture_output=True,
        text=True,
        check=False,
    )
    lines = [line for line in (done.stderr + done.stdout).splitlines() if line.strip()]
    return done.returncode == 0, time.monotonic() - start, lines


def _port_open(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


@dataclass
class Server:
    """The running server process (or none)."""

    argv: list[str]
    env: dict[str, str]
    transport: str
    port: int
    process: subprocess.Popen[bytes] | None = None

    def launch(self, verb: str) -> str:
        """Start it; "VERB WHERE" once it is ready, or why it failed."""
        self.process = subprocess.Popen(self.argv, env={**os.environ, **self.env})
        deadline = time.monotonic() + 30
        while self.transport == "http" and not _port_open(self.port):
            if self.process.poll() is not None:
                return f"server failed: the server exited with status {self.process.returncode}"
            if time.monotonic() > deadline:
                return f"server failed: nothing listened on port {self.port} within 30 s"
            time.sleep(0.05)
        where = f"http://127.0.0.1:{self.port}/mcp" if self.transport == "http" else "stdio"
        return f"{verb} {where} (pid {self.process.pid})"

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if self.transport == "http":  # the next one binds the same port
            deadline = time.monotonic() + 5
            while _port_open(self.port) and time.monotonic() < deadline:
                time.sleep(0.05)


def _server_for(output: Path, transport: str | None, port: int, python: Path | None) -> Server:
    """The server run from OUTPUT/src (an edit is what runs) by the ``.venv``'s python, else
    ``python``, else mcpgen's; ``transport`` None: http when offered, else stdio."""
    project = describe(output)
    offer = project.transports
    transport = transport or ("http" if "http" in offer else "stdio")
    if transport not in offer:
        raise ProjectError(f"the server does not offer {transport} (it offers {', '.join(offer)})")
    python = python or script_in(venv_bin(output / ".venv"), "python") or Path(sys.executable)
    try:
        run = launcher(project, python, "source", stdio=False)
    except ProjectError:  # not that interpreter's other installs: they run older code
        run = launcher(project, stdio=False, own=python)  # no uvx: python's error
    listen = ["--port", str(port)] if transport == "http" else []
    return Server([*run.argv, "--transport", transport, *listen], dict(run.env), transport, port)


def _relative(path: Path, *bases: Path) -> str:
    for base in bases:
        if path.resolve().is_relative_to(base.resolve()):
            return path.resolve().relative_to(base.resolve()).as_posix()
    return str(path)


def dev(manifest: Path, output: Path, transport: str | None, port: int, python: Path | None) -> int:
    """The loop; returns the exit status when stopped (SIGINT/SIGTERM): 0."""
    manifest, output = manifest.resolve(), output.resolve()
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)  # as Ctrl-C
    server: Server | None = None
    try:
        ok, seconds, lines = build(manifest, output)
        watched = _watch_list(manifest, output)
        times = snapshot(*watched)  # before anyone is told the server is up
        if ok:
            server = _server_for(output, transport, port, python)
            built = f"built {_relative(output, Path.cwd())} in {seconds:.1f} s; "
            say(built + server.launch("serving"))
        else:
            for line in lines:
                say("  " + line)
            say("build failed; fix the manifest (watching for changes)")
        while True:
            time.sleep(POLL)
            now = snapshot(*watched)
            if now == times:
                if server and server.process and server.process.poll() is not None:
                    say(
                        f"the server exited with status {server.process.returncode}; "
                        "waiting for a change"
                    )
                    server.process = None
                continue
            time.sleep(POLL)  # let an editor finish writing
            now = snapshot(*watched)
            files = sorted(p for p in times.keys() | now.keys() if times.get(p) != now.get(p))
            times = now
            what = ", ".join(_relative(f, manifest.parent, output) for f in files[:3])
            what += f" and {len(files) - 3} more" if len(files) > 3 else ""
            handlers = output / "src"
            sources = [f for f in files if not f.resolve().is_relative_to(handlers.resolve())]
            done = ""
            # a change that does not reach the server: the last good one, if any, runs on
            kept = "; the last good server keeps running:" if server else ":"
            if sources:
                ok, seconds, lines = build(manifest, output)
                if not ok:
                    say(f"{what} changed: build failed{kept}", lines)
                    continue
                watched = _watch_list(manifest, output)
                times = snapshot(*watched)
                done = f"rebuilt in {seconds:.1f} s, "
                for line in lines:  # what build says: breaking changes, stubs, ...
                    if not line.startswith(("tools/list:", "built ")):
                        say("  " + line.strip())
            if broken := _syntax_errors(files, manifest.parent, output):
                say(f"{what} changed: not restarted{kept}", broken)
                continue
            if server is not None:
                server.stop()
            if sources or server is None:  # a rebuild may rename the package
                server = _server_for(output, transport, port, python)
            say(f"{what} changed: {done}" + server.launch("restarted"))
    except KeyboardInterrupt:
        return 0
    except ProjectError as exc:
        say(f"cannot run the server: {exc}")
        return 2
    finally:
        if server is not None:
            server.stop()
        signal.signal(signal.SIGTERM, previous)


def _syntax_errors(files: list[Path], *bases: Path) -> list[str]:
    """``FILE:LINE: message`` for each changed Python file that does not compile."""
    found = []
    for path in files:
        if path.suffix != ".py" or not path.is_file():
            continue
        try:
            compile(path.read_text("utf-8"), str(path), "exec")
        except (SyntaxError, UnicodeDecodeError, ValueError) as exc:
            line = getattr(exc, "lineno", None) or 1
            found.append(f"{_relative(path, *bases)}:{line}: {getattr(exc, 'msg', exc)}")
    return found


def _watch_list(manifest: Path, output: Path) -> tuple[list[Path], list[Path]]:
    """The manifest, the files it names, and the package's handlers folder."""
    return [manifest, *referenced_files(manifest)], sorted((output / "src").glob("*/handlers"))
