"""Asynchronous OpenAPI operations as tasks (docs/tasks.md): a ``202`` with ``Location``
makes a ``task: optional`` tool that polls the Location (``Retry-After``, a JSON
``status``, 303 to the result), switchable per operation in ``openapi.overrides``."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest
import yaml
from mcp.client import Client

from mcpgen.pipeline import load_manifest
from mcpgen.render.spec import spec_data
from mcpgen.runtime.client import ToolCallError
from mcpgen.runtime.server import Handlers, build_server
from mcpgen.runtime.tasks_client import TaskClient

pytestmark = pytest.mark.timeout(60)

SPEC: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "Exports", "version": "1"},
    "servers": [{"url": "http://127.0.0.1:1"}],
    "paths": {
        "/exports": {
            "post": {
                "operationId": "startExport",
                "responses": {
                    "202": {
                        "description": "accepted",
                        "headers": {"Location": {"schema": {"type": "string"}}},
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {"status": {"type": "string"}},
                                }
                            }
                        },
                    }
                },
            }
        },
        "/broken": {
            "post": {
                "operationId": "startBroken",
                "responses": {"202": {"description": "x", "headers": {"Location": {}}}},
            }
        },
        "/forever": {
            "post": {
                "operationId": "startForever",
                "responses": {"202": {"description": "x", "headers": {"Location": {}}}},
            }
        },
        "/plain": {"get": {"operationId": "getPlain", "responses": {"200": {"description": "ok"}}}},
    },
}


class Api(BaseHTTPRequestHandler):
    """POST /exports -> 202 (Location: jobs/1 relative); GET /jobs/1 -> 202, then 200
    running, then 303 to /results/1 -> 200 {"rows": 3}; POST /broken -> 202 then 500;
    POST /forever -> 202, then 200 running for ever."""

    polls: ClassVar[dict[str, int]] = {}
    seen: ClassVar[list[tuple[str, str, str | None]]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def answer(self, status: int, body: Any = None, **headers: str) -> None:
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key.replace("_", "-"), value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        self.seen.append(("POST", self.path, self.headers.get("Authorization")))
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        target = {"/exports": "jobs/1", "/forever": "/jobs/forever"}.get(self.path, "/jobs/broken")
        self.answer(202, {"status": "queued"}, Location=target, Retry_After="0")

    def do_GET(self) -> None:
        self.seen.append(("GET", self.path, self.headers.get("Authorization")))
        count = self.polls[self.path] = self.polls.get(self.path, 0) + 1
        if self.path == "/jobs/forever":
            self.answer(200, {"status": "running"})
        elif self.path == "/jobs/broken":
            self.answer(500, {"message": "the export blew up"})
        elif self.path == "/jobs/1" and count == 1:
            self.answer(202, {"status": "queued"}, Retry_After="0")
        elif self.path == "/jobs/1" and count == 2:
            self.answer(200, {"status": "running", "done": 50})
        elif self.path == "/jobs/1":
            self.answer(303, None, Location="/results/1")
        elif self.path == "/results/1":
            self.answer(200, {"rows": 3})
        else:
            self.answer(200, {"plain": True})


@pytest.fixture
def api() -> Iterator[str]:
    Api.polls, Api.seen = {}, []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Api)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def manifest(tmp_path: Path, overrides: dict[str, Any] | None = None) -> Any:
    (tmp_path / "api.yaml").write_text(yaml.safe_dump(SPEC))
    source = {
        "mcpgen": 1,
        "server": {"name": "exports", "description": "x"},
        "openapi": {"source": "api.yaml", "overrides": overrides or {}},
    }
    (tmp_path / "mcpgen.yaml").write_text(yaml.safe_dump(source))
    return load_manifest(tmp_path / "mcpgen.yaml")


def tools_of(loaded: Any) -> dict[str, Any]:
    assert loaded.manifest is not None, [p.format() for p in loaded.problems.items]
    return {t.name: t for t in loaded.manifest.tools}


def test_a_202_with_location_becomes_an_optional_task(tmp_path: Path) -> None:
    tools = tools_of(manifest(tmp_path))
    export = tools["start_export"]
    assert export.task == "optional"
    assert export.http.poll == {"interval": 2.0, "timeout": 600.0}
    assert export.output_schema is None  # it described the 202 answer
    assert tools["get_plain"].task is None and not tools["get_plain"].http.poll


def test_overrides_tune_or_switch_it_off(tmp_path: Path) -> None:
    tuned = tools_of(manifest(tmp_path, {"startExport": {"poll": {"interval": 0.5, "timeout": 9}}}))
    assert tuned["start_export"].http.poll == {"interval": 0.5, "timeout": 9}
    off = tools_of(manifest(tmp_path, {"startExport": {"poll": False}}))
    assert off["start_export"].task is None and not off["start_export"].http.poll
    plain = tools_of(manifest(tmp_path, {"startExport": {"task": False}}))
    assert plain["start_export"].task is None and plain["start_export"].http.poll
    required = tools_of(manifest(tmp_path, {"startExport": {"task": "required"}}))
    assert required["start_export"].task == "required"
    bad = manifest(tmp_path, {"startExport": {"task": "yes", "poll": {"interval": -1}}})
    messages = [p.format() for p in bad.problems.items]
    assert bad.manifest is None
    task = [m for m in messages if "overrides.startExport.task" in m]
    assert len(task) == 1 and '"yes" is not one of "optional", "required", false' in task[0]
    poll = [m for m in messages if "overrides.startExport.poll" in m]
    assert len(poll) == 1 and "poll.interval: -1 must be greater than 0" in poll[0]


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_polled_as_a_task_to_the_result(
    tmp_path: Path, api: str, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    tools_of(loaded := manifest(tmp_path, {"startExport": {"poll": {"interval": 0.05}}}))
    spec = spec_data(loaded.manifest)
    monkeypatch.setenv(spec["upstream"]["baseUrlEnv"], api)
    async with TaskClient.connect(build_server(spec, Handlers()), mode=mode) as typed:
        task = await typed.start_task("start_export", {})
        statuses: list[Any] = []

        async def seen(status: dict[str, Any]) -> None:
            statuses.append(status.get("statusMessage"))

        result = await typed.wait_task(task["taskId"], seen)
        assert result.structured_content == {"rows": 3}
        assert [s for s in statuses if s] and all("upstream" in s for s in statuses if s)
        assert [p for m, p, _ in Api.seen] == [
            "/exports",
            "/jobs/1",
            "/jobs/1",
            "/jobs/1",
            "/results/1",
        ]
        broken = await typed.start_task("start_broken", {})
        with pytest.raises(Exception, match=r"HTTP 500.*blew up"):
            await typed.wait_task(broken["taskId"])
        plain = await typed.client.call_tool("get_plain", {})
        assert plain.structured_content == {"plain": True}


@pytest.mark.anyio
async def test_a_plain_call_polls_too(
    tmp_path: Path, api: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded = manifest(tmp_path, {"startExport": {"poll": {"interval": 0.05}}})
    spec = spec_data(loaded.manifest)
    monkeypatch.setenv(spec["upstream"]["baseUrlEnv"], api)
    async with Client(build_server(spec, Handlers()), mode="legacy") as client:
        with anyio.fail_after(10):
            result = await client.call_tool("start_export", {})
    assert result.structured_content == {"rows": 3}


@pytest.mark.parametrize(
    ("given", "interval", "waited"),
    [
        ("0", 2.0, 1.0),
        ("0", 0.5, 0.5),
        ("0", 0.0, 0.0),
        ("5", 2.0, 5.0),
        ("999", 2.0, 60.0),
        ("\xb2", 2.0, 2.0),  # "²", a digit to ``str.isdigit``
    ],
)
def test_retry_after_zero_still_pauses_between_polls(
    given: str, interval: float, waited: float
) -> None:
    """``Retry-After: 0`` on every 202 made the server poll without a pause for the whole
    timeout (600 s): hundreds of requests and progress notifications a second from one
    call. It now waits a second, or the configured interval when that is shorter. A
    ``Retry-After: ²`` (byte 0xB2) was a ValueError, so an internal error, here and in a
    retry's backoff."""
    import httpx2

    from mcpgen.runtime.upstream import _backoff
    from mcpgen.runtime.upstream_poll import wait_for

    answer = httpx2.Response(202, headers={"retry-after": given.encode("latin-1")})
    assert wait_for(answer, interval) == waited
    assert _backoff(0, answer.headers["retry-after"]) <= 5.0


