"""Completions and subscriptions pass the same scope check as reads and gets: a caller
without a resource template's scope cannot complete its variables, subscribe to one of its
URIs (handshake era) or listen for it (2026-07-28); a completion handler's failure is an
error that names no internals; a handler's ``ctx`` is its caller's. Every network transport,
both eras."""

from __future__ import annotations

from contextlib import AsyncExitStack
from types import SimpleNamespace
from typing import Any

import mcp_types as types
import pytest
import rtkit
from mcp.shared.exceptions import MCPError
from rtbridge import http_client, running
from rtconnect import NETWORK, Mode, cells, client_over, connect

from mcpgen.runtime import authz, listen
from mcpgen.runtime.context import Context
from mcpgen.runtime.errors import FORBIDDEN
from mcpgen.runtime.http_app import create_app
from mcpgen.runtime.listen import LISTENS_PER_CALLER

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

TEMPLATE = "fixture://notes/{id}"
NOTE = types.ResourceTemplateReference(type="ref/resource", uri=TEMPLATE)
GREET = types.PromptReference(type="ref/prompt", name="greet")
SECRET_IN_ERROR = "db password is hunter2"
ARG = {"name": "x", "value": ""}
INFO = {"name": "t", "version": "0"}


DRAFTS = "fixture://drafts/{title}"
DRAFT = types.ResourceTemplateReference(type="ref/resource", uri=DRAFTS)


@rtkit.HANDLERS.completion("resource", TEMPLATE, "id")
async def note_ids(prefix: str, context: dict[str, str], ctx: Context) -> list[str]:
    if prefix == "boom":
        raise RuntimeError(SECRET_IN_ERROR)
    return [i for i in ("7", "71", "8") if i.startswith(prefix)]


@rtkit.HANDLERS.completion("resource", DRAFTS, "title")
async def recent_titles(prefix: str, context: dict[str, str], ctx: Context) -> list[str]:
    """The titles this caller typed before (kept in its ``ctx.store``), then this one."""
    typed: list[str] = await ctx.store.get("typed", [])
    await ctx.store.set("typed", [*typed, prefix])
    return [t for t in typed if t.startswith(prefix)]


def spec(hide: bool = False) -> dict[str, Any]:
    made = rtkit.make_spec(hide=hide)
    made["capabilities"].update(completions=True, resourcesSubscribe=True)
    made["resources"].append(
        {"definition": {"uriTemplate": DRAFTS, "name": "drafts"}, "variables": ["title"]}
    )
    made["resources"][-1]["scopes"] = [rtkit.READ]
    made["completions"] = [
        {"target": "resource", "ref": TEMPLATE, "argument": "id", "handler": True},
        {"target": "prompt", "ref": "greet", "argument": "who", "values": ["Ada", "Alan"]},
        {"target": "resource", "ref": DRAFTS, "argument": "title", "handler": True},
    ]
    return made


def refused(error: MCPError) -> None:
    assert error.error.code == FORBIDDEN and rtkit.READ in error.error.message, error


@cells(NETWORK)
async def test_completing_a_scoped_template_needs_its_scope(transport: str, mode: Mode) -> None:
    made = spec()
    without = rtkit.bearer(rtkit.token([rtkit.WRITE]))
    async with connect(transport, mode, made, headers=without) as client:
        with pytest.raises(MCPError) as error:
            await client.complete(NOTE, {"name": "id", "value": "7"})
        refused(error.value)
        with pytest.raises(MCPError) as read:  # what reading a URI of the template answers
            await client.read_resource("fixture://notes/7")
        assert read.value.error == error.value.error, read.value
        open_prompt = await client.complete(GREET, {"name": "who", "value": "a"})
        assert open_prompt.completion.values == ["Ada", "Alan"]
    with_scope = rtkit.bearer(rtkit.token([rtkit.READ]))
    async with connect(transport, mode, made, headers=with_scope) as client:
        done = await client.complete(NOTE, {"name": "id", "value": "7"})
        assert done.completion.values == ["7", "71"]


