"""The fixture server over stdio, spoken to in raw JSON-RPC lines (``rtserve.py`` in a
subprocess; a thread collects what it writes on stdout and stderr)."""

from __future__ import annotations

import itertools
import json
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import rtkit
from rtconnect import process_env, rtserve

PROTOCOL = "2025-11-25"
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602


def request(id_: Any, method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    return message


def call(id_: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return request(id_, "tools/call", {"name": name, "arguments": arguments})


INITIALIZE = request(
    0,
    "initialize",
    {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
)
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def lines(messages: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(m).encode() + b"\n" for m in messages)


def env() -> dict[str, str]:
    return {**process_env(rtkit.make_spec("none")), "PYTHONUNBUFFERED": "1"}


def popen(*flags: str, **streams: Any) -> subprocess.Popen[bytes]:
    """The fixture server on stdio; ``streams`` are Popen's stdin/stdout/stderr."""
    return subprocess.Popen(rtserve(*flags), env=env(), **streams)


class Stdio:
    """A server subprocess spoken to in raw lines."""

    def __init__(self, *flags: str) -> None:
        self.process = popen(
            *flags, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        self._log: list[bytes] = []
        self._out = threading.Thread(target=self._read, daemon=True)
        self._err = threading.Thread(target=self._read_err, daemon=True)
        self._out.start()
        self._err.start()
        self.ids = itertools.count(1000)

    @property
    def stderr(self) -> bytes:
        return b"".join(self._log)

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def _read_err(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._log.append(line)

    def send(self, message: dict[str, Any] | bytes) -> None:
        raw = message if isinstance(message, bytes) else json.dumps(message).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(raw + b"\n")
        self.process.stdin.flush()

    def receive(self, timeout: float = 20) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(self.lines.get(timeout=timeout))
        return message

    def call(self, message: dict[str, Any], timeout: float = 20) -> dict[str, Any]:
        self.send(message)
        while True:
            answer = self.receive(timeout)
            if answer.get("id") == message["id"]:
                return answer

    def exchange(self, raw: bytes) -> list[dict[str, Any]]:
        """Send ``raw``, then a ping; everything written before the ping's answer."""
        self.send(raw)
        ping = request(f"ping-{next(self.ids)}", "ping")
        self.send(ping)
        seen = []
        while True:
            answer = self.receive()
            if answer.get("id") == ping["id"]:
                return seen
            seen.append(answer)

    def initialize(self) -> None:
        answer = self.call(INITIALIZE, timeout=60)
        assert answer["result"]["protocolVersion"] == PROTOCOL
        self.send(INITIALIZED)

    def echo_works(self) -> None:
        answer = self.call(call(f"echo-{next(self.ids)}", "echo", {"text": "still here"}))
        assert answer["result"]["structuredContent"] == {"text": "still here"}, answer

    def close(self, timeout: float = 20) -> int:
        """Close stdin (end of input) and wait for the exit status."""
        if self.process.stdin and not self.process.stdin.closed:
            self.process.stdin.close()
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise
        self._err.join(5)
        return code

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def wait_for(path: Path, timeout: float = 20) -> float:
    started = time.monotonic()
    while not path.exists():
        assert time.monotonic() - started < timeout, f"{path} never appeared"
        time.sleep(0.01)
    return time.monotonic() - started


def wait_until(condition: Any, timeout: float = 20) -> None:
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout, "timed out waiting"
        time.sleep(0.02)


def cleaned_up(marker: Path, timeout: float = 20) -> bool:
    """True once the handler's ``finally`` wrote its marker (read whole, not mid-write)."""
    wait_until(lambda: marker.exists() and marker.read_text() == "cleanup", timeout)
    return True
