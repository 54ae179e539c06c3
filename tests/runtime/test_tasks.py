"""MCP tasks over the wire, raw JSON-RPC over streamable HTTP (docs/tasks.md): the
handshake era's core tasks (2025-11-25) and the 2026-07-28 extension."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
import tasks_kit as kit
from rtbridge import http_client, running

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


@pytest.fixture
async def http() -> AsyncIterator[Any]:
    async with running(kit.app()) as app, http_client(app) as client:
        yield client


async def legacy(http: Any, key: str = kit.ALICE) -> kit.Rpc:
    rpc = kit.Rpc(http, key)
    await rpc.open()
    return rpc


def error_code(answer: dict[str, Any]) -> int:
    assert "error" in answer, answer
    code: int = answer["error"]["code"]
    return code


# -- 2025-11-25 ------------------------------------------------------------------------------


async def test_capability_and_task_support_are_advertised(http: Any) -> None:
    rpc = kit.Rpc(http, kit.ALICE)
    opened = await rpc.open()
    assert opened["result"]["capabilities"]["tasks"] == {
        "list": {},
        "cancel": {},
        "requests": {"tools": {"call": {}}},
    }
    tools = {t["name"]: t for t in (await rpc.send("tools/list", {}))["result"]["tools"]}
    assert tools["report"]["execution"] == {"taskSupport": "optional"}
    assert tools["export"]["execution"] == {"taskSupport": "required"}
    assert "execution" not in tools["quick"]


async def test_a_task_answers_at_once_then_reports_progress_and_its_result(http: Any) -> None:
    rpc = await legacy(http)
    started = time.monotonic()
    answer = await rpc.call("report", {"steps": 3, "delay": 0.4}, task={"ttl": 60000})
    assert time.monotonic() - started < 1.0
    task = answer["result"]["task"]
    assert task["status"] == "working" and task["ttl"] == 60000
    assert {"createdAt", "lastUpdatedAt", "pollInterval"} <= set(task)
    assert len(task["taskId"]) >= 32
    seen = await rpc.until(task["taskId"], "working")
    with anyio.fail_after(5):
        while seen.get("statusMessage") not in ("step 2 of 3", "step 3 of 3"):
            seen = (await rpc.get(task["taskId"]))["result"]
    result = (await rpc.send("tasks/result", {"taskId": task["taskId"]}))["result"]
    assert result["content"] == [{"type": "text", "text": "report of 3 steps"}]
    assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task["taskId"]}
    assert (await rpc.get(task["taskId"]))["result"]["status"] == "completed"


async def test_optional_runs_plainly_required_and_forbidden_refuse_the_wrong_way(
    http: Any,
) -> None:
    rpc = await legacy(http)
    plain = await rpc.call("report", {"steps": 1})
    assert plain["result"]["content"][0]["text"] == "report of 1 steps"
    assert error_code(await rpc.call("export", {"seconds": 0})) == -32601
    assert error_code(await rpc.call("quick", {}, task={})) == -32601
    assert error_code(await rpc.call("nope", {}, task={})) == -32602  # unknown, as a call


async def test_tool_error_fails_the_task_and_result_is_the_error_result(http: Any) -> None:
    rpc = await legacy(http)
    task_id = await rpc.task("report", {"steps": 0, "fail": "tool"})
    task = await rpc.until(task_id, "failed", "completed")
    assert task["status"] == "failed"
    assert "could not be built" in task["statusMessage"]
    result = (await rpc.send("tasks/result", {"taskId": task_id}))["result"]
    assert result["isError"] is True


async def test_protocol_error_fails_the_task_and_result_is_that_error(http: Any) -> None:
    rpc = await legacy(http)
    task_id = await rpc.task("report", {"steps": 0, "fail": "protocol"})
    assert (await rpc.until(task_id, "failed", "completed"))["status"] == "failed"
    answer = await rpc.send("tasks/result", {"taskId": task_id})
    assert answer["error"]["code"] == -32010
    assert "refused" in answer["error"]["message"]


async def test_cancel_stops_the_handler_and_stays_cancelled(http: Any) -> None:
    rpc = await legacy(http)
    kit.EVENTS.clear()
    task_id = await rpc.task("export", {"seconds": 30})
    with anyio.fail_after(5):
        while "export started" not in kit.EVENTS:
            await anyio.sleep(0.02)
    cancelled = await rpc.send("tasks/cancel", {"taskId": task_id})
    assert cancelled["result"]["status"] == "cancelled"
    with anyio.fail_after(5):
        while "export cancelled" not in kit.EVENTS:
            await anyio.sleep(0.02)
    await anyio.sleep(0.2)
    assert (await rpc.get(task_id))["result"]["status"] == "cancelled"
    assert error_code(await rpc.send("tasks/cancel", {"taskId": task_id})) == -32602
    assert error_code(await rpc.send("tasks/result", {"taskId": task_id})) == -32600


async def test_tasks_belong_to_the_caller_not_the_session(http: Any) -> None:
    alice, bob = await legacy(http), await legacy(http, kit.BOB)
    task_id = await alice.task("export", {"seconds": 30})
    for method in ("tasks/get", "tasks/result", "tasks/cancel"):
        answer = await bob.send(method, {"taskId": task_id})
        assert error_code(answer) == -32602, method
        assert answer["error"]["message"] == f"Unknown task: {task_id}"
    assert (await bob.send("tasks/list", {}))["result"]["tasks"] == []
    again = await legacy(http)  # a new session, the same key
    listed = (await again.send("tasks/list", {}))["result"]["tasks"]
    assert [t["taskId"] for t in listed] == [task_id]
    assert (await again.send("tasks/cancel", {"taskId": task_id}))["result"]["status"] == (
        "cancelled"
    )
    assert error_code(await again.send("tasks/list", {"cursor": "bad!"})) == -32602
    assert error_code(await again.get("no-such-task")) == -32602


async def test_ttl_is_honoured(http: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from mcpgen.runtime import tasks

    monkeypatch.setattr(tasks, "MIN_TTL_MS", 500)
    rpc = await legacy(http)
    task_id = await rpc.task("report", {"steps": 0}, ttl=600)
    assert (await rpc.until(task_id, "completed"))["ttl"] == 600
    await anyio.sleep(0.8)
    assert error_code(await rpc.get(task_id)) == -32602
    ids = {await rpc.task("report", {"steps": 0}) for _ in range(5)}
    assert len(ids) == 5


@pytest.mark.parametrize("asked", [0, -5, 1])
async def test_a_ttl_too_short_to_poll_is_raised_to_the_minimum(http: Any, asked: int) -> None:
    from mcpgen.runtime.tasks import MIN_TTL_MS

    rpc = await legacy(http)
    answer = await rpc.call("report", {"steps": 1, "delay": 1.2}, task={"ttl": asked})
    task = answer["result"]["task"]
    assert task["ttl"] == MIN_TTL_MS  # the ttl kept, as the specification asks
    done = await rpc.until(task["taskId"], "completed")  # not cancelled, not forgotten
    assert done["ttl"] == MIN_TTL_MS
    result = (await rpc.send("tasks/result", {"taskId": task["taskId"]}))["result"]
    assert result["content"][0]["text"] == "report of 1 steps"


async def test_a_question_on_a_json_answered_session_says_what_the_session_is(
    http: Any,
) -> None:
    rpc = await legacy(http)  # the kit's app: a stateful session, json_response on
    task_id = await rpc.task("pick", {})
    await rpc.until(task_id, "input_required")
    with anyio.fail_after(10):
        result = (await rpc.send("tasks/result", {"taskId": task_id}))["result"]
    text = result["content"][0]["text"]
    assert result["isError"] is True
    assert "answered with JSON" in text and "--no-json-response" in text, text
    assert "stateless" not in text
    assert (await rpc.get(task_id))["result"]["statusMessage"] == text


# -- 2026-07-28 ------------------------------------------------------------------------------


async def test_modern_extension_flat_result_and_get_carries_the_result(http: Any) -> None:
    rpc = kit.Rpc(http, kit.ALICE, kit.MODERN)
    discovered = await rpc.send("server/discover", {})
    assert kit.EXTENSION in discovered["result"]["capabilities"]["extensions"]
    answer = (await rpc.call("report", {"steps": 2, "delay": 0.1}))["result"]
    assert answer["resultType"] == "task" and answer["status"] == "working"
    assert {"taskId", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"} <= set(answer)
    done = await rpc.until(answer["taskId"], "completed")
    assert done["resultType"] == "complete"
    assert done["result"]["content"] == [{"type": "text", "text": "report of 2 steps"}]
    assert error_code(await rpc.send("tasks/result", {"taskId": answer["taskId"]})) == -32601
    assert error_code(await rpc.send("tasks/list", {})) == -32601


async def test_modern_errors_and_cancel(http: Any) -> None:
    rpc = kit.Rpc(http, kit.ALICE, kit.MODERN)
    tool_error = await rpc.task("report", {"steps": 0, "fail": "tool"})
    done = await rpc.until(tool_error, "completed", "failed")
    assert done["status"] == "completed" and done["result"]["isError"] is True
    protocol = await rpc.task("report", {"steps": 0, "fail": "protocol"})
    failed = await rpc.until(protocol, "completed", "failed")
    assert failed["status"] == "failed" and failed["error"]["code"] == -32010
    kit.EVENTS.clear()
    long = await rpc.task("export", {"seconds": 30})
    ack = (await rpc.send("tasks/cancel", {"taskId": long}))["result"]
    assert ack["resultType"] == "complete" and set(ack) <= {"resultType", "_meta"}
    assert (await rpc.until(long, "cancelled", timeout=5))["status"] == "cancelled"
    bob = kit.Rpc(http, kit.BOB, kit.MODERN)
    assert error_code(await bob.get(long)) == -32602


async def test_modern_without_the_extension(http: Any) -> None:
    rpc = kit.Rpc(http, kit.ALICE, kit.MODERN)
    task_id = await rpc.task("report", {"steps": 0})
    rpc.declare = False
    plain = (await rpc.call("report", {"steps": 1}))["result"]
    assert plain["content"][0]["text"] == "report of 1 steps"
    refused = await rpc.call("export", {})
    assert error_code(refused) == -32021
    assert refused["error"]["data"] == {"requiredCapabilities": {"extensions": {kit.EXTENSION: {}}}}
    assert error_code(await rpc.get(task_id)) == -32021


async def test_modern_input_required_then_update(http: Any) -> None:
    rpc = kit.Rpc(http, kit.ALICE, kit.MODERN)
    task_id = await rpc.task("pick", {})
    asked = await rpc.until(task_id, "input_required")
    (key,) = asked["inputRequests"]
    assert asked["inputRequests"][key]["method"] == "elicitation/create"
    answer = {key: {"action": "accept", "content": {"colour": "red"}}}
    updated = await rpc.send("tasks/update", {"taskId": task_id, "inputResponses": answer})
    assert "error" not in updated
    done = await rpc.until(task_id, "completed")
    assert done["result"]["content"][0]["text"] == "picked red"


async def test_an_invalid_input_response_is_refused_and_the_task_still_asks(http: Any) -> None:
    """The task waits for a valid answer (it ended failed for good); answers to keys that
    were not asked are ignored, as the extension says."""
    rpc = kit.Rpc(http, kit.ALICE, kit.MODERN)
    task_id = await rpc.task("pick", {})
    (key,) = (await rpc.until(task_id, "input_required"))["inputRequests"]
    for bad in ({key: "not an answer"}, {key: {"action": "maybe"}}):
        refused = await rpc.send("tasks/update", {"taskId": task_id, "inputResponses": bad})
        assert error_code(refused) == -32602 and refused["error"]["data"] == {"inputResponse": key}
    assert (await rpc.get(task_id))["result"]["status"] == "input_required"
    answer = {key: {"action": "accept", "content": {"colour": "red"}}, "other": "ignored"}
    updated = await rpc.send("tasks/update", {"taskId": task_id, "inputResponses": answer})
    assert "error" not in updated
    done = await rpc.until(task_id, "completed")
    assert done["result"]["content"][0]["text"] == "picked red"


async def test_running_tasks_per_caller_are_bounded(
    http: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpgen.runtime import tasks

    monkeypatch.setattr(tasks, "MAX_RUNNING", 2)
    alice, bob = await legacy(http), await legacy(http, kit.BOB)
    first = await alice.task("export", {"seconds": 30})
    await alice.task("export", {"seconds": 30})
    refused = await alice.call("export", {"seconds": 30}, task={})
    assert error_code(refused) == -32600 and "Too many tasks" in refused["error"]["message"]
    await bob.task("export", {"seconds": 30})  # another caller is not held back
    await alice.send("tasks/cancel", {"taskId": first})
    await alice.until(first, "cancelled")
    with anyio.fail_after(5):
        while "error" in await alice.call("export", {"seconds": 30}, task={}):
            await anyio.sleep(0.05)


async def test_answering_a_2026_task_counts_it_running_again(
    http: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task waiting for input does not run; answered (tasks/update) it runs again, so it
    counts again: 1000 kept tasks answered at once ran 1000 handlers past the cap of 100."""
    from mcpgen.runtime import tasks

    monkeypatch.setattr(tasks, "MAX_RUNNING", 1)
    rpc = kit.Rpc(http, kit.ALICE, kit.MODERN)
    asking = await rpc.task("pick", {})
    (key,) = (await rpc.until(asking, "input_required"))["inputRequests"]
    long = await rpc.task("export", {"seconds": 30})
    answer = {key: {"action": "accept", "content": {"colour": "red"}}}
    update = {"taskId": asking, "inputResponses": answer}
    assert error_code(await rpc.send("tasks/update", update)) == -32600
    assert (await rpc.get(asking))["result"]["status"] == "input_required"
    await rpc.send("tasks/cancel", {"taskId": long})
    with anyio.fail_after(5):
        while "error" in await rpc.send("tasks/update", update):
            await anyio.sleep(0.05)
    assert (await rpc.until(asking, "completed"))["result"]["content"][0]["text"] == "picked red"