@cells(NETWORK)
async def test_a_completion_handler_gets_its_callers_context(transport: str, mode: Mode) -> None:
    """Alice and Bob complete the same template on one server: each handler call sees its
    own caller's ``ctx.store``, never the other's. A caller without the template's scope is
    refused before the handler runs (what it typed is not kept)."""
    made = spec()
    alice = rtkit.bearer(rtkit.token([rtkit.READ], subject="alice"))
    bob = rtkit.bearer(rtkit.token([rtkit.READ], subject="bob"))
    carol = rtkit.bearer(rtkit.token([rtkit.WRITE], subject="carol"))
    carol_reading = rtkit.bearer(rtkit.token([rtkit.READ], subject="carol"))

    async def complete(client: Any, value: str) -> list[str]:
        return (await client.complete(DRAFT, {"name": "title", "value": value})).completion.values

    async with (
        running(rtkit.app(made, transport)) as app,
        client_over(app, transport, mode, alice) as as_alice,
        client_over(app, transport, mode, bob) as as_bob,
        client_over(app, transport, mode, carol) as as_carol,
        client_over(app, transport, mode, carol_reading) as as_carol_reading,
    ):
        for value in ("alpha", "also"):
            assert await complete(as_alice, value) == []
        assert await complete(as_bob, "beta") == []
        with pytest.raises(MCPError) as error:
            await complete(as_carol, "carol's")
        refused(error.value)
        assert await complete(as_alice, "al") == ["alpha", "also"]
        assert await complete(as_bob, "") == ["beta"]
        assert await complete(as_carol_reading, "") == []


def unknown(error: MCPError, what: str) -> None:
    assert error.error.code == types.INVALID_PARAMS, error
    assert error.error.message == f"Unknown {what}", error


@cells(NETWORK)
async def test_hidden_templates_are_as_unknown_as_missing_ones(transport: str, mode: Mode) -> None:
    without = rtkit.bearer(rtkit.token([rtkit.WRITE]))
    async with connect(transport, mode, spec(hide=True), headers=without) as client:
        with pytest.raises(MCPError) as error:
            await client.complete(NOTE, {"name": "id", "value": "7"})
        unknown(error.value, f"resource template: {TEMPLATE}")


@cells(NETWORK)
async def test_completing_an_unknown_prompt_or_template_is_invalid_params(
    transport: str, mode: Mode
) -> None:
    """As prompts/get answers (the spec's "Invalid prompt name: -32602"), not an empty list
    that hides a misspelt name."""
    missing = types.ResourceTemplateReference(type="ref/resource", uri="fixture://nope/{id}")
    async with connect(transport, mode, spec()) as client:
        with pytest.raises(MCPError) as error:
            await client.complete(types.PromptReference(type="ref/prompt", name="nope"), ARG)
        unknown(error.value, "prompt: nope")
        with pytest.raises(MCPError) as error:
            await client.complete(missing, ARG)
        unknown(error.value, "resource template: fixture://nope/{id}")
        known = await client.complete(GREET, {"name": "nobody", "value": ""})
        assert known.completion.values == []  # a known prompt, an argument without values


RETIRED = types.PromptReference(type="ref/prompt", name="retired")
CONFIDENTIAL = types.PromptReference(type="ref/prompt", name="confidential")


async def refusals(client: Any, name: str) -> tuple[Any, Any]:
    """The errors prompts/get and completion/complete answer for prompt ``name``."""
    ref = types.PromptReference(type="ref/prompt", name=name)
    answers = []
    for ask in (client.get_prompt(name, {"who": "x"}), client.complete(ref, ARG)):
        with pytest.raises(MCPError) as error:
            await ask
        answers.append(error.value.error.model_dump())
    return answers[0], answers[1]


