"""``ctx.enable_tool`` and ``ctx.enable_prompt`` on replicas sharing Redis: a handler that
switches a tool or a prompt off on one replica changes what every replica lists and calls
(one started later too), not only its own process's tables; without Redis nothing is
shared and nothing is paid for it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import pytest
import rtkit
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from redis_support import RedisServer, redis_server

from mcpgen.runtime import sharing
from mcpgen.runtime.context import Context
from mcpgen.runtime.server import build_server
from mcpgen.runtime.shared import SharedState, shared_state
from mcpgen.runtime.tools import Arguments, plain

__all__ = ["redis_server"]
pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]
SWITCH = {
    "type": "object",
    "properties": {"tool": {"type": "string"}, "on": {"type": "boolean"}},
    "required": ["tool", "on"],
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@rtkit.HANDLERS.tool("switch")
async def switch(arguments: Arguments, ctx: Context) -> Any:
    args = plain(arguments)
    ctx.enable_tool(args["tool"], args["on"])
    ctx.enable_prompt("greet", args["on"])
    await ctx.notify_tools_changed()
    await ctx.notify_prompts_changed()
    return {}


def spec() -> dict[str, Any]:
    made = rtkit.make_spec("none")
    made["tools"].append(rtkit._tool("switch", SWITCH))
    made["capabilities"].update(toolsListChanged=True, promptsListChanged=True)
    return made


@asynccontextmanager
async def replica(url: str) -> AsyncIterator[Client]:
    """A client of one replica: its own shared state over ``url``, its own server."""
    shared: SharedState = shared_state(url, prefix="switches", secret="s" * 40)
    async with shared, Client(build_server(spec(), rtkit.HANDLERS, shared=shared)) as client:
        yield client


async def shown(client: Client) -> tuple[set[str], set[str]]:
    tools = {t.name for t in (await client.list_tools()).tools}
    return tools, {p.name for p in (await client.list_prompts()).prompts}


async def until(client: Client, echo_shown: bool) -> None:
    """Wait for ``client``'s replica to list ``echo`` and ``greet`` (or neither)."""
    with anyio.fail_after(5):
        while True:
            tools, prompts = await shown(client)
            if ("echo" in tools) == echo_shown == ("greet" in prompts):
                return
            await anyio.sleep(0.05)


async def test_a_switch_on_one_replica_holds_on_every_replica(
    redis_server: RedisServer,
) -> None:
    async with AsyncExitStack() as stack:
        a = await stack.enter_async_context(replica(redis_server.url))
        b = await stack.enter_async_context(replica(redis_server.url))
        assert "echo" in (await shown(b))[0]
        await a.call_tool("switch", {"tool": "echo", "on": False})
        assert "echo" not in (await shown(a))[0]  # its own replica: at once
        await until(b, echo_shown=False)
        with pytest.raises(MCPError, match="Unknown tool: echo"):
            await b.call_tool("echo", {"text": "hi"})
        late = await stack.enter_async_context(replica(redis_server.url))
        assert await shown(late) == await shown(b)  # started after the switch: read at once
        await late.call_tool("switch", {"tool": "echo", "on": True})
        await until(a, echo_shown=True)
        await until(b, echo_shown=True)
        assert (await b.call_tool("echo", {"text": "hi"})).is_error is False


async def test_without_redis_nothing_is_shared_nor_paid_for() -> None:
    server = build_server(spec(), rtkit.HANDLERS)
    assert "switches" not in server.tools.registry
    assert not any(isinstance(m, sharing.Switches) for m in server.middleware)


async def test_concurrent_switches_on_two_replicas_end_alike(redis_server: RedisServer) -> None:
    """Off on one replica and on on another at once: whichever Redis took last, every
    replica ends with the same lists (a value older than the one applied is ignored)."""
    async with replica(redis_server.url) as a, replica(redis_server.url) as b:
        for _ in range(5):
            async with anyio.create_task_group() as group:
                group.start_soon(a.call_tool, "switch", {"tool": "echo", "on": False})
                group.start_soon(b.call_tool, "switch", {"tool": "echo", "on": True})
            with anyio.fail_after(5):
                while await shown(a) != await shown(b):
                    await anyio.sleep(0.05)
            await anyio.sleep(0.2)  # nothing later undoes it
            assert await shown(a) == await shown(b)


async def test_switches_hold_again_after_redis_loses_its_data(redis_server: RedisServer) -> None:
    """Redis restarted empty (no persistence), or the value expired: the next switch wrote
    version 1 again, which every replica that had applied a version 1 or more ignored (the
    replica that switched showed echo, the other still hid it)."""
    import redis.asyncio

    async with replica(redis_server.url) as a, replica(redis_server.url) as b:
        await a.call_tool("switch", {"tool": "echo", "on": False})
        await until(b, echo_shown=False)
        connection = redis.asyncio.from_url(redis_server.url)
        await connection.flushall()
        await connection.aclose()
        await a.call_tool("switch", {"tool": "echo", "on": True})
        await until(b, echo_shown=True)


async def test_a_switch_made_while_redis_is_down_is_shared_when_it_returns(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Redis killed, a handler switches echo off on one replica, Redis restarted (empty):
    the switch was kept pending and is written when the replica's subscription is back; the
    notification held meanwhile then tells the other replica, which hides echo too (it kept
    listing echo, the switching replica hiding it, for good)."""
    async with replica(redis_server.url) as a, replica(redis_server.url) as b:
        assert "echo" in (await shown(b))[0]
        redis_server.kill()
        await a.call_tool("switch", {"tool": "echo", "on": False})
        assert "echo" not in (await shown(a))[0]
        assert "switch(es) kept here until Redis is back" in caplog.text
        redis_server.start()
        await until(b, echo_shown=False)
        assert "echo" not in (await shown(a))[0]
        await b.call_tool("switch", {"tool": "echo", "on": True})  # and shared as before
        await until(a, echo_shown=True)
