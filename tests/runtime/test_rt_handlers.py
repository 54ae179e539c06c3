"""What happens around a handler, at the one dispatch point: each failure is reported for
what it is (bad arguments, a handler that built bad data, a stub not written yet, a
timeout, an internal error whose details stay in the server log), and a handler whose HTTP
client hung up is cancelled while later calls go on."""

from __future__ import annotations

import importlib.util
import json
import logging
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
import rtkit
from pydantic import BaseModel
from rtbridge import http_client, running
from rtconnect import NETWORK, Mode, cells, connect
from rtstdio import cleaned_up

from mcpgen.runtime.context import Context
from mcpgen.runtime.errors import ToolError
from mcpgen.runtime.lifecycle import INFLIGHT
from mcpgen.runtime.tools import ToolBinding, ToolTable, parse

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]
IN_PROCESS = ["memory", *NETWORK]


def text_of(result: types.CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, types.TextContent))


@cells(IN_PROCESS)
async def test_a_raising_handler_leaks_nothing_to_the_client(
    transport: str, mode: Mode, caplog: pytest.LogCaptureFixture
) -> None:
    async with connect(transport, mode) as client:
        result = await client.call_tool("boom", {})
        assert (await client.call_tool("echo", {"text": "on"})).structured_content == {"text": "on"}
    assert result.is_error
    shown = result.model_dump_json()
    assert rtkit.SECRET not in shown and "Traceback" not in shown and "RuntimeError" not in shown
    assert "failed with an internal error" in text_of(result)
    logged = [r for r in caplog.records if r.getMessage() == "tool boom failed"]
    assert logged and logged[0].exc_info and rtkit.SECRET in str(logged[0].exc_info[1])


@cells(["memory", "http-json", "websocket"])
async def test_a_tool_timeout_answers_in_time_and_cancels_the_handler(
    transport: str, mode: Mode, tmp_path: Path
) -> None:
    marker = tmp_path / "limited"
    async with connect(transport, mode) as client:
        with anyio.fail_after(4):
            result = await client.call_tool("limited", {"seconds": 30, "marker": str(marker)})
    assert result.is_error and "timed out after 0.5 s" in text_of(result)
    assert marker.with_suffix(".cancelled").exists() and marker.read_text() == "cleanup"


# -- failures, each named for what it is ----------------------------------------------------


class Point(BaseModel):
    x: int


async def _bad_output(arguments: Any, ctx: Context) -> Any:
    return Point.model_validate({"x": "not a number"})  # the handler's own mistake


async def _parsed(arguments: Any, ctx: Context) -> Any:
    return {"x": parse(Point, arguments).x}


async def _refuses(arguments: Any, ctx: Context) -> Any:
    raise ToolError("the answer is no")


async def _library_not_implemented(arguments: Any, ctx: Context) -> Any:
    def deep() -> None:
        raise NotImplementedError("a library's missing feature")

    deep()


class Total(BaseModel):
    total: float


async def _overflows(arguments: Any, ctx: Context) -> Any:
    return Total(total=1e308 * 10)  # finite arguments, an infinite sum


def _table(**calls: Any) -> ToolTable:
    schema = {"type": "object"}
    return ToolTable([ToolBinding({"name": n, "inputSchema": schema}, c) for n, c in calls.items()])


async def answer(table: ToolTable, name: str, arguments: dict[str, Any]) -> str:
    result = await table.dispatch(name, arguments, Context(request=None))  # type: ignore[arg-type]
    assert isinstance(result, types.CallToolResult) and result.is_error, result
    return text_of(result)


async def test_failures_are_reported_for_what_they_are() -> None:
    table = _table(
        bad_output=_bad_output,
        parsed=_parsed,
        refuses=_refuses,
        library=_library_not_implemented,
    )
    assert "does not validate" in await answer(table, "bad_output", {})
    assert "Invalid arguments" not in await answer(table, "bad_output", {})
    assert (await answer(table, "parsed", {"x": "y"})).startswith(
        "Invalid arguments for tool 'parsed': x:"
    )
    assert await answer(table, "refuses", {}) == "the answer is no"
    assert "internal error" in await answer(table, "library", {})