@cells(NETWORK)
@pytest.mark.parametrize("hide", [False, True], ids=["shown", "hidden"])
async def test_a_prompt_the_caller_cannot_get_cannot_be_completed(
    transport: str, mode: Mode, hide: bool
) -> None:
    """Disabled (``enabled: false``), out of the caller's scopes, or open but embedding a
    resource the caller may not read: completion/complete answers what prompts/get answers
    (unknown, or forbidden when the policy hides nothing)."""
    made = spec(hide=hide)
    made["prompts"] += [
        {
            "definition": {"name": "retired", "arguments": [{"name": "who"}]},
            "messages": [{"role": "user", "kind": "text", "text": "gone"}],
            "enabled": False,
        },
        {
            "definition": {"name": "leaky", "arguments": [{"name": "who"}]},
            "messages": [{"role": "user", "kind": "resource", "uri": "fixture://secret"}],
        },
    ]
    made["completions"] += [
        {"target": "prompt", "ref": "retired", "argument": "who", "values": ["Ada"]},
        {"target": "prompt", "ref": "confidential", "argument": "x", "values": ["y"]},
        {"target": "prompt", "ref": "leaky", "argument": "who", "values": ["Ada"]},
    ]
    without = rtkit.bearer(rtkit.token([rtkit.WRITE]))
    async with connect(transport, mode, made, headers=without) as client:
        got, completed = await refusals(client, "retired")
        assert got == completed and got["message"] == "Unknown prompt: retired", completed
        for name in ("confidential", "leaky"):
            got, completed = await refusals(client, name)
            assert got == completed, completed
            assert got["code"] == (types.INVALID_PARAMS if hide else FORBIDDEN), got


@cells(NETWORK)
async def test_a_failing_completion_handler_leaks_nothing(transport: str, mode: Mode) -> None:
    async with connect(transport, mode, spec()) as client:
        with pytest.raises(MCPError) as error:
            await client.complete(NOTE, {"name": "id", "value": "boom"})
    assert error.value.error.code == types.INTERNAL_ERROR
    assert SECRET_IN_ERROR not in str(error.value), error.value


STATELESS = ("http-stateless", "http-json")


@cells(NETWORK, where=lambda transport, mode: mode == "legacy" and transport not in STATELESS)
async def test_subscribing_to_a_scoped_resource_needs_its_scope(transport: str, mode: Mode) -> None:
    made = spec()
    without = rtkit.bearer(rtkit.token([rtkit.WRITE]))
    async with connect(transport, mode, made, headers=without) as client:
        assert client.server_capabilities.resources.subscribe
        for uri in ("fixture://secret", "fixture://notes/7"):
            with pytest.raises(MCPError) as error:
                await client.subscribe_resource(uri)
            refused(error.value)
        await client.subscribe_resource("fixture://public")  # open: allowed
    async with connect(transport, mode, made, headers=rtkit.credentials(made)) as client:
        await client.subscribe_resource("fixture://secret")


@cells(STATELESS, where=lambda transport, mode: mode == "legacy")
async def test_stateless_http_refuses_a_subscription_it_could_never_serve(
    transport: str, mode: Mode
) -> None:
    """Stateless HTTP in the handshake era has no channel to send resource updates on: a
    subscription is refused with a message that names the ways out, not accepted and its
    updates dropped. The scope check still comes first."""
    made = spec()
    without = rtkit.bearer(rtkit.token([rtkit.WRITE]))
    async with connect(transport, mode, made, headers=without) as client:
        assert not client.server_capabilities.resources.subscribe  # not promised either
        with pytest.raises(MCPError) as error:
            await client.subscribe_resource("fixture://secret")
        refused(error.value)
        with pytest.raises(MCPError) as error:
            await client.subscribe_resource("fixture://public")
    assert error.value.error.code == types.INVALID_REQUEST, error.value
    assert "subscriptions/listen" in error.value.error.message, error.value


