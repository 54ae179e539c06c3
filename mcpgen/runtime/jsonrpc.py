"""Answers to lines and frames that are not JSON-RPC messages (JSON-RPC 2.0, section 5.1):
-32700 for what is not JSON, -32600 for JSON that is not a request. SDK 2.3 drops them."""

from __future__ import annotations

import json
import logging
import re
from contextlib import suppress
from typing import Any

from mcp.shared.dispatcher import as_request_id

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
BUSY = -32004  # (server range; -32000 is MCP's connection closed) too many requests waiting
INTERNAL_ERROR = -32603
UNENCODABLE = "Internal error: the result could not be encoded"
LONE_SURROGATE = "holds a lone UTF-16 surrogate (\\ud800-\\udfff), which UTF-8 cannot encode"

logger = logging.getLogger(__name__)


def error(code: int, message: str, request_id: int | str | None = None) -> str:
    return json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    )


TOO_LARGE = error(INVALID_REQUEST, "Request body too large")  # (HTTP: 413; stdio: a line)


def error_for(text: str) -> str | None:
    """The error answer to ``text`` the SDK cannot read, or None for a malformed response
    (answering a response would start a loop of errors)."""
    try:
        value: Any = json.loads(text)
    except (ValueError, RecursionError):
        return error(PARSE_ERROR, "Parse error")
    if (
        isinstance(value, dict)
        and ("result" in value or "error" in value)
        and "method" not in value
    ):
        return None
    try:  # a string json reads but the SDK does not: a parse error, as on streamable HTTP
        json.dumps(value, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        return error(PARSE_ERROR, f"Parse error: a string {LONE_SURROGATE}")
    except (ValueError, RecursionError):
        pass
    return _invalid(value)


def _invalid(value: Any) -> str:
    """-32600 with the id of ``value`` when it is a string or an integer, else null."""
    return error(INVALID_REQUEST, "Invalid Request", _id(value))


def _id(value: Any) -> int | str | None:
    return as_request_id(value.get("id")) if isinstance(value, dict) else None


# What may make a body laid out as the SDKs write one no valid request after all, found
# anywhere in it (inside "params" too: a parse, not a wrong answer): an id neither text nor
# an integer, a "method" that is no string, "params" neither object nor null (MCP's params
# are an object, JSON-RPC's may be an array), "jsonrpc" other than "2.0" (so a name given
# twice, the last one counting), or, in a body with a backslash, an ESCAPED name
# ("\u0069d"). One pass over the body for all of them.
ODD = re.compile(
    rb'"(?:id"\s*+:\s*+(?:[^"\d-]|-?\d+[.eE])|method"\s*+:\s*+[^"]|params"\s*+:\s*+[^{n]'
    rb'|jsonrpc"\s*+:\s*+(?!"2\.0"))'
)
ESCAPED = re.compile(rb'"[a-z]*\\u[\\0-9a-zA-Z]*"\s*:')
_VERSION, _GOOD_ID = rb'"jsonrpc"\s*:\s*"2\.0"', rb'"id"\s*:\s*(?:-?\d+|"[^"\\]*")'
# A message as the SDKs write one, its names at the top level by their place: Python's
# ``{"jsonrpc":"2.0","id":1,"method":...`` (or "result", "error"), TypeScript's
# ``{"method":...,"params":{...},"jsonrpc":"2.0","id":1}`` (its end within TAIL_BYTES).
FIRST = re.compile(
    rb"\s*\{\s*" + _VERSION + rb"\s*,\s*(?:" + _GOOD_ID + rb'\s*,\s*)?"(?:method|result|error)"\s*:'
)
LEAD = re.compile(rb'\s*\{\s*"(?:method|result|error)"\s*:')
LAST = re.compile(rb",\s*" + _VERSION + rb"\s*(?:,\s*" + _GOOD_ID + rb"\s*)?\}\s*\Z")
TAIL_BYTES = 256


def error_for_post(head: bytes) -> str | None:
    """The -32600 answer to an HTTP POST body SDK 2.3 answers otherwise: a JSON array (a
    batch; MCP has none since 2025-06-18), or JSON that is no JSON-RPC 2.0 message or is a
    request object JSON-RPC calls invalid, or MCP (array params; the SDK: -32602 with
    pydantic's report and id null, or in 2026-07-28 -32600 with id null), or a request
    whose id is neither text nor a number (the SDK: a notification, never answered). A body
    is parsed unless its bytes are laid out as the SDKs write a message (FIRST, or LEAD and
    LAST) and show nothing ODD or ESCAPED, so a valid message is rarely parsed twice. A
    body that is not JSON is the SDK's to answer (-32700; SSE: ``unreadable``)."""
    if head.lstrip(b" \t\r\n")[:1] == b"[":
        return error(INVALID_REQUEST, "Invalid Request")
    laid_out = FIRST.match(head) or (LEAD.match(head) and LAST.search(head[-TAIL_BYTES:]))
    odd = laid_out and (ODD.search(head) or (b"\\" in head and ESCAPED.search(head)))
    if laid_out and not odd:
        return None
    try:
        value: Any = json.loads(head.decode())
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or value.get("jsonrpc") != "2.0":
        return _invalid(value)
    if "method" not in value:
        return None if "result" in value or "error" in value else _invalid(value)
    odd_id = "id" in value and _id(value) is None  # (the SDK: a notification, unanswered)
    method, params = value["method"], value.get("params")
    if odd_id or not isinstance(method, str) or not isinstance(params, dict | None):
        return _invalid(value)
    return None


def has_bad_id(text: str) -> bool:
    """A request whose id is neither a string nor a number: the SDK would take it for a
    notification and never answer."""
    with suppress(ValueError, RecursionError):
        value = json.loads(text)
        return isinstance(value, dict) and "id" in value
    return False


def unencodable(message: Any) -> str:
    """What goes out for ``message`` when pydantic could not make it JSON (a handler's text
    holding a lone surrogate, which UTF-8 cannot encode): an answer becomes -32603 on its
    request id; anything else (a notification, a request to the client) "", dropped. Either
    way logged, with the method or id, never the value."""
    request_id, method = getattr(message, "id", None), getattr(message, "method", None)
    if method is not None:
        logger.error("%s (id %r) could not be encoded: dropped", method, request_id)
        return ""
    logger.error("the answer to request %r could not be encoded: -32603", request_id)
    return error(INTERNAL_ERROR, UNENCODABLE, request_id)
