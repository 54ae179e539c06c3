"""``ctx.notify_resources_changed()`` (docs/features.md, "Tools"): a handler that changes the
list of resources tells the clients that listen, over the wire: a 2026-07-28 client's listen
stream hears ``ResourcesListChanged``; a handshake-era session gets
``notifications/resources/list_changed`` (on stateless HTTP, on the calling request's own
stream; with JSON answers there is none, and the server does not advertise ``listChanged``)."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
import pytest
import rtkit
from mcp.client.subscriptions import ResourcesListChanged
from rtconnect import NETWORK, Mode, cells, connect

from mcpgen.runtime.context import Context

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


@rtkit.HANDLERS.tool("add_page")
async def add_page(arguments: Any, ctx: Context) -> Any:
    await ctx.notify_resources_changed()
    return {"added": True}


def spec() -> dict[str, Any]:
    made = rtkit.make_spec("none")
    made["capabilities"].update(resourcesListChanged=True, toolsListChanged=True)
    definition = {"name": "add_page", "description": "Add a page.", "inputSchema": rtkit.OPEN}
    made["tools"].append({"definition": definition, "ident": "add_page"})
    return made


@cells(NETWORK)
async def test_a_handler_tells_listening_clients_the_resources_changed(
    transport: str, mode: Mode
) -> None:
    heard: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceListChangedNotification):
            heard.append(message.method)

    async with connect(transport, mode, spec(), message_handler=on_message) as client:
        if mode == "legacy" and transport == "http-json":  # no channel: nothing promised
            capabilities = client.server_capabilities
            assert not capabilities.resources.list_changed and not capabilities.tools.list_changed
            assert not (await client.call_tool("add_page", {})).is_error
        elif mode == "legacy":
            assert client.server_capabilities.resources.list_changed
            assert client.server_capabilities.tools.list_changed
            await client.list_resources()
            await anyio.sleep(0.3)  # the session's standalone stream is open
            assert not (await client.call_tool("add_page", {})).is_error
            with anyio.fail_after(10):
                while not heard:
                    await anyio.sleep(0.05)
            assert heard == ["notifications/resources/list_changed"]
        else:
            async with client.listen(resources_list_changed=True) as changes:
                assert changes.honored.resources_list_changed
                assert not (await client.call_tool("add_page", {})).is_error
                with anyio.fail_after(10):
                    event = await changes.__aiter__().__anext__()
            assert event == ResourcesListChanged()
