"""What a running task says and asks (``runtime/tasks.py``): its progress, which becomes
its record's ``statusMessage``, and its handshake-era questions (``Progress``), asked on a
``tasks/result`` request in flight here or relayed by one in flight on another replica
(``relay``), their answers written to the record (``TaskStore.answer``), where any replica
reads them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError, NoBackChannelError
from mcp.shared.message import ServerMessageMetadata
from mcp_types import INVALID_REQUEST
from pydantic import TypeAdapter

from .tasks_store import Record, TaskStore
from .tasks_wire import RELATED

QUESTION: TypeAdapter[types.InputRequest] = TypeAdapter(types.InputRequest)
UNUSED = (  # (a handshake-era answer to a task's question that came too late)
    "this answer to its question came after another was taken (or once it was no longer"
    " asked) and was not used"
)


class Progress:
    """``Context.task``: progress during a task becomes its ``statusMessage``. A handshake-era
    question is kept in the record's ``inputRequests`` (a 2026-07-28 ``tasks/update`` may
    answer it) and travels on the newest ``tasks/result`` request of the task in flight
    (``channels``: task id -> those requests), sent again when a newer one comes."""

    def __init__(
        self, store: TaskStore, task_id: str, channels: Any = None, events: Any = None
    ) -> None:
        self.store, self.task_id, self.events = store, task_id, events
        self.channels: dict[str, list[Any]] = {} if channels is None else channels
        self.session, self.request_id = self, task_id  # the channel ``Context.ask`` uses
        self.request: Any = None  # the tasks/result request asked on last (its headers)
        self.key = ""  # the question's key in ``inputRequests``

    async def __call__(self, done: float, total: float | None, message: str | None) -> None:
        text = message or (f"{done:g}/{total:g}" if total else f"{done:g}")
        await self.store.update(self.task_id, {"statusMessage": text[:500]})  # as an end's

    async def asking(self, waiting: bool) -> None:
        """The handler has its answer (``waiting`` False): the task works again."""
        changes = {"status": "working", "inputRequests": None, "inputResponses": None}
        await self.store.update(self.task_id, changes)

    async def channel(self, request: Any) -> tuple[Any, Any]:
        """``request`` naming the task in its ``_meta`` (as the handshake era's tasks
        specify), kept in the record; the task reads input_required until it is answered,
        which ``send_request`` (this object is the channel) waits for."""
        params = request.params or types.RequestParams()
        meta = {**(params.meta or {}), RELATED: {"taskId": self.task_id}}
        named = request.model_copy(update={"params": params.model_copy(update={"meta": meta})})
        self.key = f"question-{secrets.token_hex(4)}"  # (keys are unique over a task's life)
        asked = {self.key: named.model_dump(by_alias=True, mode="json", exclude_none=True)}
        await self.store.update(self.task_id, {"status": "input_required", "inputRequests": asked})
        return self, named

    async def send_request(self, request: Any, result_type: Any, metadata: Any) -> Any:
        """The answer from the client over the newest tasks/result request in flight, or from
        a 2026 ``tasks/update`` (the record's ``inputResponses``), whichever comes first."""
        loop, via = asyncio.get_running_loop(), None
        sending: asyncio.Future[Any] = loop.create_future()  # (no request to carry it yet)
        try:
            while True:
                if (newest := (self.channels.get(self.task_id) or [None])[-1]) is not via:
                    sending.cancel()  # (its request ended, or a newer one came: asked there)
                    via, sending = newest, loop.create_future()
                    if via is not None:
                        self.request = via.request
                        related = metadata.related_request_id and via.request_id
                        meta = ServerMessageMetadata(related_request_id=related)
                        sending = asyncio.ensure_future(
                            via.session.send_request(request, result_type, metadata=meta)
                        )
                if sending.done():
                    return await self.first(sending.result(), result_type, via)
                with contextlib.suppress(MCPError):  # (the store away: asked again)
                    record = await self.store.get(self.task_id) or {}
                    if (answer := (record.get("inputResponses") or {}).get(self.key)) is not None:
                        return result_type.model_validate(answer)
                await asyncio.sleep(0.1)
        finally:
            sending.cancel()

    async def first(self, answer: Any, result_type: Any, via: Any) -> Any:
        """The first answer taken (``TaskStore.answer``): ``answer``, from ``via``'s client,
        unless another came first (a 2026 ``tasks/update``, acknowledged: the handler used
        the later one); ``via``'s client is told then (``unused``). With the store away,
        ``answer``."""
        dumped = answer.model_dump(by_alias=True, mode="json", exclude_none=True)
        with contextlib.suppress(MCPError):
            if await self.store.answer(self.task_id, {self.key: dumped}) is None:
                record = await self.store.get(self.task_id) or {}
                if (taken := (record.get("inputResponses") or {}).get(self.key)) is not None:
                    await unused(via, self.task_id, self.events)
                    return result_type.model_validate(taken)
        return answer


async def unused(ctx: Any, task_id: str, events: Any) -> None:
    """Tell the client of ``ctx`` (a tasks/result request) that its answer to the task's
    question was not used: another was taken first, or it is asked no more. A warning log
    on that request: no JSON-RPC error (tasks/result MUST still wait for the task's end;
    a response cannot be answered), as a 2026 ``tasks/update`` to a question answered
    meanwhile is acknowledged (SEP-2663: a server SHOULD ignore it)."""
    from .context import Context

    note = {"taskId": task_id, "message": f"Task {task_id}: {UNUSED}"}
    try:
        await Context(ctx, events=events).log("warning", note, "tasks")
    except Exception:  # (best effort: the connection may be gone)
        logging.getLogger("mcp_server").debug("task %s: not told", task_id, exc_info=True)


def relay(
    store: TaskStore, ctx: Any, record: Record, asked: dict[str, Any], here: Any, events: Any
) -> None:
    """The handshake-era questions of a task that runs on another replica (not ``here``)
    asked on the tasks/result request ``ctx`` (each once: ``asked``, key -> its asking),
    their answers written to the record, where that replica's ``Progress.send_request``
    reads them. Each tasks/result in flight elsewhere asks it too: the first answer is taken
    (``TaskStore.answer``), and the question withdrawn from the others (cancelled:
    ``notifications/cancelled``) once it is answered or no longer asked."""
    running = record["status"] != "input_required" or record["taskId"] in here
    questions = {} if running else record.get("inputRequests") or {}
    answered = record.get("inputResponses") or {}
    for key, question in questions.items():
        if key not in asked and key not in answered:
            relaying = _relay(store, ctx, record["taskId"], key, question, events)
            asked[key] = asyncio.ensure_future(relaying)
    for key, asking in asked.items():
        if not asking.done() and (key not in questions or key in answered):
            asking.cancel()  # answered (here or elsewhere) or withdrawn: asked no more
        elif asking.done() and not asking.cancelled():
            asking.result()  # (this request cannot carry a question: that error)


async def _relay(
    store: TaskStore, ctx: Any, task_id: str, key: str, question: Any, events: Any = None
) -> None:
    from .context import ANSWER_TYPES, _no_channel

    request = QUESTION.validate_python(question)
    related = None if request.method == "roots/list" else ctx.request_id
    try:
        answer = await ctx.session.send_request(
            request, ANSWER_TYPES[request.method], metadata=ServerMessageMetadata(related)
        )
    except NoBackChannelError:
        cannot = f"Task {task_id} asks its client ({request.method}), which this request cannot"
        raise MCPError(INVALID_REQUEST, f"{cannot} carry {_no_channel(ctx)}") from None
    dumped = answer.model_dump(by_alias=True, mode="json", exclude_none=True)
    if await store.answer(task_id, {key: dumped}) is None:  # (another taken, or withdrawn)
        await unused(ctx, task_id, events)
