"""A local upstream that records the raw requests it receives (method, target, headers,
body bytes), and the runtime's ``Upstream`` pointed at it for an imported document.

The recorder is ``http.server`` in a thread on 127.0.0.1: it parses nothing for the test,
so what a test asserts is the bytes on the wire. ``answer`` sets what it replies.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from mcpgen.load import load_text
from mcpgen.openapi import OpenAPIImport, import_openapi
from mcpgen.openapi.result import operation_data
from mcpgen.runtime.upstream import Upstream


@dataclass
class Seen:
    method: str
    target: str
    headers: dict[str, str]  # lower-case names
    body: bytes
    raw_headers: list[tuple[str, str]] = field(default_factory=list)  # as sent, in order


@dataclass
class Recorder:
    url: str
    seen: list[Seen] = field(default_factory=list)
    status: int = 200
    media: str = "application/json"
    reply: bytes = b"{}"
    headers: list[tuple[str, str]] = field(default_factory=list)  # more answer headers
    moved: dict[str, str] = field(default_factory=dict)  # path -> Location of a 301 there
    moved_status: int = 301  # the status of those redirects

    def answer(self, status: int, media: str, reply: bytes) -> None:
        self.status, self.media, self.reply = status, media, reply


@contextmanager
def recorder() -> Iterator[Recorder]:
    box: list[Recorder] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # else each answer waits for a delayed ACK

        def log_message(self, *args: Any) -> None:
            pass

        def handle_one(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            rec = box[0]
            headers = {k.lower(): v for k, v in self.headers.items()}
            raw = list(self.headers.items())
            rec.seen.append(Seen(self.command, self.path, headers, body, raw))
            moved = rec.moved.get(self.path.split("?")[0])
            if moved is not None:
                self.send_response(rec.moved_status)
                self.send_header("Location", moved)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(rec.status)
            self.send_header("Content-Type", rec.media)
            self.send_header("Content-Length", str(len(rec.reply)))
            for name, value in rec.headers:
                self.send_header(name, value)
            self.end_headers()
            if self.command != "HEAD":  # a HEAD answer has headers only
                self.wfile.write(rec.reply)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_one
        do_HEAD = do_OPTIONS = do_TRACE = handle_one

    class Server(ThreadingHTTPServer):
        daemon_threads = True

        def handle_error(self, request: Any, client_address: Any) -> None:
            pass  # a client that hung up (a refused request) is the test's to judge

    server = Server(("127.0.0.1", 0), Handler)
    box.append(Recorder(f"http://127.0.0.1:{server.server_address[1]}"))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield box[0]
    finally:
        server.shutdown()
        server.server_close()


def imported(data: Any) -> OpenAPIImport:
    doc = load_text(json.dumps(data, indent=1), "inline.json", Path("."), json_first=True)
    return import_openapi(doc, {})


def operations(data: Any) -> dict[str, dict[str, Any]]:
    """Each tool's name -> its operation as ``_spec.json`` carries it."""
    result = imported(data)
    return {
        tool["name"]: operation_data(op)
        for tool, op in zip(result.tools, result.operations, strict=True)
    }


def upstream(url: str, schemes: dict[str, Any] | None = None) -> Upstream:
    for name in schemes or {}:  # the server's own secrets (test values)
        base = "MCPGEN_TEST_WIRE_API_" + "".join(c if c.isalnum() else "_" for c in name).upper()
        for suffix in ("", "_USERNAME", "_PASSWORD"):
            os.environ.setdefault(base + suffix, f"secret-{name}{suffix}")
    settings = {
        "baseUrl": url,
        "baseUrlEnv": "MCPGEN_TEST_UNSET_BASE_URL",
        "envPrefix": "MCPGEN_TEST_WIRE_API",
        "securitySchemes": schemes or {},
    }
    return Upstream(settings, "no_such_package")


def multipart(seen: Seen) -> list[tuple[dict[str, str], bytes]]:
    """The parts of a multipart body: (headers with lower-case names, content)."""
    boundary = seen.headers["content-type"].split("boundary=", 1)[1].strip('"').encode()
    found = []
    for chunk in seen.body.split(b"--" + boundary)[1:-1]:
        head, _, content = chunk[2:].partition(b"\r\n\r\n")
        headers = dict(
            (k.strip().lower(), v.strip())
            for k, _, v in (line.partition(":") for line in head.decode().split("\r\n"))
        )
        found.append((headers, content[:-2]))  # the CRLF before the next boundary
    return found


def part_name(headers: dict[str, str]) -> str:
    disposition = headers["content-disposition"]
    return disposition.split('name="', 1)[1].split('"', 1)[0]
