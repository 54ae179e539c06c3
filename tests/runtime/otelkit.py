"""Telemetry tests' pieces: a real OTLP/HTTP receiver on 127.0.0.1 (decoded with
opentelemetry-proto), an upstream that records the headers it gets, the shop server (its
generated ``_spec.json``) run through the runtime's command line, and raw JSON-RPC calls in
both protocol eras."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx2

ROOT = Path(__file__).resolve().parents[2]
SHOP_SPEC = ROOT / "generated_examples" / "shop" / "src" / "shop_mcp" / "_spec.json"
KEYS_ENV = "SHOP_KEYS"
KEY = "mcp-key-0123456789abcdef"
UPSTREAM_KEY = "upstream-secret-key-42"
HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"
ACCEPT = "application/json, text/event-stream"


def shop_spec(auth: str = "none", metrics: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = json.loads(SHOP_SPEC.read_text())
    spec = copy.deepcopy(spec)
    if auth == "bearer":
        spec["auth"] = {"type": "bearer", "env": KEYS_ENV, "header": "Authorization"}
    if metrics:
        spec["observability"] = {"metrics": metrics}
    return spec


class _Recorder(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self, handler: type[BaseHTTPRequestHandler], address: tuple[str, int] = ("127.0.0.1", 0)
    ) -> None:
        super().__init__(address, handler)
        self.received: list[tuple[str, dict[str, str], bytes]] = []
        self.connections = 0
        self.lock = threading.Lock()

    def get_request(self) -> Any:
        with self.lock:
            self.connections += 1
        return super().get_request()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: _Recorder

    def log_message(self, *args: Any) -> None:
        pass

    def _record(self) -> bytes:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        with self.server.lock:
            self.server.received.append((self.path, dict(self.headers.items()), body))
        return body

    def _answer(self, status: int, body: bytes, media: str) -> None:
        self.send_response(status)
        self.send_header("content-type", media)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _Otlp(_Handler):
    def do_POST(self) -> None:
        self._record()
        self._answer(200, b"", "application/x-protobuf")


class _Upstream(_Handler):
    def do_GET(self) -> None:
        self._record()
        if self.path.startswith("/api/items/"):
            self._answer(404, b'{"error": "no such item"}', "application/json")
        else:
            self._answer(200, b'[{"id": 1, "name": "lamp", "price": 2}]', "application/json")


@contextmanager
def serving(
    handler: type[BaseHTTPRequestHandler], address: tuple[str, int] = ("127.0.0.1", 0)
) -> Iterator[_Recorder]:
    server = _Recorder(handler, address)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def receiver() -> Any:
    return serving(_Otlp)


def upstream() -> Any:
    return serving(_Upstream)


def spans(receiver: _Recorder) -> list[dict[str, Any]]:
    """Every span received, as plain dicts (name, kind, ids, attributes, status, resource)."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    found = []
    for path, _, body in list(receiver.received):
        if path != "/v1/traces":
            continue
        request = ExportTraceServiceRequest.FromString(body)
        for resource_spans in request.resource_spans:
            resource = _attributes(resource_spans.resource.attributes)
            for scope in resource_spans.scope_spans:
                for span in scope.spans:
                    found.append(
                        {
                            "name": span.name,
                            "kind": span.kind,
                            "trace_id": span.trace_id.hex(),
                            "span_id": span.span_id.hex(),
                            "parent": span.parent_span_id.hex(),
                            "attributes": _attributes(span.attributes),
                            "status": span.status.code,
                            "links": [link.trace_id.hex() for link in span.links],
                            "resource": resource,
                        }
                    )
    return found


def metrics(receiver: _Recorder) -> dict[str, list[dict[str, Any]]]:
    """Histogram data points by metric name: attributes, count, bounds."""
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
        ExportMetricsServiceRequest,
    )

    found: dict[str, list[dict[str, Any]]] = {}
    for path, _, body in list(receiver.received):
        if path != "/v1/metrics":
            continue
        request = ExportMetricsServiceRequest.FromString(body)
        for resource_metrics in request.resource_metrics:
            for scope in resource_metrics.scope_metrics:
                for metric in scope.metrics:
                    for point in metric.histogram.data_points:
                        found.setdefault(metric.name, []).append(
                            {
                                "attributes": _attributes(point.attributes),
                                "count": point.count,
                                "bounds": list(point.explicit_bounds),
                                "unit": metric.unit,
                            }
                        )
    return found


def _attributes(items: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        kind = item.value.WhichOneof("value")
        out[item.key] = getattr(item.value, kind) if kind else None
    return out


SERVE = """
import json, os, sys
if os.environ.get("HIDE_OTEL_SDK"):
    sys.modules["opentelemetry.sdk"] = None  # as if the otel extra were not installed
from mcpgen.runtime import cli
from mcpgen.runtime.server import Handlers, build_server
spec = json.loads(sys.argv[1])
cli.main(spec, lambda **kw: build_server(spec, Handlers(), **kw), "unused:app", sys.argv[2:])
"""


def start(spec: dict[str, Any], args: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    """The server process (stderr piped: the tests read its log lines)."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    full.update(PYTHONPATH=str(ROOT), **env)
    return subprocess.Popen(
        [sys.executable, "-c", SERVE, json.dumps(spec), *args],
        env=full,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def rpc(
    client: httpx2.Client,
    url: str,
    method: str,
    params: dict[str, Any],
    headers: dict[str, str],
    request_id: int | None = 1,
) -> httpx2.Response:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if request_id is not None:
        message["id"] = request_id
    return client.post(url, content=json.dumps(message), headers=headers)


def reply(response: httpx2.Response) -> dict[str, Any]:
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for line in response.text.splitlines():
            if line.startswith("data:") and line[5:].strip():
                message: dict[str, Any] = json.loads(line[5:])
                if "id" in message:
                    return message
        raise AssertionError(response.text)
    answer: dict[str, Any] = response.json()
    return answer


def handshake_session(client: httpx2.Client, url: str, headers: dict[str, str]) -> dict[str, str]:
    """Initialize a 2025-11-25 session; the headers its requests carry."""
    params = {
        "protocolVersion": HANDSHAKE,
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    }
    response = rpc(client, url, "initialize", params, headers, 0)
    assert response.status_code == 200, response.text
    session = {**headers, "mcp-protocol-version": HANDSHAKE}
    if response.headers.get("mcp-session-id"):
        session["mcp-session-id"] = response.headers["mcp-session-id"]
    rpc(client, url, "notifications/initialized", {}, session, None)
    return session


def modern_call(
    client: httpx2.Client,
    url: str,
    name: str,
    arguments: dict[str, Any],
    headers: dict[str, str],
    meta: dict[str, Any],
) -> dict[str, Any]:
    """One 2026-07-28 tools/call (no session, the envelope in ``_meta``)."""
    full_meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
        **meta,
    }
    sent = {**headers, "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": name}
    params = {"name": name, "arguments": arguments, "_meta": full_meta}
    return reply(rpc(client, url, "tools/call", params, sent, 7))


def wait_ready(process: subprocess.Popen[bytes], port: int, timeout: float = 30) -> str:
    """Wait for the server's /healthz; its base URL."""
    import time

    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(process.communicate()[1].decode()[-3000:])
        try:
            if httpx2.get(base + "/healthz", timeout=2).status_code == 200:
                return base
        except httpx2.HTTPError:
            time.sleep(0.05)
    raise AssertionError(f"nothing answered on port {port} within {timeout} s")
