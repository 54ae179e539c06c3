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
    assert "page=2" in line and "access_token=[redacted]" in line, line


def test_the_filter_is_installed_once() -> None:
    logs.configure_logging()
    logs.configure_logging()
    access = logging.getLogger("uvicorn.access")
    assert sum(isinstance(f, logs.AccessLogRedaction) for f in access.filters) == 1


def test_paths_without_a_query_are_untouched() -> None:
    assert logs.redact_query("/mcp") == "/mcp"
    assert logs.redact_query("/r?uri=notes%3A%2F%2F1") == "/r?uri=notes%3A%2F%2F1"
