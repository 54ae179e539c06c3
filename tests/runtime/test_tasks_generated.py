"""MCP tasks on a *generated* server (tests/fixtures/tasks/tasks.yaml built with its
handlers), raw JSON-RPC over stdio and streamable HTTP in both eras (docs/tasks.md)."""

from __future__ import annotations

import json
import queue
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
import tasks_kit as kit
from e2e_support import Built, build, http_server, server_env

pytestmark = pytest.mark.timeout(180)
FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "tasks"
KEYS = {"JOBS_TOKENS": f"{kit.ALICE},{kit.BOB}"}


def build_jobs(directory: Path) -> Built:
    built = build(FIXTURE / "tasks.yaml", directory / "jobs", "jobs_mcp")
    for handler in (FIXTURE / "handlers").glob("*.py"):
        shutil.copy(handler, built.src / "jobs_mcp" / "handlers" / "tools" / handler.name)
    return built


@pytest.fixture(scope="module")
def jobs(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return build_jobs(tmp_path_factory.mktemp("jobs"))


class Lines:
    """The generated server on stdio, spoken to in raw JSON-RPC lines."""

    def __init__(self, built: Built, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", built.package],
            env=server_env(built, env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.ids = 0

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def send(self, method: str, params: Any, *, notify: bool = False) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notify:
            self.ids += 1
            message["id"] = self.ids
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()
        while not notify:
            answer: dict[str, Any] = json.loads(self.lines.get(timeout=30))
            if answer.get("id") == message["id"]:
                return answer
        return {}

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def stdio(jobs: Built, tmp_path: Path) -> Iterator[Lines]:
    lines = Lines(jobs, {"JOBS_MARKER": str(tmp_path / "marker")})
    try:
        yield lines
    finally:
        lines.close()


def until(get: Any, *statuses: str, timeout: float = 15) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        result: dict[str, Any] = get()["result"]
        if result["status"] in statuses:
            return result
        assert time.monotonic() < deadline, result
        time.sleep(0.05)


def test_stdio_handshake_era(stdio: Lines, tmp_path: Path) -> None:
    opened = stdio.send(
        "initialize",
        {
            "protocolVersion": kit.LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    )
    assert "tasks" in opened["result"]["capabilities"]
    stdio.send("notifications/initialized", {}, notify=True)
    started = time.monotonic()
    created = stdio.send(
        "tools/call", {"name": "report", "arguments": {"steps": 2, "delay": 0.3}, "task": {}}
    )
    assert time.monotonic() - started < 1.0
    task_id = created["result"]["task"]["taskId"]
    result = stdio.send("tasks/result", {"taskId": task_id})["result"]
    assert result["content"][0]["text"] == "report of 2 steps"
    get = stdio.send("tasks/get", {"taskId": task_id})["result"]
    assert get["status"] == "completed" and get["statusMessage"] == "step 2 of 2"
    plain = stdio.send("tools/call", {"name": "export", "arguments": {}})
    assert plain["error"]["code"] == -32601
    long = stdio.send("tools/call", {"name": "export", "arguments": {"seconds": 60}, "task": {}})
    long_id = long["result"]["task"]["taskId"]
    time.sleep(0.3)
    stopped = stdio.send("tasks/cancel", {"taskId": long_id})["result"]
    assert stopped["status"] == "cancelled"
    deadline = time.monotonic() + 5
    while not (tmp_path / "marker").exists():
        assert time.monotonic() < deadline, "the handler was not cancelled within 5 s"
        time.sleep(0.05)
    listed = stdio.send("tasks/list", {})["result"]["tasks"]
    assert {t["taskId"] for t in listed} == {task_id, long_id}


def test_stdio_2026_extension(stdio: Lines) -> None:
    meta = {
        "io.modelcontextprotocol/protocolVersion": kit.MODERN,
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {kit.EXTENSION: {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
    }
    created = stdio.send(
        "tools/call", {"name": "export", "arguments": {"seconds": 0.2}, "_meta": meta}
    )["result"]
    assert created["resultType"] == "task" and created["status"] == "working"
    done = until(
        lambda: stdio.send("tasks/get", {"taskId": created["taskId"], "_meta": meta}),
        "completed",
    )
    assert done["result"]["content"][0]["text"] == "exported by one"


async def _http_round(url: str) -> None:
    async with httpx2.AsyncClient(base_url=url.removesuffix("/mcp")) as http:
        for era in (kit.LEGACY, kit.MODERN):
            rpc = kit.Rpc(http, kit.ALICE, era)
            if era == kit.LEGACY:
                await rpc.open()
            task_id = await rpc.task("report", {"steps": 1, "fail": "protocol"})
            failed = await rpc.until(task_id, "failed", "completed")
            assert failed["status"] == "failed"
            other = kit.Rpc(http, kit.BOB, era)
            if era == kit.LEGACY:
                await other.open()
            assert (await other.get(task_id))["error"]["code"] == -32602


def test_http_both_eras(jobs: Built, tmp_path: Path) -> None:
    with http_server(jobs, KEYS, tmp_path / "server.log") as url:
        anyio.run(_http_round, url)
