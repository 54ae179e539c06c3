"""The TypeScript SDK 1.32's ``client.experimental.tasks`` against a generated server with
task tools (tests/fixtures/tasks), handshake era over streamable HTTP (docs/tasks.md).
Installs the SDK into tests/ts_client/node_modules when it is missing."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import tasks_kit as kit
from e2e_support import http_server
from support import TS_CLIENT, ts_node
from test_tasks_generated import KEYS, build_jobs

pytestmark = pytest.mark.timeout(600)


def test_typescript_tasks_client(tmp_path: Path) -> None:
    runner = ts_node()
    built = build_jobs(tmp_path)
    with http_server(built, KEYS, tmp_path / "server.log") as url:
        done = subprocess.run(
            [runner, "tasks.mjs", url, kit.ALICE],
            cwd=TS_CLIENT,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    seen: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["capabilities"]["tasks"]["requests"] == {"tools": {"call": {}}}
    assert seen["execution"]["export"] == {"taskSupport": "required"}
    report = seen["report"]["seen"]
    assert report[0] == {"type": "taskCreated", "status": "working"}
    assert report[-1]["type"] == "result"
    assert report[-1]["result"]["content"][0]["text"] == "report of 2 steps"
    assert seen["got"]["status"] == "completed"
    failing = seen["failing"]["seen"]  # the SDK ends the stream at the failed status
    assert failing[1] == {
        "type": "taskStatus",
        "status": "failed",
        "message": "the report could not be built",
    }
    assert failing[-1]["type"] == "error" and "failed" in failing[-1]["error"]
    cancelled = seen["cancelled"]["seen"]
    assert cancelled[1]["type"] == "taskStatus" and cancelled[1]["status"] == "cancelled"
    assert cancelled[-1]["type"] == "error" and "cancelled" in cancelled[-1]["error"]
    assert "requires task" in seen["plainRequired"]
    assert seen["report"]["taskId"] in seen["listed"]
