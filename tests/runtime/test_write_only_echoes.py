"""An upstream on 127.0.0.1 that echoes the request it receives (the body a tool sends, a
``password`` the document marks ``writeOnly`` in it) as whatever answer a sloppy API
gives: JSON labelled ``text/plain`` or with no type, a 400 or 422 error, the final answer
of a polled operation (202 + ``Location``). None of them reaches the MCP client with the
password (``answers.result`` strips every body that parses as JSON, whatever its status or
label; a polled result the document does not describe gets the request body's plan)."""

from __future__ import annotations

import json
import threading
from base64 import b64decode
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from wirekit import imported, operations, upstream

from mcpgen.runtime.schemas import validator

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]

USER = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "password": {"type": "string", "writeOnly": True}},
}
REF = {"$ref": "#/components/schemas/User"}
SENT = {"name": "ann", "password": "hunter2"}


@contextmanager
def echo(status: int, media: str | None, poll: bool = False) -> Iterator[str]:
    """A server answering ``status`` with the body it received; ``poll``: a POST answers
    202 with a ``Location`` where a GET gets the echo."""
    kept: list[bytes] = [b""]

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            kept[0] = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if poll:
                self.send_response(202)
                self.send_header("Location", "/jobs/1")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.do_GET()

        def do_GET(self) -> None:
            body = kept[0]
            self.send_response(status)
            if media is not None:
                self.send_header("Content-Type", media)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def document(responses: dict[str, Any]) -> Any:
    """``POST /users``: a User body (its password sent) answered with ``responses``."""
    body = {"content": {"application/json": {"schema": REF}}, "required": True}
    op = {"operationId": "send", "requestBody": body, "responses": responses}
    return {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {"/users": {"post": op}},
        "components": {"schemas": {"User": USER}},
    }


def answer(schema: Any = REF) -> dict[str, Any]:
    return {"description": "ok", "content": {"application/json": {"schema": schema}}}


async def call(data: Any, url: str) -> tuple[bool, str]:
    (tool,) = imported(data).tools
    output = validator(tool["output"]) if tool.get("output") else None
    op = operations(data)["send"]
    if "poll" in op:
        op["poll"]["interval"] = 0.01
    result = await upstream(url).call(op, SENT, None, output)
    texts = [getattr(c, "text", None) or str(c) for c in result.content]
    blobs = [b64decode(c.resource.blob).decode() for c in result.content if c.type == "resource"]
    return result.is_error, " ".join([json.dumps(result.structured_content), *texts, *blobs])


NO_SCHEMA = {"200": answer(), "204": {"description": "none"}}  # a 204 takes the schema away


@pytest.mark.parametrize("media", ["text/plain", None, "text/json; charset=utf-8"])
async def test_json_under_another_label_is_stripped(media: str | None) -> None:
    """JSON labelled ``text/plain`` (or with no type) to a tool with no output schema went
    to the client as text, or an embedded resource, with the password."""
    with echo(200, media) as url:
        failed, shown = await call(document(NO_SCHEMA), url)
    assert not failed and "hunter2" not in shown
    assert "ann" in shown


@pytest.mark.parametrize("status", [400, 422, 500])
@pytest.mark.parametrize("media", ["application/json", "text/plain"])
async def test_an_error_that_echoes_the_request_quotes_no_password(status: int, media: str) -> None:
    """A 400, 422 or 500 echoing the body: the error quoted the password. The success
    schema's plan (what any answer of the operation marks) strips it; the rest stays."""
    with echo(status, media) as url:
        failed, shown = await call(document({"200": answer()}), url)
    assert failed and f"HTTP {status}" in shown
    assert "hunter2" not in shown and '"name":"ann"' in shown.replace(" ", "")


async def test_a_polled_operations_result_is_stripped() -> None:
    """A 202 with a ``Location`` polled there: the final answer, echoing the body, reached
    the client with the password when the document describes only the 202 (the request
    body's plan applies to it), as when it describes the 200 too."""
    job = {"type": "object", "properties": {"status": {"type": "string"}}}
    accepted = answer(job) | {"headers": {"Location": {"schema": {"type": "string"}}}}
    for responses in ({"202": accepted}, {"200": answer(), "202": accepted}):
        with echo(200, "application/json", poll=True) as url:
            failed, shown = await call(document(responses), url)
        assert not failed and "hunter2" not in shown and "ann" in shown, responses