async def test_a_non_finite_result_is_named_without_a_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A sum that overflowed: the client reads why, the log has one line (no traceback a
    caller could fill the log with)."""
    with caplog.at_level(logging.ERROR):
        said = await answer(_table(overflows=_overflows), "overflows", {})
    assert said == (
        "Tool 'overflows' failed: its result holds a NaN or infinite number, which JSON "
        "cannot carry"
    )
    assert [r.getMessage() for r in caplog.records] == [
        "tool overflows returned a NaN or infinite number"
    ]
    assert not any(r.exc_info for r in caplog.records)


async def _cyclic(arguments: Any, ctx: Context) -> Any:
    loop: dict[str, Any] = {"x": 1.0}
    loop["self"] = loop
    return loop


@pytest.mark.timeout(20)
async def test_a_result_holding_itself_is_an_internal_error_not_a_hang() -> None:
    """A dict that contains itself cannot be sent; looking in it for a NaN (to say why)
    walked the cycle for ever: the call spun the CPU and was never answered (found by
    branch n1)."""
    said = await answer(_table(cyclic=_cyclic), "cyclic", {})
    assert said == "Tool 'cyclic' failed with an internal error (see the server log)"


async def test_an_unwritten_stub_says_where_to_write_it(tmp_path: Path) -> None:
    """A ``raise NotImplementedError`` in the stub mcpgen wrote is "not implemented yet";
    the same error raised by anything the handler calls is an internal error."""
    folder = tmp_path / "demo_mcp" / "handlers" / "tools"
    folder.mkdir(parents=True)
    path = folder / "todo.py"
    path.write_text(
        "async def handle(arguments, ctx):\n    raise NotImplementedError\n", encoding="utf-8"
    )
    loader = importlib.util.spec_from_file_location("demo_stub_todo", path)
    assert loader is not None and loader.loader is not None
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    handler_path = "src/demo_mcp/handlers/tools/todo.py"
    schema = {"type": "object"}
    table = ToolTable(
        [
            ToolBinding({"name": "todo", "inputSchema": schema}, module.handle, handler_path),
            ToolBinding(
                {"name": "deep", "inputSchema": schema}, _library_not_implemented, handler_path
            ),
        ]
    )
    assert await answer(table, "todo", {}) == (
        "Tool 'todo' is not implemented yet: write its handler in " + handler_path
    )
    assert "internal error" in await answer(table, "deep", {})


# -- clients that hang up mid-call -------------------------------------------------------------

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
ERAS = {"legacy": "2025-11-25", "2026-07-28": "2026-07-28"}
DROP_ARMS = {  # arms whose answer nobody can resume: the call is cancelled
    "http-stateless": {},
    "http-json": {},
    "http": {"event_store_size": 0},
}


def _call(id_: int, name: str, arguments: dict[str, Any], era: str) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if era != "legacy":
        params["_meta"] = {
            types.PROTOCOL_VERSION_META_KEY: ERAS[era],
            types.CLIENT_INFO_META_KEY: {"name": "t", "version": "0"},
            types.CLIENT_CAPABILITIES_META_KEY: {},
        }
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}


# 2026-07-28 has no sessions: its requests go to the stateless arms
DROPS = [(a, e) for a in DROP_ARMS for e in ERAS if a != "http" or e == "legacy"]


@pytest.mark.parametrize(("arm", "era"), DROPS, ids=[f"{a}-{e}" for a, e in DROPS])
async def test_http_clients_that_hang_up_cancel_their_calls(
    arm: str, era: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Nobody can receive the answer any more (no resumable stream): the handler is
    cancelled, and the server (and a stateful session) goes on serving."""
    spec = rtkit.make_spec("none")
    app = rtkit.app(spec, arm, **DROP_ARMS[arm])
    headers = {**HEADERS, "MCP-Protocol-Version": ERAS[era]}
    if era != "legacy":
        headers.update({"Mcp-Method": "tools/call", "Mcp-Name": "slow"})
    async with running(app), http_client(app) as http:
        if arm == "http":
            init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": ERAS[era], "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"}}}  # fmt: skip
            opened = await http.post("/mcp", json=init, headers=headers)
            headers["Mcp-Session-Id"] = opened.headers["mcp-session-id"]

        async def drop(i: int) -> None:
            marker = tmp_path / f"drop{i}"
            body = _call(i, "slow", {"seconds": 60, "marker": str(marker)}, era)
            with anyio.move_on_after(30) as waited:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(lambda: http.post("/mcp", json=body, headers=headers))
                    while not marker.with_suffix(".started").exists():
                        await anyio.sleep(0.01)
                    tg.cancel_scope.cancel()  # the client closes its connection mid-call
            assert not waited.cancelled_caught

        async with anyio.create_task_group() as tg:
            for i in range(5):
                tg.start_soon(drop, i)
        for i in range(5):  # each dropped call's handler is cancelled and cleans up
            await anyio.to_thread.run_sync(cleaned_up, tmp_path / f"drop{i}", 10.0)
            assert (tmp_path / f"drop{i}.cancelled").exists()
        for i in range(5):
            later = _call(100 + i, "echo", {"text": f"t{i}"}, era)
            named = {**headers, "Mcp-Name": "echo"} if era != "legacy" else headers
            response = await http.post("/mcp", json=later, headers=named)
            assert f'"t{i}"' in response.text, response.text
    assert not INFLIGHT.scopes  # what a graceful shutdown waits for
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not errors, [json.dumps(r.getMessage()) for r in errors]