def test_a_lone_surrogate_in_a_polled_status_is_replaced() -> None:
    """A poll answering ``{"status": "running \\ud800"}``: its status reaches the client as
    a progress message (or the task's ``statusMessage``), and with the lone surrogate in it
    the client could not parse that message: the whole call failed."""
    import httpx2

    from mcpgen.runtime.upstream_poll import _status, still_running

    answer = httpx2.Response(200, content=b'{"status": "\\ud800 running"}')
    assert _status(answer) == "\ufffd running" and not still_running(answer)


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_an_upstream_that_never_finishes_ends_the_task_or_is_cancelled(
    tmp_path: Path, api: str, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """The poll's timeout ends the task with a tool error (each era's way); a cancelled
    task stops polling."""
    poll = {"startForever": {"poll": {"interval": 0.05, "timeout": 0.5}}}
    spec = spec_data(manifest(tmp_path, poll).manifest)
    monkeypatch.setenv(spec["upstream"]["baseUrlEnv"], api)
    async with TaskClient.connect(build_server(spec, Handlers()), mode=mode) as typed:
        task = await typed.start_task("start_forever", {})
        with (
            anyio.fail_after(10),
            pytest.raises(ToolCallError, match=r"still running after 0\.5 s"),
        ):
            await typed.wait_task(task["taskId"])
        (forever,) = [e for e in spec["tools"] if e["ident"] == "start_forever"]
        forever["http"]["poll"]["timeout"] = 600
    async with TaskClient.connect(build_server(spec, Handlers()), mode=mode) as typed:
        task = await typed.start_task("start_forever", {})
        await anyio.sleep(0.3)
        await typed.cancel_task(task["taskId"])
        await anyio.sleep(0.2)
        polls = Api.polls["/jobs/forever"]
        await anyio.sleep(0.3)
        assert Api.polls["/jobs/forever"] == polls > 3
        assert (await typed.task_status(task["taskId"]))["status"] == "cancelled"
