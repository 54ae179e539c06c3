"""Answers to lines and frames that are not JSON-RPC messages (JSON-RPC 2.0, section 5.1):
-32700 for what is not JSON, -32600 for JSON that is not a request. SDK 2.3 drops them."""

from __future__ import annotations

import json
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


def error(code: int, message: str, request_id: int | str | None = None) -> str:
    return json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    )


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
    request_id = value.get("id") if isinstance(value, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        request_id = None
    return error(INVALID_REQUEST, "Invalid Request", request_id)


def has_bad_id(text: str) -> bool:
    """A request whose id is neither a string nor a number: the SDK would take it for a
    notification and never answer."""
    if '"id"' not in text:
        return False
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return False
    return isinstance(value, dict) and "id" in value
