"""A credential sent in the query string never reaches the access log: uvicorn's access
lines pass ``logs.AccessLogRedaction`` (installed by ``configure_logging``)."""

from __future__ import annotations

import io
import logging

import pytest

from mcpgen.runtime import logs

pytestmark = pytest.mark.timeout(30)


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_access_lines_leave_out_query_credentials(log_format: str) -> None:
    logs.configure_logging("INFO", log_format)
    root = logging.getLogger()
    stream = io.StringIO()
    root.handlers[0].setStream(stream)  # type: ignore[attr-defined]
    access = logging.getLogger("uvicorn.access")
    path = "/mcp?access_token=eyJ.secret.sig&page=2&apiKey=k-123"
    access.info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5", "POST", path, "1.1", 401)
    line = stream.getvalue()
    assert "eyJ.secret.sig" not in line and "k-123" not in line, line
    assert "page=2" in line and "access_token=REDACTED" in line, line


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_websocket_handshake_lines_leave_out_query_credentials(log_format: str) -> None:
    """uvicorn logs each WebSocket handshake on ``uvicorn.error``, not the access log, with
    the query a browser's token rides in (it cannot set a header on a WebSocket)."""
    logs.configure_logging("INFO", log_format)
    stream = io.StringIO()
    logging.getLogger().handlers[0].setStream(stream)  # type: ignore[attr-defined]
    handshakes = logging.getLogger("uvicorn.error")
    handshakes.info('%s - "WebSocket %s" %d', "127.0.0.1:5", "/ws?access_token=eyJ.s.g", 401)
    handshakes.info('%s - "WebSocket %s" [accepted]', "127.0.0.1:5", "/ws?api_key=k-123&v=1")
    text = stream.getvalue()
    assert "eyJ.s.g" not in text and "k-123" not in text, text
    assert text.count("=REDACTED") == 2 and "v=1" in text, text


def test_at_debug_no_sse_chunk_is_logged() -> None:
    """At ``--log-level debug`` sse_starlette logged each event it sent: every answer of a
    handshake session whole (a tool's result, an argument echoed in an error); urllib3 each
    OTLP export's URL (a collector key in its query)."""
    from sse_starlette import sse

    logs.configure_logging("DEBUG", "text")
    stream = io.StringIO()
    logging.getLogger().handlers[0].setStream(stream)  # type: ignore[attr-defined]
    try:
        sse.logger.debug("chunk: %s", b"data: {'password': 'hunter2'}")
        logging.getLogger("urllib3.connectionpool").debug(  # an OTLP export, as urllib3 logs it
            '%s://%s:%s "%s %s %s" %s %s', "http", "c", 4318, "POST", "/?api_key=hunter2", 1, 200, 0
        )
        logging.getLogger("mcp_server").debug("kept")
    finally:
        logs.configure_logging("INFO", "text")
    text = stream.getvalue()
    assert "hunter2" not in text and "kept" in text, text


def test_the_filter_is_installed_once() -> None:
    logs.configure_logging()
    logs.configure_logging()
    for name in ("uvicorn.access", "uvicorn.error"):
        found = logging.getLogger(name).filters
        assert sum(isinstance(f, logs.AccessLogRedaction) for f in found) == 1


def test_paths_without_a_query_are_untouched() -> None:
    assert logs.redact_query("/mcp") == "/mcp"
    assert logs.redact_query("/r?uri=notes%3A%2F%2F1") == "/r?uri=notes%3A%2F%2F1"


def test_a_clients_text_cannot_forge_a_log_line_nor_flood_the_log() -> None:
    """A client's malformed ``traceparent``/``baggage`` in ``params._meta`` made the
    OpenTelemetry propagators log its bytes (newlines included) on every request."""
    from opentelemetry.propagate import extract

    logs.configure_logging("INFO", "text")
    stream = io.StringIO()
    logging.getLogger().handlers[0].setStream(stream)  # type: ignore[attr-defined]
    forged = "x\n2026-12-04 12:00:00,000 INFO mcp_server: admin logged in"
    extract({"traceparent": forged + "y" * 600, "baggage": forged})
    logging.getLogger("mcp_server").warning("refused %s", forged)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].endswith("refused " + forged.replace("\n", "\\n"))


