"""Long-running tool calls as MCP tasks (manifest ``tools[].task``; docs/tasks.md).

Handshake era (2025-11-25): the ``tasks`` capability, ``execution.taskSupport`` in
tools/list, a ``tools/call`` with ``params.task`` answered at once with ``{task}``, then
``tasks/get``, ``tasks/result``, ``tasks/list`` and ``tasks/cancel``.
2026-07-28: the extension ``io.modelcontextprotocol/tasks``: a call from a request that declares
it is answered with a flat ``resultType: "task"`` result, ``tasks/get`` carries the result (or
error, or input requests), ``tasks/update`` answers input requests, ``tasks/cancel``
acknowledges; ``tasks/result`` is -32601 and a request without the extension gets -32021.

The handler runs in the background (its own asyncio task: the request that created it can end)
through ``ToolTable.dispatch`` with the ``Context`` a plain call gets (``ctx.progress`` sets the
task's ``statusMessage``). Tasks belong to the verified caller (``Identity.key``): another
caller's task id is unknown (-32602). Records live in ``tasks_store`` (here, or Redis).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.server.context import CallNext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, SERVER_INFO_META_KEY
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from .authz import current_identity
from .content import tool_error
from .paging import page
from .tasks_store import (
    HEARTBEAT_EVERY,
    TERMINAL,
    Progress,
    Record,
    TaskStore,
    local_cache,
    now_iso,
    relay,
    unreachable,
)
from .tasks_wire import (
    EXTENSION,
    PAGE,
    RELATED,
    TaskParams,
    check_modern,
    declared,
    first_text,
    flat_view,
    missing_extension,
    protocol_errors,
    task_view,
    unknown,
    valid_answers,
    why,
)

logger = logging.getLogger("mcp_server")
DEFAULT_TTL_MS = 3_600_000  # a task (and its result) is kept an hour unless asked otherwise
MAX_TTL_MS = 86_400_000
MIN_TTL_MS = 60_000  # a shorter ttl (0, negative) would forget the task before a poll
POLL_MS = 1000
MAX_RUNNING = 100  # tasks one caller may have running on one server


class Tasks:
    """The tasks of one server: the ``tools/call`` middleware and the tasks/* handlers."""

    def __init__(self, tools: Any, support: Mapping[str, str], cache: Any = None) -> None:
        self.tools = tools
        self.support = dict(support)  # tool name -> optional | required
        self.store = TaskStore(cache if cache is not None else local_cache())
        self.replica = secrets.token_hex(8)
        self.running: dict[str, asyncio.Task[None]] = {}
        self.done: dict[str, asyncio.Event] = {}
        self.listing = True  # tasks/list: not for anonymous callers (they are all one)
        self.owners: dict[str, str] = {}  # task id -> owner, while it runs here
        self.channels: dict[str, list[Any]] = {}  # task id -> its tasks/result requests
        self.stamp: Any = dict
        self._watcher: asyncio.Task[None] | None = None

    def install(self, server: Any) -> None:
        server.middleware.append(self)
        self.stamp = lambda: server.server_info_stamp
        plain = server.get_capabilities
        server.get_capabilities = lambda *args, **options: self.capabilities(
            plain(*args, **options), options.get("protocol_version")
        )
        for method, handler in (
            ("tasks/get", self.get),
            ("tasks/result", self.result),
            ("tasks/list", self.list),
            ("tasks/cancel", self.cancel),
            ("tasks/update", self.update),
        ):
            server.add_request_handler(method, TaskParams, handler)

    def capabilities(
        self, caps: types.ServerCapabilities, version: Any
    ) -> types.ServerCapabilities:
        """The tasks capability (handshake era) or the extension (2026-07-28) added."""
        if version in MODERN_PROTOCOL_VERSIONS:
            extensions = {**(caps.extensions or {}), EXTENSION: {}}
            return caps.model_copy(update={"extensions": extensions})
        tasks = types.ServerTasksCapability(
            list=types.TasksListCapability() if self.listing else None,
            cancel=types.TasksCancelCapability(),
            requests=types.ServerTasksRequestsCapability(
                tools=types.TasksToolsCapability(call=types.TasksCallCapability())
            ),
        )
        return caps.model_copy(update={"tasks": tasks})

    # -- tools/call ----------------------------------------------------------------------
    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> Any:
        params = ctx.params
        if ctx.method != "tools/call" or not isinstance(params, Mapping):
            return await call_next(ctx)
        name = params.get("name")
        support = self.support.get(name) if isinstance(name, str) else None
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        wants = declared(params) if modern else isinstance(params.get("task"), Mapping)
        if support is None and not (wants and not modern):
            return await call_next(ctx)
        with protocol_errors(self.tools, str(name)):  # unknown, hidden, not allowed: as a call
            self.tools.find(str(name))
            self.tools.policy.check(current_identity(), "tool", str(name))
        if support is None:  # taskSupport forbidden (absent)
            raise MCPError(METHOD_NOT_FOUND, f"Tool {name!r} does not run as a task")
        assert isinstance(name, str)
        if wants:
            return await self.create(ctx, name, modern)
        if support == "required":
            if modern:
                raise missing_extension(f"Tool {name!r} runs only as a task: it")
            raise MCPError(
                METHOD_NOT_FOUND,
                f"Tool {name!r} runs only as a task: call it with params.task",
                data={"taskSupport": "required"},
            )
        return await call_next(ctx)

    async def create(self, ctx: ServerRequestContext[Any, Any], name: str, modern: bool) -> Any:
        params = types.CallToolRequestParams.model_validate(dict(ctx.params or {}), by_name=False)
        asked = params.task.ttl if params.task is not None else None
        ttl = DEFAULT_TTL_MS if asked is None or modern else min(int(asked), MAX_TTL_MS)
        ttl = max(ttl, MIN_TTL_MS)  # the spec lets a server override the ttl; it reports it
        owner = self._room(current_identity().key)
        context, stamp = self.tools.context(ctx, params), now_iso()
        record: Record = {
            "taskId": secrets.token_urlsafe(24),
            "status": "working",
            "createdAt": stamp,
            "lastUpdatedAt": stamp,
            "ttl": ttl,
            "pollInterval": POLL_MS,
            "owner": owner,
            "replica": self.replica,
            "expiresAt": time.time() + ttl / 1000,
            "modern": modern,
            "tool": name,  # its scopes guard the task as they guarded the call
        }
        self.owners[record["taskId"]] = owner  # counted before the awaited writes
        await self.store.beat(self.replica)
        try:
            if not await self.store.create(record):
                raise unreachable()
        except MCPError:  # (the store away, or full)
            self.owners.pop(record["taskId"])
            raise
        self._start(record["taskId"], name, dict(params.arguments or {}), context)
        if modern:
            return {"resultType": "task", **flat_view(record), "_meta": self._meta()}
        return {"task": task_view(record)}

    def _start(self, task_id: str, name: str, arguments: dict[str, Any], context: Any) -> None:
        context.task = Progress(self.store, task_id, self.channels, self.tools.events)
        self.done.setdefault(task_id, asyncio.Event())
        job = asyncio.get_running_loop().create_task(self._run(task_id, name, arguments, context))
        self.running[task_id] = job
        if self._watcher is None or self._watcher.done():
            self._watcher = asyncio.get_running_loop().create_task(self._watch())

    async def _run(self, task_id: str, name: str, arguments: dict[str, Any], context: Any) -> None:
        try:
            try:
                with protocol_errors(self.tools, name):  # run again: the tool may be gone
                    result = await self.tools.dispatch(name, arguments, context)
            except asyncio.CancelledError:
                await self.store.update(task_id, {"status": "cancelled"})
                return
            except MCPError as exc:
                error = exc.error.model_dump(by_alias=True, mode="json", exclude_none=True)
                await self._end(task_id, "failed", exc.error.message, error=error)
                return
            except Exception:  # a bug
                logger.exception("task %s (tool %s) failed", task_id, name)
                result = tool_error(f"Tool {name!r} failed with an internal error")
            if isinstance(result, types.InputRequiredResult):
                # 2026-07-28: any replica may take the answers (tasks/update) and run it again
                requests = result.model_dump(by_alias=True, mode="json", exclude_none=True)
                call = {"name": name, "arguments": arguments, "state": result.request_state}
                changes = {"inputRequests": requests["inputRequests"], "call": call}
                await self._end(task_id, "input_required", None, **changes)
                return
            dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
            if result.is_error and not context.modern:
                await self._end(task_id, "failed", first_text(dumped), result=dumped)
            else:
                await self._end(task_id, "completed", None, result=dumped)
        finally:
            self.running.pop(task_id, None)
            self.owners.pop(task_id, None)
            self.done.pop(task_id, asyncio.Event()).set()  # who waits holds the event

    async def _end(self, task_id: str, status: str, message: str | None, **fields: Any) -> None:
        changes: Record = {"status": status, **fields}
        if message:
            changes["statusMessage"] = message[:500]
        await self.store.update(task_id, changes)  # (its bytes counted there)

    async def _watch(self) -> None:
        """While tasks run here: the heartbeat, and cancellations or expiries seen elsewhere."""
        while self.running:
            await self.store.beat(self.replica)
            for task_id in await self.store.stopped(self.replica, list(self.running)):
                if task_id in self.running:
                    self.running[task_id].cancel()
            await asyncio.sleep(HEARTBEAT_EVERY)

    # -- tasks/* -------------------------------------------------------------------------
    def _era(self, ctx: ServerRequestContext[Any, Any], method: str) -> bool:
        """True on 2026-07-28 (whose requests ``check_modern`` checks)."""
        if modern := ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            check_modern(ctx, method)
        return modern

    async def _owned(self, task_id: Any) -> Record:
        if not isinstance(task_id, str) or not task_id or len(task_id) > 200:
            raise unknown(task_id)
        record = await self.store.get(task_id)
        if record is None or record.get("owner") != current_identity().key:
            raise unknown(task_id)
        if "tool" in record:  # a caller that lost the tool's scopes lost its tasks too
            with protocol_errors(self.tools, record["tool"], unknown(task_id)):
                self.tools.policy.check(current_identity(), "tool", record["tool"])
        if record["status"] in TERMINAL or record.get("call"):  # (a 2026 task asking runs nowhere)
            return record
        if record.get("replica") == self.replica:  # its end was not written (Redis away)
            stopped, message = task_id not in self.running, "it ended while the store was away"
        else:
            stopped = not await self.store.alive(record["replica"])
            message = "the server replica running this task stopped before it finished"
        if stopped:
            changes = {"status": "failed", "statusMessage": message}
            record = await self.store.update(task_id, changes) or await self.store.get(task_id)
            if record is None:
                raise unknown(task_id)
        return record

    def _meta(self) -> dict[str, Any]:
        return {SERVER_INFO_META_KEY: self.stamp()}

    def _room(self, owner: str) -> str:  # owner, unless MAX_RUNNING of its tasks run here
        if sum(1 for o in self.owners.values() if o == owner) >= MAX_RUNNING:
            busy = f"Too many tasks running for this caller (at most {MAX_RUNNING} on a server)"
            raise MCPError(INVALID_REQUEST, busy + ": wait for one to end, or cancel one")
        return owner

    async def get(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> Any:
        modern = self._era(ctx, "tasks/get")
        record = await self._owned(params.taskId)
        if not modern:
            return task_view(record)
        view: dict[str, Any] = {"resultType": "complete", **flat_view(record)}
        status = view["status"]
        if status == "completed" and "result" in record:
            view["result"] = record["result"]
        elif status == "failed":
            view["error"] = record.get("error") or {"code": -32603, "message": why(record)}
        elif status == "input_required":
            view["inputRequests"] = record.get("inputRequests", {})
        return view

    async def result(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> Any:
        if self._era(ctx, "tasks/result"):
            raise MCPError(METHOD_NOT_FOUND, "tasks/result is not part of the tasks extension")
        record = await self._owned(params.taskId)
        channels = self.channels.setdefault(record["taskId"], [])
        channels.append(ctx)  # the handler's questions travel on this request meanwhile
        asked: dict[str, asyncio.Future[None]] = {}  # (those of a task running elsewhere)
        try:
            while record["status"] not in TERMINAL:
                if record.get("call"):  # (2026 input_required: it would wait until its ttl)
                    asks = f"Task {record['taskId']} waits for answers: a 2026-07-28 tasks/update"
                    raise MCPError(INVALID_REQUEST, asks, data={"taskId": record["taskId"]})
                relay(self.store, ctx, record, asked, self.running, self.tools.events)
                event = self.done.get(record["taskId"])
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(event.wait() if event else asyncio.sleep(1), 0.25)
                record = await self._owned(params.taskId)
        finally:
            for asking in asked.values():
                asking.cancel()
            channels.remove(ctx)
            if not channels:
                self.channels.pop(record["taskId"], None)
        related = {RELATED: {"taskId": record["taskId"]}}
        if "result" in record:  # as the plain call answers: no 2026 resultType
            shown = {k: v for k, v in record["result"].items() if k != "resultType"}
            return {**shown, "_meta": {**shown.get("_meta", {}), **related}}
        if record.get("error"):
            error = record["error"]
            raise MCPError(error["code"], error["message"], data=error.get("data"))
        raise MCPError(INVALID_REQUEST, f"Task {record['taskId']} {why(record)}")

    async def list(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> Any:
        if self._era(ctx, "tasks/list"):
            raise MCPError(METHOD_NOT_FOUND, "tasks/list is not part of the tasks extension")
        identity = current_identity()
        if identity.subject == "anonymous" and identity.issuer is None:  # auth: none
            raise MCPError(METHOD_NOT_FOUND, "tasks/list needs authenticated callers")
        owned = await self.store.owned(identity.key)  # a page reads its records only:
        shown, cursor = page(owned, params.cursor, PAGE, lambda e: sum(e[2:3]))  # (bytes)
        records = await self.store.records([e[0] for e in shown])
        allowed = self.tools.policy.allowed
        views = [task_view(r) for r in records if allowed(identity, "tool", r.get("tool", ""))]
        result: dict[str, Any] = {"tasks": views}
        if cursor is not None:
            result["nextCursor"] = cursor
        return result

    async def cancel(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> Any:
        modern = self._era(ctx, "tasks/cancel")
        record = await self._owned(params.taskId)
        if record["status"] in TERMINAL:
            if modern:
                return {}
            raise MCPError(
                INVALID_PARAMS,
                f"Task {record['taskId']} has already ended ({record['status']})",
                data={"taskId": record["taskId"], "status": record["status"]},
            )
        changes = {"status": "cancelled", "statusMessage": "cancelled by the client"}
        cancelled = await self.store.update(record["taskId"], changes)
        if cancelled is None:  # it ended meanwhile (answered as such), or the store took
            if (await self._owned(params.taskId))["status"] not in TERMINAL:  # no write
                raise MCPError(types.INTERNAL_ERROR, "The task store took no cancellation")
            return await self.cancel(ctx, params)
        job = self.running.get(record["taskId"])
        if job is not None:
            job.cancel()
        return {} if modern else task_view(cancelled)

    async def update(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> Any:
        if not self._era(ctx, "tasks/update"):
            raise MCPError(METHOD_NOT_FOUND, "Method not found", data="tasks/update")
        record = await self._owned(params.taskId)
        call = record.get("call")
        if record["status"] != "input_required":
            return {}  # nothing is asked (or the answer came already): acknowledged
        answers = valid_answers(record.get("inputRequests") or {}, params.inputResponses)
        if not call:  # a handshake-era handler waits for it (tasks_store.Progress)
            await self.store.answer(record["taskId"], answers)  # (the first answer taken)
            return {}
        task_id, took = record["taskId"], list[bool]()  # (the store took its step: [True])
        self.owners[task_id] = self._room(record["owner"])  # it runs again: counted
        changes = dict(status="working", inputRequests=None, call=None, replica=self.replica)
        if not await self.store.update(task_id, changes, status="input_required", took=took):
            if task_id not in self.running:  # another tasks/update took it: it counts it
                self.owners.pop(task_id, None)  # again as it starts it
            if not took:  # (not that the record is unchanged: two writes in a millisecond)
                raise unreachable()
            await self._owned(params.taskId)  # (expired meanwhile: unknown, -32602)
            return {}
        again = SimpleNamespace(input_responses=answers, request_state=call["state"])  # params
        rerun = self.tools.context(ctx, again)
        self.owners[record["taskId"]] = record["owner"]
        self._start(record["taskId"], call["name"], call["arguments"], rerun)
        return {}


def install_tasks(server: Any, spec: Mapping[str, Any], cache: Any = None) -> Tasks:
    """Serve tasks on ``server`` for the tools whose ``_spec.json`` entry has ``task``."""
    support = {e["definition"]["name"]: e["task"] for e in spec.get("tools", []) if e.get("task")}
    server.tasks = tasks = Tasks(server.tools, support, cache)
    tasks.listing = spec.get("auth", {}).get("type", "none") != "none"
    tasks.install(server)
    return tasks


__all__ = ["EXTENSION", "Tasks", "install_tasks"]
