"""MCP tasks x scopes and limits, raw JSON-RPC over streamable HTTP (docs/tasks.md): a task
stays behind its tool's scopes after it was created, hidden tools stay hidden from a
task-augmented call, and one caller's kept tasks are bounded."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

import pytest
import rtkit
import tasks_kit as kit
from rtbridge import http_client, running

from mcpgen.runtime.http_app import create_app
from mcpgen.runtime.server import build_server

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]
SCOPED = ("report", "quick")  # a task tool and a plain tool that need notes.read


def oauth_spec(*, hide: bool) -> dict[str, Any]:
    spec = kit.make_spec()
    spec["auth"] = copy.deepcopy(rtkit.make_spec("oauth", hide=hide)["auth"])
    for entry in spec["tools"]:
        if entry["ident"] in SCOPED:
            entry["scopes"] = [rtkit.READ]
    return spec


def oauth_app(spec: dict[str, Any]) -> Any:
    settings = rtkit.settings(spec, "http", json_response=True)
    return create_app(
        spec, partial(build_server, spec, kit.HANDLERS), settings, rtkit.environ(spec)
    )


@pytest.fixture
async def http() -> AsyncIterator[Any]:
    async with running(oauth_app(oauth_spec(hide=False))) as app, http_client(app) as client:
        yield client


async def caller(http: Any, scopes: list[str], era: str = kit.LEGACY) -> kit.Rpc:
    rpc = kit.Rpc(http, rtkit.token(scopes, subject="alice"), era)
    if era == kit.LEGACY:
        await rpc.open()
    return rpc


async def test_a_task_is_refused_once_its_caller_lost_the_tools_scope(http: Any) -> None:
    full = await caller(http, [rtkit.READ])
    task_id = await full.task("report", {"steps": 0})
    assert (await full.until(task_id, "completed"))["status"] == "completed"
    bare = await caller(http, [])  # the same subject, a token without notes.read
    assert bare.key != full.key
    for method in ("tasks/get", "tasks/result", "tasks/cancel"):
        answer = await bare.send(method, {"taskId": task_id})
        assert answer.get("error", {}).get("code") == -32003, (method, answer)
    assert (await bare.send("tasks/list", {}))["result"]["tasks"] == []
    modern = await caller(http, [], kit.MODERN)
    assert (await modern.get(task_id))["error"]["code"] == -32003
    listed = (await full.send("tasks/list", {}))["result"]["tasks"]  # the scope back: all there
    assert [t["taskId"] for t in listed] == [task_id]
    assert (await full.get(task_id))["result"]["status"] == "completed"


async def test_a_task_augmented_call_does_not_tell_hidden_tools_from_unknown_ones() -> None:
    async with running(oauth_app(oauth_spec(hide=True))) as app, http_client(app) as http:
        bare = await caller(http, [])
        answers = {
            name: (await bare.call(name, {"steps": 0}, task={}))["error"]
            for name in (*SCOPED, "no_such_tool")
        }
        plain = (await bare.call("no_such_tool", {}))["error"]
        for name, error in answers.items():
            assert (error["code"], error["message"]) == (plain["code"], f"Unknown tool: {name}")
        visible = await caller(http, [rtkit.READ])  # a tool it sees that runs no task
        assert (await visible.call("quick", {}, task={}))["error"]["code"] == -32601


async def test_a_hidden_tools_task_is_an_unknown_task_to_a_caller_without_its_scope() -> None:
    """Under hideUnauthorizedTools the same subject's token without the tool's scope gets
    what a made-up task id gets (it was "Unknown tool: report": the hidden tool named)."""
    async with running(oauth_app(oauth_spec(hide=True))) as app, http_client(app) as http:
        full = await caller(http, [rtkit.READ])
        task_id = await full.task("report", {"steps": 0})
        await full.until(task_id, "completed")
        asked = [
            (era, m) for era in (kit.LEGACY, kit.MODERN) for m in ("tasks/get", "tasks/cancel")
        ]
        for era, method in [*asked, (kit.LEGACY, "tasks/result")]:
            bare = await caller(http, [], era)
            for wanted in (task_id, "made-up"):
                error = (await bare.send(method, {"taskId": wanted}))["error"]
                assert (error["code"], error["message"]) == (-32602, f"Unknown task: {wanted}")


async def test_the_tasks_kept_for_one_caller_are_bounded(
    http: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpgen.runtime import tasks_store

    monkeypatch.setattr(tasks_store, "MAX_OWNED", 2)
    alice = await caller(http, [rtkit.READ])
    ids: list[str] = []
    for _ in range(3):
        ids.append(await alice.task("report", {"steps": 0}))
        await alice.until(ids[-1], "completed")
    listed = (await alice.send("tasks/list", {}))["result"]["tasks"]
    assert [t["taskId"] for t in listed] == ids[1:]
    dropped = await alice.get(ids[0])  # the oldest is gone, not only left out of the list
    assert dropped.get("error", {}).get("code") == -32602, dropped


async def test_tasks_list_cursors_are_checked_as_every_lists_are(
    http: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tasks/list pages as tools/list does: its cursors walk a caller's tasks once each, and
    one past the caller's own tasks (another caller's), a forged or a non-string cursor is
    invalid params, not an empty page."""
    from mcpgen.runtime import tasks

    monkeypatch.setattr(tasks, "PAGE", 2)
    bob = kit.Rpc(http, rtkit.token([rtkit.READ], subject="bob"))
    await bob.open()
    made = [await bob.task("report", {"steps": 0}) for _ in range(3)]
    first = (await bob.send("tasks/list", {}))["result"]
    last = (await bob.send("tasks/list", {"cursor": first["nextCursor"]}))["result"]
    assert [t["taskId"] for t in first["tasks"] + last["tasks"]] == made
    assert "nextCursor" not in last
    alice = await caller(http, [rtkit.READ])  # one task: bob's cursor is past its end
    await alice.task("report", {"steps": 0})
    for cursor in (first["nextCursor"], "OTk5", "!!!!", 7):
        answer = await alice.send("tasks/list", {"cursor": cursor})
        assert answer.get("error", {}).get("code") == -32602, answer