def test_a_long_query_is_redacted_in_linear_time() -> None:
    """``GET /mcp?????...`` (60,000 question marks, before any credential is checked) held
    the server's event loop for 209 s while its access line was redacted: the pattern
    scanned the rest of the query from every ``?``. Each of these now takes milliseconds."""
    import time

    logs.configure_logging("INFO", "text")
    logging.getLogger().handlers[0].setStream(io.StringIO())  # type: ignore[attr-defined]
    access = logging.getLogger("uvicorn.access")
    for query in ("?" * 20_000, "token" * 4_000, "=?" * 10_000, "&?tokenx" * 2_500):
        started = time.perf_counter()
        access.info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5", "GET", "/mcp?" + query, "1.1", 401)
        assert time.perf_counter() - started < 1, query[:10]


@pytest.mark.parametrize(
    ("path", "shown"),
    [
        ("/p?aSig?=s3cret&v=1", "/p?aSig?=REDACTED&v=1"),  # a name holding a "?"
        ("/p?a=1?token=s3cret#f", "/p?a=1?token=REDACTED#f"),  # after a "?" in a value
        ("/p?token=s3=c?r&key=k#x", "/p?token=REDACTED&key=REDACTED#x"),
        ("/p?tokens&x=1", "/p?tokens&x=1"),
        # the name as a server reads it (percent-decoded): "access_token" written encoded
        ("/p?%61ccess%5f%74%6Fken=s3cret", "/p?%61ccess%5f%74%6Fken=REDACTED"),
        ("/p?pass%77ord=s3cret&v=1", "/p?pass%77ord=REDACTED&v=1"),
    ],
)
def test_what_is_redacted(path: str, shown: str) -> None:
    assert logs.redact_query(path) == shown


def test_a_websocket_handshake_logged_at_debug_shows_no_credential() -> None:
    """At ``--log-level debug`` the WebSocket library uvicorn runs logs each handshake on
    ``uvicorn.error``: its request line and every header, the caller's ``Authorization``
    and ``?access_token=`` with them. Driven through the library's own protocol here."""
    from websockets.server import ServerProtocol

    logs.configure_logging("DEBUG", "text")
    stream = io.StringIO()
    logging.getLogger().handlers[0].setStream(stream)  # type: ignore[attr-defined]
    try:
        server = ServerProtocol(logger=logging.getLogger("uvicorn.error"))
        server.receive_data(
            b"GET /ws?access_token=eyJ.q.sig&v=1 HTTP/1.1\r\nHost: 127.0.0.1:8000\r\n"
            b"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
            b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nAuthorization: Bearer eyJ.h.sig\r\n"
            b"X-Team-Pass: hunter2\r\nCookie: session=c00kie\r\n\r\n"
        )
        legacy = "< GET %s HTTP/1.1"  # websockets' legacy server
        logging.getLogger("uvicorn.error").debug(legacy, "/ws?api_key=k-123")
    finally:
        logs.configure_logging("INFO", "text")  # (DEBUG would reach later tests' captures)
    text = stream.getvalue()
    for secret in ("eyJ.q.sig", "eyJ.h.sig", "hunter2", "c00kie", "k-123"):
        assert secret not in text, text
    assert "< GET /ws?access_token=REDACTED&v=1 HTTP/1.1" in text, text
    assert "< Host: 127.0.0.1:8000" in text and "< Authorization: REDACTED" in text, text


@pytest.mark.anyio
@pytest.mark.parametrize("error", [RuntimeError, NotImplementedError])
async def test_a_failed_resource_read_logs_its_uri_without_query_credentials(
    error: type[Exception], caplog: pytest.LogCaptureFixture
) -> None:
    """A read that raised logged the client's URI as sent, credential values and all."""
    import rtkit
    from mcp.client import Client
    from mcp.shared.exceptions import MCPError

    from mcpgen.runtime.server import Handlers, build_server

    handlers = Handlers()

    @handlers.resource("find")
    async def find(variables: dict[str, str], ctx: object) -> str:
        raise error("it broke")

    spec = rtkit.make_spec("none")
    spec["tools"] = []
    template = {"uriTemplate": "fixture://find{?q,token}", "name": "find"}
    spec["resources"] = [{"definition": template, "variables": ["q", "token"]}]
    async with Client(build_server(spec, handlers), mode="legacy") as client:
        with pytest.raises(MCPError, match="see the server log"):
            await client.read_resource("fixture://find?q=shoes&token=s3cr3t-t0ken")
    (logged,) = [r.getMessage() for r in caplog.records if "reading resource" in r.getMessage()]
    assert logged == "reading resource fixture://find?q=shoes&token=REDACTED failed"
