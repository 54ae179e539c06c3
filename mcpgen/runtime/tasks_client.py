"""The client side of MCP tasks (docs/tasks.md), for the typed client and the generated
tests: start a tool call as a task, read its status, wait for it (with its status
messages), cancel it, list tasks; in both protocol eras.

The SDK (2.3) has no tasks client (python-sdk #3226). Handshake era: a task-augmented
``tools/call`` answers ``{task}``, which the SDK's result check for tools/call refuses, so
that one request goes through the session's dispatcher as raw JSON; tasks/* go through
``ClientSession.send_request``. 2026-07-28: ``TasksExtension`` declares the extension
(``Client(extensions=[...])``) and claims the ``resultType: "task"`` result: a plain
``call_tool`` then waits for the task and returns its result.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

import anyio
import mcp_types as types
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.session import ClientRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_REQUEST
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ConfigDict, TypeAdapter

from .client import BaseClient, ProgressCallback, ToolCallError, error_text
from .tasks_wire import EXTENSION

TERMINAL = ("completed", "failed", "cancelled")
StatusCallback = Callable[[dict[str, Any]], Awaitable[None]]
_ANY: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])
_QUESTIONS: TypeAdapter[dict[str, types.InputRequest]] = TypeAdapter(dict[str, types.InputRequest])
MAX_POLL = 2.0  # seconds between two tasks/get at most (the server's pollInterval if less)


class TaskCreated(types.Result):
    """The 2026-07-28 answer to a call that became a task (``resultType: "task"``)."""

    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"] = "task"
    task_id: str
    status: str


class _Raw(types.Request):  # type: ignore[type-arg]
    method: str
    params: dict[str, Any] | None = None


def modern(session: Any) -> bool:
    return session.protocol_version in MODERN_PROTOCOL_VERSIONS


async def request(session: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One tasks/* request; its result as JSON data (a JSON-RPC error raises MCPError)."""
    answer: dict[str, Any] = await session.send_request(_Raw(method=method, params=params), _ANY)
    return answer


async def start_task(
    session: Any, name: str, arguments: dict[str, Any], *, ttl_ms: int | None = None
) -> dict[str, Any]:
    """Call ``name`` as a task; the task (``taskId``, ``status``...), at once."""
    if modern(session):
        result = await session.call_tool(name, arguments, allow_claimed=True)
        if not isinstance(result, TaskCreated):
            raise MCPError(INVALID_REQUEST, f"tool {name!r} did not run as a task")
        created: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        return created
    params = {
        "name": name,
        "arguments": arguments,
        "task": {} if ttl_ms is None else {"ttl": ttl_ms},
    }
    # The SDK checks tools/call results against CallToolResult: this answer is {task}.
    raw = await session._dispatcher.send_raw_request("tools/call", params, {})
    task: dict[str, Any] = raw["task"]
    return task


async def get_task(session: Any, task_id: str) -> dict[str, Any]:
    """The task now (2026-07-28: with ``result`` or ``error`` once it has ended)."""
    return await request(session, "tasks/get", {"taskId": task_id})


async def cancel_task(session: Any, task_id: str) -> None:
    await request(session, "tasks/cancel", {"taskId": task_id})


async def wait_task(
    session: Any, task_id: str, on_status: StatusCallback | None = None
) -> types.CallToolResult:
    """Poll until the task ends; its tool result (a failure that is a JSON-RPC error, or a
    cancellation, raises MCPError). ``on_status`` sees each new status (and message)."""
    seen: tuple[Any, Any] | None = None
    answered: set[str] = set()  # 2026: the keys of the questions answered
    delay = 0.02  # quick first polls (short tasks), then the server's pollInterval
    while True:
        task = await get_task(session, task_id)
        if on_status is not None and (task.get("status"), task.get("statusMessage")) != seen:
            seen = (task.get("status"), task.get("statusMessage"))
            await on_status(task)
        if task.get("status") in TERMINAL:
            break
        if task.get("status") == "input_required":
            if not modern(session):
                break  # tasks/result carries the server's questions, then the result
            asked = task.get("inputRequests") or {}
            if fresh := {k: v for k, v in asked.items() if k not in answered}:
                await answer(session, task_id, fresh)  # once a key: the status may lag
                answered.update(fresh)
        interval = task.get("pollIntervalMs", task.get("pollInterval")) or 500
        # (at least the first delay: a negative pollInterval made anyio.sleep raise)
        await anyio.sleep(max(0.02, min(delay, float(interval) / 1000, MAX_POLL)))
        delay *= 2
    if not modern(session):
        result = await request(session, "tasks/result", {"taskId": task_id})
        return types.CallToolResult.model_validate(result)
    if task.get("result") is not None:
        return types.CallToolResult.model_validate(task["result"])
    error = task.get("error") or {}
    raise MCPError(
        int(error.get("code", INVALID_REQUEST)),
        str(error.get("message") or task.get("statusMessage") or f"task {task['status']}"),
        data=error.get("data"),
    )


