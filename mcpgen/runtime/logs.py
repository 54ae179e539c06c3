"""Server logs on stderr (stdout carries the protocol on stdio), as text or JSON lines."""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

from . import telemetry
from .errors import REDACTED, redact_query

TEXT = "%(asctime)s %(levelname)s %(name)s: %(message)s"  # a line of the text format
# The SDK's loggers that write a message whole at DEBUG (a tool's arguments, a resource URI,
# a result, secrets with them): legacy SSE each one received and sent, the runner a frame
# before the first request, the dispatcher a transport's error (pydantic's quotes its input).
SDK_BODIES = ("mcp.server.sse", "mcp.server.runner", "mcp.shared.jsonrpc_dispatcher")
QUIET = ("httpx2", "httpcore2", "httpx", "httpcore", "urllib3", "sse_starlette", *SDK_BODIES)
# A client's malformed traceparent or baggage (params._meta) is ignored, but these warn with
# its bytes: once per request, so for ERROR and up only.
UNTRUSTED = ("opentelemetry.baggage.propagation", "opentelemetry.trace.propagation.tracecontext")
_RECORD_FIELDS = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message"}
# The WebSocket library's handshake at DEBUG (on ``uvicorn.error``): where the request line
# holds the path, and the headers whose values are shown (any other may be a credential).
_HANDSHAKE_PATH = {"< GET %s HTTP/1.1": 0, "< %s %s %s": 1}
_PLAIN_HEADERS = frozenset(
    {
        *("host", "origin", "upgrade", "connection", "user-agent", "date", "server"),
        *("content-length", "content-type", "mcp-protocol-version"),
        *("x-forwarded-for", "x-forwarded-proto"),
        *("sec-websocket-version", "sec-websocket-key", "sec-websocket-accept"),
        *("sec-websocket-protocol", "sec-websocket-extensions"),
    }
)


class AccessLogRedaction(logging.Filter):
    """Redacts credential-like query values in uvicorn's access log lines and in its
    WebSocket handshake lines (``uvicorn.error``: a browser's token rides in the query), and
    at DEBUG the handshake's request line and header values (``Authorization``) and each
    frame's text (a tool's arguments)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args, msg = record.args, str(record.msg)
        if not isinstance(args, tuple):
            return True
        websocket = msg.startswith('%s - "WebSocket %s"')
        at = 1 if websocket else 2 if record.name == "uvicorn.access" else _HANDSHAKE_PATH.get(msg)
        if at is not None and len(args) > at:
            record.args = (*args[:at], redact_query(str(args[at])), *args[at + 1 :])
        elif msg in ("< %s: %s", "> %s: %s") and len(args) == 2:
            shown = str(args[0]).lower() in _PLAIN_HEADERS
            record.args = args if shown else (args[0], REDACTED)
        elif msg in ("< %s", "> %s") and len(args) == 1 and hasattr(args[0], "opcode"):
            frame: Any = args[0]  # a message received or sent: its kind and size, not its text
            record.args = (f"{frame.opcode.name} [{len(frame.data)} bytes]",)
        return True


def errors_by_type(record: logging.LogRecord) -> bool:
    """An OpenTelemetry exporter's error shown by its type: its text (the HTTP client's) has
    the collector's URL, a key in its query with it."""
    if record.name.startswith("opentelemetry") and isinstance(record.args, tuple):
        shown = (type(a).__name__ if isinstance(a, Exception) else a for a in record.args)
        record.args = tuple(shown)
    return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, and any ``extra`` fields."""

    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        args = record.args
        if record.name == "uvicorn.access" and isinstance(args, tuple) and len(args) == 5:
            client, method, path, _, status = args
            data.update(client=client, method=method, path=path, status=status)
        for key, value in vars(record).items():
            if key not in _RECORD_FIELDS and not key.startswith("_"):
                data[key] = value
        data.update(telemetry.trace_ids())  # ({} without telemetry)
        if record.exc_info:
            data["exception"] = self.formatException(record.exc_info)
        return json.dumps(data, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """One line per record: a newline in a message (a client's text) cannot forge a line."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return super().formatMessage(record).replace("\r", "\\r").replace("\n", "\\n")


def configure_logging(level: str = "INFO", log_format: str = "text") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter(TEXT))
    handler.addFilter(errors_by_type)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        log = logging.getLogger(name)
        log.handlers[:] = []
        log.propagate = True
        if name != "uvicorn" and not any(isinstance(f, AccessLogRedaction) for f in log.filters):
            log.addFilter(AccessLogRedaction())
    # The HTTP clients log every request URL (a query-string API key with it: httpx at INFO,
    # urllib3, the OTLP exporters', at DEBUG), sse_starlette each event sent at DEBUG (a
    # tool's result), and SDK_BODIES messages: WARNING and up only.
    for name in QUIET:
        logging.getLogger(name).setLevel(max(logging.WARNING, root.level))
    for name in UNTRUSTED:
        logging.getLogger(name).setLevel(max(logging.ERROR, root.level))
