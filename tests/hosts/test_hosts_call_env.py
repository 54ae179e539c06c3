"""``mcpgen call`` as a user runs it (issue 34 item 10): the spawned server sees the
user's own environment variables (they were filtered out without a word), and a server
that refuses the token says so with a 401 hint instead of "Server returned an error
response"."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from hostkit import copy_example, mcpgen

pytestmark = pytest.mark.timeout(180)

HANDLER = '''"""random_fact, reading a variable of the user's shell."""

from __future__ import annotations

import os

import mcp_types as types

from ... import ToolReturn
from ...models import RandomFactInput


async def handle(args: RandomFactInput) -> ToolReturn:
    return [types.TextContent(type="text", text=os.environ.get("CALC_FACT", "unset"))]
'''


def test_the_spawned_server_sees_the_users_variables(tmp_path: Path) -> None:
    project = copy_example("calculator", tmp_path, venv_script=False)
    handler = project / "src" / "calculator_mcp" / "handlers" / "tools" / "random_fact.py"
    handler.write_text(HANDLER)
    # no venv, no script on PATH: the project runs from its own source folder
    bare = {"PATH": "/usr/bin:/bin"}
    done = mcpgen("call", str(project), "random_fact", CALC_FACT="pi is 3.14159", **bare)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "pi is 3.14159\n"
    given = mcpgen(
        "call", str(project), "random_fact", "--env", "CALC_FACT=from --env", CALC_FACT="x", **bare
    )
    assert given.stdout == "from --env\n"  # --env wins over the shell's value


class Refusing(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = b'{"error": "invalid_token"}'
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Bearer realm="mcp", error="invalid_token"')
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_DELETE = do_POST


@pytest.fixture
def refusing() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Refusing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
    finally:
        server.shutdown()
        server.server_close()


def test_a_refused_token_gets_a_401_hint(refusing: str) -> None:
    wrong = mcpgen("call", refusing, "add", "numbers=[1]", "--token", "not-the-token")
    assert wrong.returncode == 2
    assert wrong.stderr.startswith(f"error: {refusing}: ")
    assert wrong.stderr.rstrip().endswith(
        "(HTTP 401: the server refused the token given; check --token)"
    )
    assert "not-the-token" not in wrong.stderr
    # a header named in any case is a token given (HTTP header names ignore case)
    upper = mcpgen("list", refusing, "--header", "AUTHORIZATION=Bearer not-the-token")
    assert upper.returncode == 2
    assert upper.stderr.rstrip().endswith(
        "(HTTP 401: the server refused the token given; check --token)"
    )
    none = mcpgen("list", refusing)
    assert none.returncode == 2
    assert none.stderr.rstrip().endswith("(HTTP 401: the server wants a token: --token TOKEN)")
