"""The tasks wire (docs/tasks.md): names, params, the views of a task record in each era,
and the errors clients get."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import decode_header_value
from mcp_types import HEADER_MISMATCH, INVALID_PARAMS
from pydantic import ConfigDict

from .context import ANSWER_TYPES, checked_answer

Record = dict[str, Any]
EXTENSION = "io.modelcontextprotocol/tasks"
RELATED = "io.modelcontextprotocol/related-task"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
MISSING_CAPABILITY = -32021  # 2026-07-28: the request did not declare a needed capability
PAGE = 50  # tasks/list page size
VIEW = ("taskId", "status", "statusMessage", "createdAt", "lastUpdatedAt")
NAMED = ("tasks/get", "tasks/update", "tasks/cancel")  # 2026-07-28's, routed by Mcp-Name


class TaskParams(types.RequestParams):
    """Params of tasks/* (checked by hand: a bad id is -32602 like an unknown one)."""

    model_config = ConfigDict(extra="allow")
    taskId: Any = None
    cursor: str | None = None
    inputResponses: Any = None


def valid_answers(asked: Mapping[str, Any], responses: Any) -> dict[str, Any]:
    """A 2026 task's ``inputResponses`` to the requests ``asked``, checked before it runs
    again: one that is no answer is -32602 (the client may send a valid one), those of keys
    not asked are left out (as the tasks extension says)."""
    kept: dict[str, Any] = {}
    for key, raw in (responses if isinstance(responses, Mapping) else {}).items():
        method = asked[key].get("method") if isinstance(asked.get(key), Mapping) else None
        if method in ANSWER_TYPES:
            checked_answer(method, key, raw)
            kept[key] = raw
    return kept


@contextlib.contextmanager
def protocol_errors(tools: Any, name: str, hidden: MCPError | None = None) -> Iterator[None]:
    """``UnknownTool`` and ``Forbidden`` as the JSON-RPC errors a tools/call gets, or as
    ``hidden`` when the tool is hidden from the caller (a task's id must not name it)."""
    from .errors import Forbidden
    from .tools import UnknownTool

    try:
        yield
    except (UnknownTool, Forbidden) as exc:
        if hidden is not None and tools.policy.hide_unauthorized:
            raise hidden from None
        raise tools.protocol_error(name, exc) from None


def declared(params: Any) -> bool:
    """True when a 2026-07-28 request declares the tasks extension in its ``_meta``."""
    meta = params.get("_meta") if isinstance(params, Mapping) else None
    caps = meta.get(CLIENT_CAPABILITIES) if isinstance(meta, Mapping) else None
    extensions = caps.get("extensions") if isinstance(caps, Mapping) else None
    return isinstance(extensions, Mapping) and EXTENSION in extensions


def check_modern(ctx: Any, method: str) -> None:
    """A 2026-07-28 tasks/* request declares the extension, and over HTTP its ``Mcp-Name``
    (what a load balancer routes by) names the task its params do, as the SDK checks
    tools/call's name (-32020)."""
    if not declared(ctx.params):
        raise missing_extension(method)
    named = (getattr(getattr(ctx, "request", None), "headers", None) or {}).get("mcp-name")
    task_id = ctx.params.get("taskId") if isinstance(ctx.params, Mapping) else None
    if method in NAMED and None not in (named, task_id) and decode_header_value(named) != task_id:
        raise MCPError(HEADER_MISMATCH, "Mcp-Name header does not match the request's taskId")


def missing_extension(what: str) -> MCPError:
    return MCPError(
        MISSING_CAPABILITY,
        f"{what} needs the {EXTENSION} extension: declare it in the request's _meta "
        f"{CLIENT_CAPABILITIES}.extensions",
        data={"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
    )


def unknown(task_id: Any) -> MCPError:
    if not isinstance(task_id, str) or len(task_id) > 200:  # not echoed: what no id can be
        task_id = "(not a task id)"
    return MCPError(INVALID_PARAMS, f"Unknown task: {task_id}", data={"taskId": task_id})


def task_view(record: Record) -> dict[str, Any]:
    """The Task of the handshake era (an ``isError`` result: ``failed``, as the era says,
    of a task created in 2026-07-28 too)."""
    view = {k: record[k] for k in VIEW if record.get(k) is not None}
    view.update(ttl=record["ttl"], pollInterval=record["pollInterval"])
    if record["status"] == "completed" and record.get("result", {}).get("isError"):
        view.update(status="failed", statusMessage=first_text(record["result"])[:500])
    return view


def flat_view(record: Record) -> dict[str, Any]:
    """The task fields of 2026-07-28 (``ttlMs``, ``pollIntervalMs``; an ``isError`` result:
    ``completed``, as the extension says, of a task created in the handshake era too)."""
    view = {k: record[k] for k in VIEW if record.get(k) is not None}
    view.update(ttlMs=record["ttl"], pollIntervalMs=record["pollInterval"])
    if record["status"] == "failed" and "result" in record:
        view.update(status="completed")
    return view


def first_text(result: Mapping[str, Any]) -> str:
    for block in result.get("content") or []:
        if isinstance(block, Mapping) and block.get("type") == "text":
            return str(block.get("text", ""))
    return "the tool reported an error"


def why(record: Record) -> str:
    return str(record.get("statusMessage") or f"ended {record['status']}: it has no result")
