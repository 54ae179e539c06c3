"""The typed client's task methods (``runtime/client.py``, ``runtime/tasks_client.py``)
against the tasks fixture server, in memory, in both protocol eras (docs/tasks.md)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio
import mcp_types as types
import pytest
import tasks_kit as kit
from mcp.shared.exceptions import MCPError
from redis_support import REDIS_SERVER, SKIP_REASON, RedisServer
from test_shared import replicas

from mcpgen.runtime import tasks_client
from mcpgen.runtime.client import ToolCallError
from mcpgen.runtime.server import build_server
from mcpgen.runtime.tasks_client import TaskClient
from mcpgen.runtime.tasks_store import TaskStore

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]
MODES = ["legacy", "2026-07-28"]
RELATED = "io.modelcontextprotocol/related-task"


@pytest.fixture(params=MODES)
async def typed(request: pytest.FixtureRequest) -> AsyncIterator[TaskClient]:
    server = build_server(kit.make_spec(), kit.HANDLERS)
    async with TaskClient.connect(server, mode=request.param) as client:
        yield client


async def test_start_watch_and_wait(typed: TaskClient) -> None:
    task = await typed.start_task("report", {"steps": 3, "delay": 0.1})
    assert task["status"] == "working"
    seen: list[Any] = []

    async def on_status(status: dict[str, Any]) -> None:
        seen.append(status.get("statusMessage"))

    result = await typed.wait_task(task["taskId"], on_status)
    assert result.content[0].text == "report of 3 steps"  # type: ignore[union-attr]
    assert "step 3 of 3" in seen
    assert (await typed.task_status(task["taskId"]))["status"] == "completed"


async def test_required_tool_runs_as_a_task_through_call(typed: TaskClient) -> None:
    result = await typed.call("export", {"seconds": 0.1})
    assert result.content[0].text == "exported"  # type: ignore[union-attr]


async def test_errors_and_cancel(typed: TaskClient) -> None:
    failing = await typed.start_task("report", {"steps": 0, "fail": "tool"})
    with pytest.raises(ToolCallError, match="could not be built"):
        await typed.wait_task(failing["taskId"])
    refused = await typed.start_task("report", {"steps": 0, "fail": "protocol"})
    with pytest.raises(MCPError) as caught:
        await typed.wait_task(refused["taskId"])
    assert caught.value.code == -32010
    long = await typed.start_task("export", {"seconds": 30})
    await typed.cancel_task(long["taskId"])
    with anyio.fail_after(5):
        while (await typed.task_status(long["taskId"]))["status"] != "cancelled":
            await anyio.sleep(0.05)
    with pytest.raises(MCPError):
        await typed.wait_task(long["taskId"])


async def test_handshake_question_travels_on_tasks_result() -> None:
    """A task's handler asking the client (elicitation, handshake era) reads
    ``input_required`` until the client calls tasks/result; the question travels on that
    request, then the result."""
    server = build_server(kit.make_spec(), kit.HANDLERS)
    asked: list[str] = []

    async def on_elicit(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)  # naming the task (2025-11-25 tasks: MUST)
        assert params.meta[RELATED] == {"taskId": task["taskId"]}, params.meta
        return types.ElicitResult(action="accept", content={"colour": "red"})

    async with (
        TaskClient.connect(server, mode="legacy", on_elicit=on_elicit) as asking,
        TaskClient.connect(server, mode="legacy") as watching,
    ):
        task = await asking.start_task("pick", {})
        with anyio.fail_after(5):
            while (await watching.task_status(task["taskId"]))["status"] != "input_required":
                await anyio.sleep(0.02)
        assert asked == []
        result = await asking.wait_task(task["taskId"])
        assert result.content[0].text == "picked red"  # type: ignore[union-attr]
        assert asked == ["Which colour?"]


async def test_a_question_unanswered_on_one_tasks_result_is_asked_on_a_newer_one() -> None:
    """A session that took the question and never answers (its stream dropped, its user
    gone) held it: another session's tasks/result waited until the task's ttl. The newest
    tasks/result of the task carries the question now, and a 2026 reader sees it too."""
    server = build_server(kit.make_spec(), kit.HANDLERS)
    asked = anyio.Event()

    async def silent(context: Any, params: Any) -> types.ElicitResult:
        asked.set()
        await anyio.sleep_forever()
        raise AssertionError

    async def on_elicit(context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"colour": "blue"})

    async with (
        TaskClient.connect(server, mode="legacy", on_elicit=silent) as gone,
        TaskClient.connect(server, mode="legacy", on_elicit=on_elicit) as other,
        TaskClient.connect(server, mode="2026-07-28") as modern,
        anyio.create_task_group() as group,
    ):
        task = await gone.start_task("pick", {})
        group.start_soon(gone.wait_task, task["taskId"])
        with anyio.fail_after(5):
            await asked.wait()
        seen = await modern.task_status(task["taskId"])
        assert seen["status"] == "input_required" and len(seen["inputRequests"]) == 1, seen
        with anyio.fail_after(5):
            result = await other.wait_task(task["taskId"])
        assert result.content[0].text == "picked blue"  # type: ignore[union-attr]
        group.cancel_scope.cancel()


async def test_a_2026_task_asking_the_client_is_answered_through_its_callbacks() -> None:
    """The typed client declares the tasks extension, so in 2026-07-28 its call of a
    ``task: optional`` tool becomes a task: one that asks (elicitation) read
    input_required and the client polled it for ever. It answers through the client's
    callbacks now (tasks/update), as a plain 2026 call does."""
    server = build_server(kit.make_spec(), kit.HANDLERS)

    async def on_elicit(context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"colour": "green"})

    async with TaskClient.connect(server, mode="2026-07-28", on_elicit=on_elicit) as typed:
        with anyio.fail_after(10):
            result = await typed.call_result("pick", {})
    assert result.content[0].text == "picked green"  # type: ignore[union-attr]


class _Lagging:
    """A 2026 session whose server still shows a question after its answer (the extension
    lets tasks/update be acknowledged before the status reflects it)."""

    protocol_version = "2026-07-28"

    def __init__(self) -> None:
        question = {"method": "roots/list"}
        asking = {"status": "input_required", "inputRequests": {"roots-0": question}}
        done = {"status": "completed", "result": {"content": []}}
        self.gets = [asking, asking, asking, done]
        self.sent: list[str] = []

    async def send_request(self, request: Any, adapter: Any) -> dict[str, Any]:
        self.sent.append(request.method)
        return self.gets.pop(0) if request.method == "tasks/get" else {}

    async def dispatch_input_request(self, context: Any, question: Any) -> Any:
        self.sent.append(question.method)
        return types.ListRootsResult(roots=[])


async def test_a_2026_question_is_answered_once_while_its_status_lags() -> None:
    session = _Lagging()
    with anyio.fail_after(5):
        await tasks_client.wait_task(session, "t")
    assert session.sent.count("roots/list") == session.sent.count("tasks/update") == 1


async def test_a_task_waiting_for_input_is_answered_on_another_replica(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two servers sharing one task store (as replicas share Redis): a 2026 task waiting
    for input on A, whose heartbeat has lapsed, is answered on B (tasks/update), runs again
    on B and completes there."""
    from mcpgen.runtime import tasks, tasks_store

    monkeypatch.setattr(tasks_store, "HEARTBEAT_TTL", 0.3)
    monkeypatch.setattr(tasks, "HEARTBEAT_EVERY", 0.05)
    shared = tasks_store.local_cache()
    a, b = (build_server(kit.make_spec(), kit.HANDLERS) for _ in range(2))
    a.tasks.store = b.tasks.store = tasks_store.TaskStore(shared)
    async with (
        TaskClient.connect(a, mode="2026-07-28") as on_a,
        TaskClient.connect(b, mode="2026-07-28") as on_b,
    ):
        task = await on_a.start_task("pick", {})
        with anyio.fail_after(5):
            while (status := await on_a.task_status(task["taskId"]))["status"] != (
                "input_required"
            ):
                await anyio.sleep(0.02)
        await anyio.sleep(0.8)
        assert (await on_b.task_status(task["taskId"]))["status"] == "input_required"
        (key,) = status["inputRequests"]
        answer = {key: {"action": "accept", "content": {"colour": "blue"}}}
        session = on_b.client.session
        await tasks_client.request(
            session, "tasks/update", {"taskId": task["taskId"], "inputResponses": answer}
        )
        result = await on_b.wait_task(task["taskId"])
        assert result.content[0].text == "picked blue"  # type: ignore[union-attr]