async def test_cancel_of_a_task_that_ends_meanwhile_says_it_ended(
    http: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpgen.runtime.tasks_store import TaskStore

    original = TaskStore.update

    async def racing(self: TaskStore, task_id: str, changes: Any, **options: Any) -> Any:
        if changes.get("statusMessage") == "cancelled by the client":  # it ends first
            await original(self, task_id, {"status": "completed", "result": {"content": []}})
        return await original(self, task_id, changes, **options)

    monkeypatch.setattr(TaskStore, "update", racing)
    alice = await caller(http, [rtkit.READ])
    task_id = await alice.task("export", {"seconds": 30})
    answer = await alice.send("tasks/cancel", {"taskId": task_id})
    assert answer.get("error", {}).get("code") == -32602, answer  # not a "working" task
    assert (await alice.get(task_id))["result"]["status"] == "completed"


async def test_a_cancel_the_store_does_not_take_is_an_error_not_a_recursion(
    http: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store that reads but takes no write (Redis transactions timing out) made tasks/cancel
    call itself until a RecursionError; the task still running, the cancel is an error."""
    from mcpgen.runtime.tasks_store import TaskStore

    original = TaskStore.update

    async def refusing(self: TaskStore, task_id: str, changes: Any, **options: Any) -> Any:
        if changes.get("statusMessage") == "cancelled by the client":
            return None
        return await original(self, task_id, changes, **options)

    monkeypatch.setattr(TaskStore, "update", refusing)
    alice = await caller(http, [rtkit.READ])
    task_id = await alice.task("export", {"seconds": 30})
    answer = await alice.send("tasks/cancel", {"taskId": task_id})
    assert answer.get("error", {}).get("code") == -32603, answer
    assert (await alice.get(task_id))["result"]["status"] == "working"
    monkeypatch.setattr(TaskStore, "update", original)
    assert "error" not in await alice.send("tasks/cancel", {"taskId": task_id})


async def test_a_2026_answer_the_store_does_not_take_is_an_error_not_acknowledged(
    http: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tasks/update whose answer the store did not write (Redis reads but its transaction
    fails) was acknowledged: the client waited for a task that never ran again. It is
    -32603 (try again) and the task still asks; once the store takes it, it runs."""
    from mcpgen.runtime.tasks_store import TaskStore

    original = TaskStore.update

    async def refusing(self: TaskStore, task_id: str, changes: Any, **options: Any) -> Any:
        if isinstance(changes, dict) and changes.get("status") == "working" and "call" in changes:
            return None
        return await original(self, task_id, changes, **options)

    monkeypatch.setattr(TaskStore, "update", refusing)
    alice = await caller(http, [rtkit.READ], kit.MODERN)
    asking = await alice.task("pick", {})
    (key,) = (await alice.until(asking, "input_required"))["inputRequests"]
    answer = {key: {"action": "accept", "content": {"colour": "red"}}}
    update = {"taskId": asking, "inputResponses": answer}
    refused = await alice.send("tasks/update", update)
    assert refused.get("error", {}).get("code") == -32603, refused
    assert (await alice.get(asking))["result"]["status"] == "input_required"
    monkeypatch.setattr(TaskStore, "update", original)
    assert "error" not in await alice.send("tasks/update", update)
    done = await alice.until(asking, "completed")
    assert done["result"]["content"][0]["text"] == "picked red"


async def test_a_2026_tasks_request_whose_mcp_name_names_another_task_is_refused(
    http: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tasks/* carry ``Mcp-Name: <taskId>`` (a load balancer routes by it): one naming
    another task is -32020, as tools/call's is, and does nothing; the matching one works."""
    alice = await caller(http, [rtkit.READ], kit.MODERN)
    mine, other = await alice.task("report", {"steps": 50, "delay": 0.2}), await alice.task(
        "report", {"steps": 0}
    )
    sent = kit.Rpc.headers

    def naming_other(self: kit.Rpc, method: str, params: Any) -> dict[str, str]:
        return {**sent(self, method, params), "Mcp-Name": other}

    monkeypatch.setattr(kit.Rpc, "headers", naming_other)
    for method in ("tasks/get", "tasks/cancel"):
        answer = await alice.send(method, {"taskId": mine})
        assert answer.get("error", {}).get("code") == -32020, (method, answer)
    answer = await alice.send("tasks/result", {"taskId": mine})  # not 2026-07-28's at all
    assert answer.get("error", {}).get("code") == -32601, answer
    monkeypatch.setattr(kit.Rpc, "headers", sent)
    assert (await alice.get(mine))["result"]["status"] == "working"  # not cancelled
    assert "error" not in await alice.send("tasks/cancel", {"taskId": mine})


async def test_the_result_bytes_kept_for_one_caller_are_bounded(
    http: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A thousand kept results of 10 MB each would be 10 GB: past the byte budget the
    caller's oldest tasks go (never the one that just ended)."""
    from mcpgen.runtime import tasks_store

    monkeypatch.setattr(tasks_store, "MAX_OWNED_BYTES", 1000)  # a record is ~450 bytes here
    alice = await caller(http, [rtkit.READ])
    ids: list[str] = []
    for _ in range(4):
        ids.append(await alice.task("report", {"steps": 0}))
        await alice.until(ids[-1], "completed")
    listed = (await alice.send("tasks/list", {}))["result"]["tasks"]
    assert [t["taskId"] for t in listed] == ids[2:]
    assert (await alice.get(ids[0])).get("error", {}).get("code") == -32602
    monkeypatch.setattr(tasks_store, "MAX_OWNED_BYTES", 10)  # one result over the budget
    last = await alice.task("report", {"steps": 0})
    assert (await alice.until(last, "completed"))["status"] == "completed"
    listed = (await alice.send("tasks/list", {}))["result"]["tasks"]
    assert [t["taskId"] for t in listed] == [last]


async def test_the_calls_kept_waiting_for_input_count_in_the_byte_budget(
    http: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 2026 task waiting for input keeps its call's arguments (up to the body limit
    each): a thousand of them were 4 GB, outside the result budget."""
    from mcpgen.runtime import tasks_store

    monkeypatch.setattr(tasks_store, "MAX_OWNED_BYTES", 25_000)
    alice = await caller(http, [rtkit.READ], kit.MODERN)
    ids: list[str] = []
    for _ in range(3):
        ids.append(await alice.task("pick", {"filler": "x" * 10_000}))
        await alice.until(ids[-1], "input_required")
    assert (await alice.get(ids[0])).get("error", {}).get("code") == -32602
    assert (await alice.get(ids[2]))["result"]["status"] == "input_required"


async def test_tasks_list_reads_the_records_of_one_page_only(
    http: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tasks/list read every record of the caller (up to 1000, and 100 MB of results) to
    show one page of small views: it reads a page's, at most ``PAGE_BYTES`` (here 15 kB)
    of them (but one), weighed by the caller's index."""
    from mcpgen.runtime import paging
    from mcpgen.runtime.tasks_store import TaskStore

    monkeypatch.setattr(paging, "PAGE_BYTES", 15_000)
    read: list[list[str]] = []
    records = TaskStore.records

    async def counted(self: TaskStore, task_ids: list[str]) -> Any:
        read.append(task_ids)
        return await records(self, task_ids)

    monkeypatch.setattr(TaskStore, "records", counted)
    modern, ids = await caller(http, [rtkit.READ], kit.MODERN), []
    for _ in range(3):  # three tasks keeping 10 kB calls
        ids.append(await modern.task("pick", {"filler": "x" * 10_000}))
        await modern.until(ids[-1], "input_required")
    alice, listed, params = await caller(http, [rtkit.READ]), [], {}
    while True:
        answer = (await alice.send("tasks/list", params))["result"]
        listed += [t["taskId"] for t in answer["tasks"]]
        if "nextCursor" not in answer:
            break
        params = {"cursor": answer["nextCursor"]}
    assert listed == ids and read == [[i] for i in ids]  # (all three at once, three times)