@cells(NETWORK, where=lambda transport, mode: mode == "legacy")
async def test_a_log_level_is_refused_where_it_would_apply_to_nothing(
    transport: str, mode: Mode
) -> None:
    """Stateless HTTP in the handshake era makes a connection a request: logging/setLevel
    would be answered {} and forgotten, so it is refused, naming the ways out; where the
    connection outlasts its requests it is accepted (filtering: tests/security)."""
    async with connect(transport, mode, spec(), headers=rtkit.credentials(spec())) as client:
        if transport not in STATELESS:
            await client.set_logging_level("error")
            return
        with pytest.raises(MCPError) as error:
            await client.set_logging_level("error")
    assert error.value.error.code == types.INVALID_REQUEST, error.value
    assert "io.modelcontextprotocol/logLevel" in error.value.error.message, error.value


@cells(NETWORK, where=lambda transport, mode: mode == "legacy" and transport in ("http", "sse"))
async def test_one_connection_cannot_subscribe_without_end(transport: str, mode: Mode) -> None:
    """Every subscribed URI is kept while the connection lasts: a client that subscribes to
    URI after long URI (any note id matches the template) is refused past a budget, rather
    than growing the server's memory by a request body each time."""
    made = spec()
    async with connect(transport, mode, made, headers=rtkit.credentials(made)) as client:
        for n in range(20):
            await client.subscribe_resource(f"fixture://notes/{n}{'7' * 3000}")
        await client.subscribe_resource(f"fixture://notes/0{'7' * 3000}")  # again: no cost
        with pytest.raises(MCPError) as error:
            for n in range(20, 40):
                await client.subscribe_resource(f"fixture://notes/{n}{'7' * 3000}")
        assert error.value.error.code == types.INVALID_PARAMS, error.value
        assert "subscriptions" in error.value.error.message, error.value
        await client.unsubscribe_resource(f"fixture://notes/1{'7' * 3000}")
        await client.subscribe_resource("fixture://secret")  # room again


@cells(NETWORK, where=lambda transport, mode: mode == "2026-07-28" and transport != "sse")
async def test_listening_for_a_scoped_resource_needs_its_scope(transport: str, mode: Mode) -> None:
    made = spec()
    without = rtkit.bearer(rtkit.token([rtkit.WRITE]))
    async with connect(transport, mode, made, headers=without) as client:
        with pytest.raises(MCPError) as error:
            async with client.listen(resource_subscriptions=["fixture://secret"]):
                pass
        refused(error.value)
        many = [f"fixture://notes/{n}{'7' * 3000}" for n in range(30)]
        with pytest.raises(MCPError) as error:
            async with client.listen(resource_subscriptions=many):
                pass
        assert "too many subscriptions" in error.value.error.message, error.value
        async with client.listen(resource_subscriptions=["fixture://public"]) as sub:
            assert "fixture://public" in (sub.honored.resource_subscriptions or [])


@cells(NETWORK, where=lambda transport, mode: mode == "2026-07-28" and transport != "sse")
async def test_one_caller_cannot_take_every_listen_stream(transport: str, mode: Mode) -> None:
    """The SDK caps listen streams in all (1024), not per caller: one caller could hold
    every one of them and lock the others out. Past its own cap a caller is refused; others
    still listen, and an ended stream frees its slot."""
    made = spec()
    mallory = rtkit.bearer(rtkit.token([rtkit.READ], subject="mallory"))
    alice = rtkit.bearer(rtkit.token([rtkit.READ], subject="alice"))
    async with (
        running(rtkit.app(made, transport)) as app,
        client_over(app, transport, mode, mallory) as hog,
        client_over(app, transport, mode, alice) as other,
        AsyncExitStack() as held,
    ):
        for _ in range(LISTENS_PER_CALLER - 1):
            await held.enter_async_context(hog.listen(resources_list_changed=True))
        async with hog.listen(resources_list_changed=True):  # the last one of its own
            with pytest.raises(MCPError) as error:
                async with hog.listen(resources_list_changed=True):
                    pass
            assert error.value.error.code == types.INVALID_REQUEST, error.value
            assert "too many listen streams" in error.value.error.message, error.value
            async with other.listen(resources_list_changed=True) as sub:
                assert sub.honored.resources_list_changed
        async with hog.listen(resources_list_changed=True):  # its slot is free again
            pass