async def test_a_2026_client_on_another_replica_answers_a_handshake_era_question() -> None:
    """The question of a handshake-era task running on A, seen and answered by a 2026 client
    of B (its callbacks, tasks/update): the answer reaches A's handler through the store."""
    from mcpgen.runtime import tasks_store

    a, b = (build_server(kit.make_spec(), kit.HANDLERS) for _ in range(2))
    a.tasks.store = b.tasks.store = tasks_store.TaskStore(tasks_store.local_cache())

    async def on_elicit(context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"colour": "amber"})

    async with (
        TaskClient.connect(a, mode="legacy") as on_a,
        TaskClient.connect(b, mode="2026-07-28", on_elicit=on_elicit) as on_b,
    ):
        task = await on_a.start_task("pick", {})
        with anyio.fail_after(5):
            result = await on_b.wait_task(task["taskId"])
        assert result.content[0].text == "picked amber"  # type: ignore[union-attr]


async def test_a_handshake_era_tasks_result_on_another_replica_carries_the_question() -> None:
    """A handshake-era task asking its client while it runs on A: a handshake-era
    tasks/result on B waited until the task's ttl (the question only travelled on A's
    requests). B asks it on that request and the answer reaches A's handler through the
    store."""
    from mcpgen.runtime import tasks_store

    a, b = (build_server(kit.make_spec(), kit.HANDLERS) for _ in range(2))
    a.tasks.store = b.tasks.store = tasks_store.TaskStore(tasks_store.local_cache())
    asked: list[Any] = []

    async def on_elicit(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.meta)
        return types.ElicitResult(action="accept", content={"colour": "jade"})

    async with (
        TaskClient.connect(a, mode="legacy") as on_a,
        TaskClient.connect(b, mode="legacy", on_elicit=on_elicit) as on_b,
    ):
        task = await on_a.start_task("pick", {})
        with anyio.fail_after(5):
            result = await on_b.wait_task(task["taskId"])
        assert result.content[0].text == "picked jade"  # type: ignore[union-attr]
        assert asked == [{RELATED: {"taskId": task["taskId"]}}]