async def test_anonymous_callers_cannot_list_tasks() -> None:
    spec = kit.make_spec()
    spec["auth"] = {"type": "none"}
    async with running(kit.app(spec)) as app, http_client(app) as http:
        rpc = kit.Rpc(http, "ignored")
        opened = await rpc.open()
        assert "list" not in opened["result"]["capabilities"]["tasks"]
        task_id = await rpc.task("report", {"steps": 0})
        assert (await rpc.until(task_id, "completed"))["status"] == "completed"
        assert error_code(await rpc.send("tasks/list", {})) == -32601


async def test_legacy_task_result_is_what_the_plain_call_answers(http: Any) -> None:
    rpc = await legacy(http)
    plain = (await rpc.call("report", {"steps": 1}))["result"]
    task_id = await rpc.task("report", {"steps": 1})
    await rpc.until(task_id, "completed")
    result = (await rpc.send("tasks/result", {"taskId": task_id}))["result"]
    assert result.pop("_meta") == {"io.modelcontextprotocol/related-task": {"taskId": task_id}}
    assert result == {k: v for k, v in plain.items() if k != "_meta"}  # no 2026 resultType


class _Away:
    """A task cache that, while ``down``, misses every read and drops every write, as
    ``RedisCache`` does while Redis is unreachable."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.down = inner, False

    async def get(self, key: str) -> Any:
        return None if self.down else await self.inner.get(key)

    async def get_many(self, keys: list[str]) -> list[Any]:
        return [None] * len(keys) if self.down else await self.inner.get_many(keys)

    async def set(self, key: str, value: Any, ttl: float) -> None:
        if not self.down:
            await self.inner.set(key, value, ttl)

    async def delete(self, key: str) -> None:
        if not self.down:
            await self.inner.delete(key)

    async def change(self, key: str, edit: Any) -> bool:
        return not self.down and await self.inner.change(key, edit)

    async def change_many(self, keys: list[str], edit: Any) -> bool:
        return not self.down and await self.inner.change_many(keys, edit)


async def test_a_store_outage_neither_cancels_a_task_nor_leaves_it_working_for_ever(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Redis away for a moment: the running handler goes on (it was cancelled as if its
    record had expired), and a task whose end could not be written reads failed, not
    working until its ttl (legacy tasks/result waited that long)."""
    from mcpgen.runtime import tasks

    store = _Away(tasks.local_cache())
    monkeypatch.setattr(tasks, "local_cache", lambda: store)
    kit.EVENTS.clear()
    async with running(kit.app()) as app, http_client(app) as http:
        rpc = await legacy(http)
        outlives = await rpc.task("export", {"seconds": 2.5})
        ends_meanwhile = await rpc.task("report", {"steps": 1, "delay": 1})
        store.down = True
        await anyio.sleep(1.5)  # the watcher looks once a second; the report ends meanwhile
        store.down = False
        assert kit.EVENTS == ["export started"]
        assert (await rpc.until(outlives, "completed", "failed"))["status"] == "completed"
        lost = await rpc.until(ends_meanwhile, "completed", "failed", timeout=2)
        assert lost["status"] == "failed" and "store was away" in lost["statusMessage"]
        with anyio.fail_after(2):
            answer = await rpc.send("tasks/result", {"taskId": ends_meanwhile})
        assert error_code(answer) == -32600