async def answer(session: Any, task_id: str, asked: dict[str, Any]) -> None:
    """A 2026 task's questions answered through the client's callbacks (elicitation,
    sampling, roots), as a plain call's are: tasks/update."""
    answers: dict[str, Any] = {}
    for key, question in _QUESTIONS.validate_python(asked).items():
        meta = question.params.meta if question.params else None
        context = ClientRequestContext(session=session, request_id=key, meta=meta)
        given = await session.dispatch_input_request(context, question)
        if isinstance(given, types.ErrorData):
            raise MCPError.from_error_data(given)
        answers[key] = given.model_dump(by_alias=True, mode="json", exclude_none=True)
    await request(session, "tasks/update", {"taskId": task_id, "inputResponses": answers})


async def call_as_task(
    session: Any,
    name: str,
    arguments: dict[str, Any],
    on_status: StatusCallback | None = None,
) -> types.CallToolResult:
    """Start ``name`` as a task and wait for its result."""
    task = await start_task(session, name, arguments)
    return await wait_task(session, task["taskId"], on_status)


def needs_task(error: MCPError) -> bool:
    """The server refused a plain call because the tool runs only as a task."""
    data = error.error.data
    return error.code == -32601 and isinstance(data, dict) and data.get("taskSupport") == "required"


class TasksExtension(ClientExtension):
    """Declares the 2026-07-28 tasks extension; a call that becomes a task is waited for."""

    identifier = EXTENSION

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=TaskCreated, resolve=self._resolve)]

    async def _resolve(self, created: TaskCreated, context: ClaimContext) -> types.CallToolResult:
        return await wait_task(context.session, created.task_id)


class TaskClient(BaseClient):
    """The typed client of a server with a tool that runs as an MCP task (docs/tasks.md):
    ``BaseClient`` and the task methods, in both protocol eras."""

    extensions = (TasksExtension,)

    async def call_result(
        self, name: str, arguments: dict[str, Any], progress: ProgressCallback | None = None
    ) -> types.CallToolResult:
        """The result of a tool call, a tool error too. A tool that runs only as an MCP task
        (``task: required``) is started as one and waited for."""
        try:
            return await super().call_result(name, arguments, progress)
        except MCPError as exc:
            if not needs_task(exc):
                raise
            return await call_as_task(self.client.session, name, arguments)

    async def start_task(
        self, name: str, arguments: dict[str, Any], *, ttl_ms: int | None = None
    ) -> dict[str, Any]:
        """Start a tool call as a task: the task (``taskId``, ``status``...), at once."""
        task: dict[str, Any] = await start_task(self.client.session, name, arguments, ttl_ms=ttl_ms)
        return task

    async def task_status(self, task_id: str) -> dict[str, Any]:
        """The task now: ``status`` (working, input_required, completed, failed, cancelled),
        ``statusMessage`` (the handler's last progress message)..."""
        task: dict[str, Any] = await get_task(self.client.session, task_id)
        return task

    async def wait_task(
        self,
        task_id: str,
        on_status: Callable[[dict[str, Any]], Awaitable[None]] | None = None,
    ) -> types.CallToolResult:
        """Wait for the task to end; its tool result. ``on_status`` sees each new status
        and message (progress); a tool error raises ``ToolCallError``, a failure that is a
        protocol error or a cancellation ``MCPError``."""
        result: types.CallToolResult = await wait_task(self.client.session, task_id, on_status)
        if result.is_error:
            raise ToolCallError(task_id, error_text(result), result)
        return result

    async def cancel_task(self, task_id: str) -> None:
        """Cancel the task (its handler is cancelled; the task reads ``cancelled``)."""
        await cancel_task(self.client.session, task_id)