async def test_a_question_relayed_by_two_replicas_is_withdrawn_from_one_once_answered() -> None:
    """A handshake-era task running on A, awaited by tasks/result on B and on C (one caller,
    two clients): both relay its question; the first answer (B's) is taken and C's question
    is withdrawn at once (``notifications/cancelled``), not left open until the task ends
    (C's late answer would be dropped: ``test_a_late_answer_never_overwrites_a_newer_one``)."""
    from mcpgen.runtime import tasks_store
    from mcpgen.runtime.server import Handlers

    release, c_asked, withdrawn = anyio.Event(), anyio.Event(), anyio.Event()

    async def pick(arguments: Any, ctx: Any) -> Any:
        answer = await ctx.elicit("Which colour?", kit.Colour)
        await release.wait()  # (the task works on after its answer)
        return f"picked {answer.colour}"

    handlers = Handlers(tools={**kit.HANDLERS.tools, "pick": pick})
    a, b, c = (build_server(kit.make_spec(), handlers) for _ in range(3))
    a.tasks.store = b.tasks.store = c.tasks.store = tasks_store.TaskStore(tasks_store.local_cache())

    async def first(context: Any, params: Any) -> types.ElicitResult:
        await c_asked.wait()  # (both asked)
        return types.ElicitResult(action="accept", content={"colour": "red"})

    async def late(context: Any, params: Any) -> types.ElicitResult:
        c_asked.set()
        try:
            await anyio.sleep_forever()
        finally:
            withdrawn.set()
        raise AssertionError

    async with (
        TaskClient.connect(a, mode="legacy") as on_a,
        TaskClient.connect(b, mode="legacy", on_elicit=first) as on_b,
        TaskClient.connect(c, mode="legacy", on_elicit=late) as on_c,
        anyio.create_task_group() as group,
    ):
        task = await on_a.start_task("pick", {})
        results: list[Any] = []

        async def wait(client: TaskClient) -> None:
            results.append((await client.wait_task(task["taskId"])).content[0].text)  # type: ignore[union-attr]

        group.start_soon(wait, on_b)
        group.start_soon(wait, on_c)
        with anyio.fail_after(5):
            await withdrawn.wait()
        assert (await on_a.task_status(task["taskId"]))["status"] == "working"
        release.set()
    assert results == ["picked red", "picked red"]


