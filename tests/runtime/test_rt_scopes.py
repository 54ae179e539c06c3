"""Scopes, over every transport and in both protocol eras: a scoped tool, resource, resource
template or prompt is refused to a caller without its scope (-32003, from the one dispatch
point), served to a caller with it, and left out of discovery under hideUnauthorizedTools.
stdio and in-memory callers are the local user and may use everything."""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest
import rtkit
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from rtconnect import LOCAL, NETWORK, Mode, cells, connect

from mcpgen.runtime.context import Context
from mcpgen.runtime.errors import FORBIDDEN, Forbidden
from mcpgen.runtime.identity import Identity

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

READ = rtkit.READ
KINDS = ("tool", "resource", "template", "prompt")
SCOPED = {  # kind -> (what is used, how it shows in its list)
    "tool": ("read_notes", "read_notes"),
    "resource": ("fixture://secret", "fixture://secret"),
    "template": ("fixture://notes/7", "fixture://notes/{id}"),
    "prompt": ("confidential", "confidential"),
}
OPEN = {"tool": "echo", "resource": "fixture://public", "template": None, "prompt": "greet"}


async def use(client: Client, kind: str) -> str:
    """Use the scoped item of ``kind``; its text."""
    target = SCOPED[kind][0]
    if kind == "tool":
        result = await client.call_tool(target, {})
        assert not result.is_error, result
        return str(result.structured_content)
    if kind == "prompt":
        prompt = await client.get_prompt(target)
        content = prompt.messages[0].content
        assert isinstance(content, types.TextContent)
        return content.text
    read = await client.read_resource(target)
    first = read.contents[0]
    assert isinstance(first, types.TextResourceContents)
    return first.text


EXPECTED = {
    "tool": "{'notes': ['first', 'second']}",
    "resource": "the secret",
    "template": "note 7",
    "prompt": "classified",
}


async def listed(client: Client, kind: str) -> set[str]:
    if kind == "tool":
        return {t.name for t in (await client.list_tools()).tools}
    if kind == "prompt":
        return {p.name for p in (await client.list_prompts()).prompts}
    if kind == "resource":
        return {str(r.uri) for r in (await client.list_resources()).resources}
    templates = (await client.list_resource_templates()).resource_templates
    return {t.uri_template for t in templates}


async def refusal(client: Client, kind: str) -> MCPError:
    with pytest.raises(MCPError) as refused:
        await use(client, kind)
    return refused.value


@cells(NETWORK)
async def test_without_the_scope_everything_scoped_is_refused(transport: str, mode: Mode) -> None:
    headers = rtkit.bearer(rtkit.token([rtkit.WRITE]))
    async with connect(transport, mode, headers=headers) as client:
        for kind in KINDS:
            error = (await refusal(client, kind)).error
            assert error.code == FORBIDDEN, (kind, error)
            assert READ in error.message, (kind, error)
        assert (await client.call_tool("echo", {"text": "open"})).structured_content == {
            "text": "open"
        }


@cells(NETWORK)
async def test_with_the_scope_everything_scoped_is_served(transport: str, mode: Mode) -> None:
    headers = rtkit.bearer(rtkit.token([READ]))
    async with connect(transport, mode, headers=headers) as client:
        for kind in KINDS:
            assert await use(client, kind) == EXPECTED[kind], kind
            assert SCOPED[kind][1] in await listed(client, kind), kind
        with pytest.raises(MCPError) as other:  # one scope is not the other
            await client.call_tool("write_note", {"text": "x"})
        assert other.value.error.code == FORBIDDEN


@cells(NETWORK)
async def test_hide_unauthorized_leaves_scoped_items_out_of_discovery(
    transport: str, mode: Mode
) -> None:
    spec = rtkit.make_spec(hide=True)
    async with connect(transport, mode, spec, headers=rtkit.bearer(rtkit.token([]))) as client:
        for kind in KINDS:
            shown = await listed(client, kind)
            assert SCOPED[kind][1] not in shown, (kind, shown)
            if OPEN[kind]:
                assert OPEN[kind] in shown, (kind, shown)
            error = (await refusal(client, kind)).error  # named, as if it did not exist
            assert error.code != FORBIDDEN and rtkit.READ not in error.message, (kind, error)
            if kind == "tool":
                assert error.code == types.INVALID_PARAMS and "Unknown tool" in error.message
        assert "write_note" not in await listed(client, "tool")


@cells(NETWORK)
async def test_hide_unauthorized_shows_what_the_token_allows(transport: str, mode: Mode) -> None:
    spec = rtkit.make_spec(hide=True)
    async with connect(transport, mode, spec, headers=rtkit.bearer(rtkit.token([READ]))) as client:
        tools = await listed(client, "tool")
        assert "read_notes" in tools and "write_note" not in tools, tools
        assert await use(client, "template") == EXPECTED["template"]


@cells(LOCAL)
async def test_local_callers_may_use_everything(transport: str, mode: Mode) -> None:
    """stdio and in-memory callers are the user who started the server: no credential, and
    every scope (hideUnauthorizedTools hides nothing from them)."""
    async with connect(transport, mode, rtkit.make_spec(hide=True)) as client:
        for kind in KINDS:
            assert await use(client, kind) == EXPECTED[kind], kind
            assert SCOPED[kind][1] in await listed(client, kind), kind
        who = await client.call_tool("whoami", {})
        assert who.structured_content == {"subject": "local", "scopes": None}


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_network_server_reached_without_its_auth_gets_nothing_scoped(mode: Mode) -> None:
    """A server built for the HTTP apps (``network=True``) but reached around their auth
    middleware treats the caller as unverified: nothing scoped runs."""
    async with Client(rtkit.server(network=True), mode=mode) as client:
        for kind in KINDS:
            assert (await refusal(client, kind)).error.code == FORBIDDEN, kind
        who = await client.call_tool("whoami", {})
        assert who.structured_content == {"subject": "unverified", "scopes": []}


def _context(identity: Identity) -> Context:
    return Context(request=None, identity=identity)  # type: ignore[arg-type]


async def test_the_dispatch_point_checks_scopes_before_the_handler() -> None:
    """``ToolTable.dispatch`` (what tools/call, call_operation and execute all use) refuses
    before validating arguments or running anything; with the scope it runs the handler."""
    tools = rtkit.server().tools
    reader = Identity("reader", frozenset({READ}))
    with pytest.raises(Forbidden) as refused:
        await tools.dispatch("write_note", {"text": 5}, _context(reader))  # bad arguments too
    assert refused.value.missing == [rtkit.WRITE]
    result = await tools.dispatch("read_notes", {}, _context(reader))
    assert isinstance(result, types.CallToolResult) and not result.is_error
    assert result.structured_content == {"notes": ["first", "second"]}


async def test_the_http_answer_to_a_scoped_call_is_step_up_403() -> None:
    """Streamable HTTP answers a tools/call the token may not make with 403 and an
    ``insufficient_scope`` challenge naming the scope (MCP step-up authorization)."""
    from rtbridge import http_client, running

    body = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "read_notes"}}
    async with running(rtkit.app()) as app, http_client(app, rtkit.bearer(rtkit.token([]))) as http:
        response = await http.post("/mcp", json=body, headers=POST)
    assert response.status_code == 403
    challenge = response.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and f'scope="{READ}"' in challenge
    assert "resource_metadata=" in challenge
    answer: dict[str, Any] = response.json()
    assert answer["id"] == 3 and answer["error"]["code"] == FORBIDDEN
    assert answer["error"]["data"]["missingScopes"] == [READ]


POST = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}