async def test_anonymous_callers_are_counted_by_their_address() -> None:
    """Without a verified identity every caller is the same anonymous one: its listen
    streams count against its client address (an IPv6 /64), as the rate limit keys it."""
    hosts = ("10.0.0.1", "10.0.0.2", "2001:db8::1", "2001:db8::2", "::ffff:10.0.0.1")
    keys = []
    for identity in (authz.ANONYMOUS, authz.UNVERIFIED):
        token = authz._CURRENT.set(identity)
        try:
            for host in hosts:
                request = SimpleNamespace(scope={"type": "http", "client": (host, 1)})
                keys.append(listen.caller_key(SimpleNamespace(request=request)))  # type: ignore[arg-type]
        finally:
            authz._CURRENT.reset(token)
    by_address = ["ip:10.0.0.1", "ip:10.0.0.2", "ip:2001:db8::/64", "ip:2001:db8::/64"]
    assert keys == [*by_address, "ip:10.0.0.1"] * 2, keys
    token = authz._CURRENT.set(alice := authz.Identity("alice"))
    try:  # a verified caller is its identity, wherever it calls from
        assert listen.caller_key(SimpleNamespace(request=request)) == alice.key  # type: ignore[arg-type]
    finally:
        authz._CURRENT.reset(token)


@pytest.mark.parametrize("by", ["request", "stream", "another caller"])
async def test_a_narrower_token_ends_the_subscriptions_it_may_not_read(by: str) -> None:
    """A session subscribed to ``fixture://secret`` under a ``notes.read`` token, then used
    by the same caller with a token without that scope, for a request or to open the
    session's GET stream: that subscription ends (every later ``resources/updated`` for it
    went to the stream, the narrower token's too), the open one stays. Another caller's
    GET with the session's id is refused and ends nothing."""
    made = spec()
    servers: list[Any] = []

    def factory(**options: Any) -> Any:
        servers.append(rtkit.factory(made)(**options))
        return servers[-1]

    app = create_app(made, factory, rtkit.settings(made), rtkit.environ(made))
    wide = rtkit.bearer(rtkit.token([rtkit.READ]))
    other = {"subject": "bob"} if by == "another caller" else {}  # (else the same subject)
    narrow = rtkit.bearer(rtkit.token([rtkit.WRITE], **other))
    accept = {"Accept": "application/json, text/event-stream"}
    async with running(app), http_client(app, accept) as http:

        async def post(headers: dict[str, str], method: str, params: Any = None) -> Any:
            body = {"jsonrpc": "2.0", "method": method, "params": params or {}}
            if not method.startswith("notifications/"):
                body["id"] = 1
            answer = await http.post("/mcp", json=body, headers={**session, **headers})
            assert answer.status_code < 300, answer.text
            return answer

        session: dict[str, str] = {}
        hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": INFO}
        first = await post(wide, "initialize", hello)
        session = {"mcp-session-id": first.headers["mcp-session-id"]}
        session["mcp-protocol-version"] = "2025-11-25"
        await post(wide, "notifications/initialized")
        for uri in ("fixture://secret", "fixture://public"):
            await post(wide, "resources/subscribe", {"uri": uri})
        events = next(s for s in servers if s.events.subscribed).events
        assert events._subscribers("fixture://secret")
        if by == "request":
            await post(narrow, "ping")
        else:
            stream = {**session, **narrow, "Accept": "text/event-stream"}
            async with http.stream("GET", "/mcp", headers=stream) as answer:
                assert answer.status_code == (404 if by == "another caller" else 200)
        assert bool(events._subscribers("fixture://secret")) == (by == "another caller")
        assert events._subscribers("fixture://public")