async def test_without_the_tasks_modules_the_client_still_works(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A package whose build did not vendor ``tasks_client`` (no tool runs as a task): the
    typed client connects without the extension and passes protocol errors on."""
    import sys

    monkeypatch.setitem(sys.modules, "mcpgen.runtime.tasks_client", None)  # import fails
    server = build_server(kit.make_spec(), kit.HANDLERS)
    async with TaskClient.connect(server, mode="2026-07-28") as typed:
        plain = await typed.call("report", {"steps": 1})  # no extension: a plain call
        assert plain.content[0].text == "report of 1 steps"  # type: ignore[union-attr]
        with pytest.raises(MCPError) as caught:
            await typed.call("report", {"steps": 0, "fail": "protocol"})
        assert caught.value.code == -32010


async def test_a_negative_poll_interval_is_polled_at_the_first_delay() -> None:
    """A server answering ``pollIntervalMs: -1`` is polled every 20 ms (it made the wait
    raise ValueError from anyio.sleep)."""
    polls: list[str] = []

    class Session:
        protocol_version = "2026-07-28"

        async def send_request(self, request: Any, result_type: Any) -> dict[str, Any]:
            polls.append(request.method)
            return {"taskId": "t", "status": "working", "pollIntervalMs": -1}

    with anyio.move_on_after(0.5):
        await tasks_client.wait_task(Session(), "t")
    assert 5 <= len(polls) <= 30


async def test_a_task_refused_by_a_full_store_does_not_count_as_running(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A call refused because the server keeps ``--max-tasks`` tasks left the caller's
    running count one higher for ever (at ``MAX_RUNNING`` refusals, no task at all)."""
    from mcpgen.runtime import tasks

    monkeypatch.setattr(tasks, "MAX_RUNNING", 1)
    server = build_server(kit.make_spec(), kit.HANDLERS)
    server.tasks.store.cap = 0
    async with TaskClient.connect(server, mode="legacy") as client:
        with pytest.raises(MCPError, match="--max-tasks"):
            await client.start_task("report", {"steps": 0})
        server.tasks.store.cap = 10
        task = await client.start_task("report", {"steps": 0})
        assert (await client.wait_task(task["taskId"])).content[0].text == "report of 0 steps"  # type: ignore[union-attr]


@pytest.mark.parametrize("backend", ["local", "redis"])
async def test_a_handshake_answer_after_a_2026_answer_is_not_used_and_its_client_told(
    backend: str, tmp_path: Any
) -> None:
    """One replica: a 2026 tasks/update answers a handshake-era task's question (taken,
    acknowledged), then the handshake-era client on its tasks/result answers too, before
    the handler read the record: the handler used that later answer (the first, ack'ed,
    dropped) and nobody was told. The first answer is used; the late client gets a warning."""
    server = build_server(kit.make_spec(), kit.HANDLERS)
    async with contextlib.AsyncExitStack() as stack:
        if backend == "redis":
            if REDIS_SERVER is None:
                pytest.skip(SKIP_REASON)
            redis = RedisServer(tmp_path)
            redis.start()
            stack.callback(redis.stop)
            (shared,) = await stack.enter_async_context(replicas(redis.url, n=1))
            server.tasks.store = TaskStore(shared.cache("tasks"))
        await _late_answer(server)


async def _late_answer(server: Any) -> None:
    asked, updated, logs = anyio.Event(), anyio.Event(), []

    async def on_elicit(context: Any, params: Any) -> types.ElicitResult:
        asked.set()
        await updated.wait()  # (answers right after the 2026 answer was taken)
        return types.ElicitResult(action="accept", content={"colour": "late"})

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    async with (
        TaskClient.connect(server, mode="legacy", on_elicit=on_elicit, on_log=on_log) as old,
        TaskClient.connect(server, mode="2026-07-28") as modern,
        anyio.create_task_group() as group,
    ):
        task = await old.start_task("pick", {})
        results: list[str] = []

        async def wait() -> None:
            results.append((await old.wait_task(task["taskId"])).content[0].text)  # type: ignore[union-attr]

        group.start_soon(wait)
        with anyio.fail_after(5):
            await asked.wait()
        (key,) = (await modern.task_status(task["taskId"]))["inputRequests"]
        answer = {key: {"action": "accept", "content": {"colour": "first"}}}
        params = {"taskId": task["taskId"], "inputResponses": answer}
        await tasks_client.request(modern.client.session, "tasks/update", params)
        updated.set()
    assert results == ["picked first"]
    ((told,),) = [[log for log in logs if log.logger == "tasks"]]
    assert told.level == "warning" and "was not used" in told.data["message"], told