async def test_a_dispatched_request_is_cancelled_in_the_sdks_own_scope() -> None:
    """A request the SDK's dispatcher runs has a cancel scope already (the one a
    ``notifications/cancelled`` cancels): a client's disconnect cancels that one, and
    ``run_request`` opens none per request (~44k instructions per call). It is found through
    SDK 2.3's private names: this fails if they change (the fallback, a scope of our own,
    would keep the behaviour and silently bring the cost back)."""
    from mcp.client import Client

    from mcpgen.runtime.lifecycle import dispatcher_scope

    found: dict[str, Any] = {}
    server = rtkit.server(rtkit.make_spec("none"))

    async def probe(ctx: Any, call_next: Any) -> Any:
        found[ctx.method] = dispatcher_scope(ctx)
        return await call_next(ctx)

    server.middleware.append(probe)
    async with Client(server, mode="legacy") as client:
        assert not (await client.call_tool("echo", {"text": "x"})).is_error
    assert isinstance(found["tools/call"], anyio.CancelScope)
    assert not found["tools/call"].cancel_called


@cells(["memory", "http-json"])
async def test_a_handlers_resource_not_found_keeps_its_message(transport: str, mode: Mode) -> None:
    from mcp.shared.exceptions import MCPError

    async with connect(transport, mode) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource("fixture://notes/gone")
    assert caught.value.code == types.INVALID_PARAMS
    assert caught.value.error.message == (
        "Resource not found: fixture://notes/gone: note gone was deleted yesterday"
    )


async def test_a_handler_is_made_on_its_first_call_and_one_that_fails_to_import_fails_alone(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The generated ``server.py`` wires each handler as a function that imports it and its
    models and returns it (``server.lazy``): made once, on the first call; one whose import
    fails fails its own calls only, with an internal error, and is tried again next time."""
    from mcp.client import Client

    from mcpgen.runtime.server import Handlers, build_server

    made: list[str] = []
    handlers = Handlers()

    @handlers.tool("echo")
    def make_echo() -> Any:
        made.append("echo")

        async def call(arguments: Any, ctx: Context) -> Any:
            return {"text": dict(arguments)["text"]}

        return call

    @handlers.tool("whoami")
    def make_whoami() -> Any:
        made.append("whoami")
        raise ImportError("No module named 'missing_dependency'")

    spec = rtkit.make_spec("none")
    spec["tools"] = [t for t in spec["tools"] if t["definition"]["name"] in ("echo", "whoami")]
    async with Client(build_server(spec, handlers), mode="legacy") as client:
        assert made == []  # nothing imported before a call
        for n in range(3):
            result = await client.call_tool("echo", {"text": f"hi {n}"})
            assert not result.is_error and result.structured_content == {"text": f"hi {n}"}
        failed = await client.call_tool("whoami", {})
        again = await client.call_tool("whoami", {})
    assert failed.is_error and "internal error" in text_of(failed)
    assert "missing_dependency" not in text_of(failed)
    assert again.is_error and made == ["echo", "whoami", "whoami"]