async def test_a_store_away_is_an_error_to_retry_not_an_unknown_task(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Redis away (or full) when a task is created: the call is refused (-32603), its handler
    does not run, nor does the refusal count against the caller's running tasks; when a task
    is read, -32603 too. Before, the call answered a task id that no replica could ever read
    while its handler ran, and a read said -32602 (unknown: the client gives the task up)."""
    from mcpgen.runtime import tasks

    store = _Away(tasks.local_cache())
    monkeypatch.setattr(tasks, "local_cache", lambda: store)
    monkeypatch.setattr(tasks, "MAX_RUNNING", 1)
    kit.EVENTS.clear()
    async with running(kit.app()) as app, http_client(app) as http:
        rpc = await legacy(http)
        store.down = True
        call = {"name": "export", "arguments": {"seconds": 0.1}, "task": {"ttl": 60000}}
        answer = await rpc.send("tools/call", call)
        assert error_code(answer) == -32603 and "store" in answer["error"]["message"]
        await anyio.sleep(0.2)
        assert kit.EVENTS == []
        store.down = False
        task_id = await rpc.task("export", {"seconds": 0.1})
        store.down = True
        for method in ("tasks/get", "tasks/result", "tasks/cancel"):
            assert error_code(await rpc.send(method, {"taskId": task_id})) == -32603, method
        store.down = False
        assert (await rpc.until(task_id, "completed"))["status"] == "completed"


@pytest.mark.parametrize("wrong", ["x" * 100_000, {"deep": [1] * 1000}, 5, None])
async def test_a_malformed_task_id_is_unknown_and_not_echoed(http: Any, wrong: Any) -> None:
    rpc = await legacy(http)
    for method in ("tasks/get", "tasks/result", "tasks/cancel"):
        answer = await rpc.send(method, {"taskId": wrong})
        assert error_code(answer) == -32602 and len(str(answer)) < 300, (method, answer)


class _Remote(_Away):
    """A task cache whose writes take a turn of the loop, as Redis's do."""

    async def change(self, key: str, edit: Any) -> bool:
        await anyio.sleep(0.01)
        return await super().change(key, edit)

    async def change_many(self, keys: list[str], edit: Any) -> bool:
        await anyio.sleep(0.01)
        return await super().change_many(keys, edit)


async def test_concurrent_calls_do_not_pass_the_running_cap_together(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each call checked the cap before its awaited writes and counted itself after them:
    calls at once all passed (with Redis, 100 running became as many as were sent)."""
    from mcpgen.runtime import tasks

    monkeypatch.setattr(tasks, "MAX_RUNNING", 2)
    store = _Remote(tasks.local_cache())
    monkeypatch.setattr(tasks, "local_cache", lambda: store)
    async with running(kit.app()) as app, http_client(app) as http:
        rpc = await legacy(http)
        answers: list[dict[str, Any]] = []

        async def call() -> None:
            answers.append(await rpc.call("export", {"seconds": 30}, task={}))

        async with anyio.create_task_group() as group:
            for _ in range(6):
                group.start_soon(call)
        assert sum("result" in answer for answer in answers) == 2, answers


async def test_a_2026_task_asking_is_no_wait_for_a_handshake_era_tasks_result(http: Any) -> None:
    """Its questions are answered by a 2026 tasks/update only: tasks/result (on a task read
    in both eras) says so at once, where it waited until the task's ttl."""
    modern, old = kit.Rpc(http, kit.ALICE, kit.MODERN), await legacy(http)
    for wait in (False, True):  # asking when tasks/result comes, and while it waits
        task_id = await modern.task("pick", {})
        if wait:
            await modern.until(task_id, "input_required")
        with anyio.fail_after(5):
            refused = await old.send("tasks/result", {"taskId": task_id})
        assert error_code(refused) == -32600 and "tasks/update" in refused["error"]["message"]
    (key,) = (await modern.get(task_id))["result"]["inputRequests"]
    answer = {key: {"action": "accept", "content": {"colour": "red"}}}
    await modern.send("tasks/update", {"taskId": task_id, "inputResponses": answer})
    with anyio.fail_after(5):
        done = (await old.send("tasks/result", {"taskId": task_id}))["result"]
    assert done["content"][0]["text"] == "picked red"


async def test_a_tool_error_reads_as_each_era_says_whichever_era_made_the_task(
    http: Any,
) -> None:
    """An ``isError`` result: ``failed`` in the handshake era, ``completed`` (with the result)
    in 2026-07-28, also for a task the other era created (a 2026 client read ``failed``
    with a made-up -32603, which the extension keeps for JSON-RPC errors)."""
    modern, old = kit.Rpc(http, kit.ALICE, kit.MODERN), await legacy(http)
    for creator in (old, modern):
        task_id = await creator.task("report", {"steps": 0, "fail": "tool"})
        with anyio.fail_after(5):
            await old.send("tasks/result", {"taskId": task_id})  # it has ended
        seen = (await modern.get(task_id))["result"]
        assert seen["status"] == "completed" and "error" not in seen, seen
        assert seen["result"]["isError"] is True
        task = (await old.get(task_id))["result"]
        assert (
            task["status"] == "failed" and task["statusMessage"] == "the report could not be built"
        )


async def test_a_2026_client_answers_a_handshake_era_tasks_question(http: Any) -> None:
    """The question travels on a handshake-era tasks/result, and is kept in the task too: a
    2026 reader saw ``working`` and its tasks/update was acknowledged and dropped (the task
    waited until its ttl). It reads ``input_required`` with the question now, and its answer
    reaches the handler; another session reads the result."""
    modern, old = kit.Rpc(http, kit.ALICE, kit.MODERN), await legacy(http)
    task_id = await old.task("pick", {})
    assert (await old.until(task_id, "input_required"))["status"] == "input_required"
    asked = (await modern.until(task_id, "input_required"))["inputRequests"]
    ((key, question),) = asked.items()
    assert question["method"] == "elicitation/create", question
    assert question["params"]["_meta"] == {kit.RELATED: {"taskId": task_id}}
    answer = {key: {"action": "accept", "content": {"colour": "teal"}}}
    refused = await modern.send("tasks/update", {"taskId": task_id, "inputResponses": {key: 1}})
    assert error_code(refused) == -32602
    await modern.send("tasks/update", {"taskId": task_id, "inputResponses": answer})
    with anyio.fail_after(5):
        done = (await (await legacy(http)).send("tasks/result", {"taskId": task_id}))["result"]
    assert done["content"][0]["text"] == "picked teal"
    assert (await modern.get(task_id))["result"]["status"] == "completed"


async def test_a_2026_task_answered_after_its_tool_went_fails_as_a_call_would(
    http: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Answered (tasks/update) after its tool was switched off or removed by a rebuild, the
    task runs again and fails with the error a call gets, not an internal error and a
    logged traceback."""
    from mcpgen.runtime import tools

    rpc = kit.Rpc(http, kit.ALICE, kit.MODERN)
    asking = await rpc.task("pick", {})
    (key,) = (await rpc.until(asking, "input_required"))["inputRequests"]
    find = tools.ToolTable.find

    def gone(self: Any, name: str) -> Any:
        if name == "pick":
            raise tools.UnknownTool(name)
        return find(self, name)

    monkeypatch.setattr(tools.ToolTable, "find", gone)
    answer = {key: {"action": "accept", "content": {"colour": "red"}}}
    await rpc.send("tasks/update", {"taskId": asking, "inputResponses": answer})
    ended = await rpc.until(asking, "failed", "completed")
    assert ended["status"] == "failed" and "Unknown tool: pick" in ended["statusMessage"]
    assert "internal error" not in str(ended) and "Traceback" not in caplog.text


async def test_a_question_from_another_replica_on_a_json_answered_session_is_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A handshake-era tasks/result on B, whose session cannot carry the question of the
    task running on A, says so (it waited until the task's ttl)."""
    from mcpgen.runtime import tasks

    shared = tasks.local_cache()
    monkeypatch.setattr(tasks, "local_cache", lambda: shared)
    async with (
        running(kit.app()) as a,
        http_client(a) as on_a,
        running(kit.app()) as b,
        http_client(b) as on_b,
    ):
        task_id = await (await legacy(on_a)).task("pick", {})
        rpc = await legacy(on_b)
        await rpc.until(task_id, "input_required")
        with anyio.fail_after(10):
            answer = await rpc.send("tasks/result", {"taskId": task_id})
        assert error_code(answer) == -32600 and "answered with JSON" in answer["error"]["message"]
        assert (await rpc.get(task_id))["result"]["status"] == "input_required"


async def test_past_max_tasks_a_new_task_is_refused_saying_so() -> None:
    async with running(kit.app(max_tasks=1)) as app, http_client(app) as http:
        await (await legacy(http)).task("report", {"steps": 0})
        answer = await kit.Rpc(http, kit.BOB, kit.MODERN).call("report", {"steps": 0})
        assert error_code(answer) == -32600 and "at most 1 tasks (--max-tasks)" in str(answer)
