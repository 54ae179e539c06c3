"""What of the runtime a package carries (``mcpgen.vendoring``, issue 29 item 5): the modules
its features reach, found from the runtime's own imports, and nothing a feature it does not
use needs; the carried set imports on its own."""

from __future__ import annotations

import asyncio
import graphlib
import importlib
import itertools
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from mcpgen import vendoring

MODES = ("tools", "search", "code")


API_KEY = {"key": {"type": "apiKey", "in": "header", "name": "X-Key"}}


def fake(
    upstream: bool = False,
    mode: str = "tools",
    oauth: bool = False,
    redis: bool = False,
    schemes: dict[str, Any] = API_KEY,
    credentials: dict[str, Any] | None = None,
    transports: tuple[str, ...] = ("stdio", "http"),
    auth: str | None = None,
) -> Any:
    """What ``vendoring`` reads of a manifest."""
    wrapped = {"mode": mode, "securitySchemes": schemes, "credentials": credentials or {}}
    return SimpleNamespace(
        upstream=wrapped if upstream else None,
        mode=mode if upstream else "tools",
        shares_state=redis,
        prompts=(),
        resources=(),
        capabilities=SimpleNamespace(
            completions=False,
            resources_subscribe=False,
            tools_list_changed=False,
            resources_list_changed=False,
            prompts_list_changed=False,
        ),
        auth=SimpleNamespace(type=auth or ("oauth" if oauth else "none")),
        server=SimpleNamespace(package="pkg_mcp"),
        tools=(),
        transports=transports,
    )


PROMPT = SimpleNamespace(scopes=())  # what ``vendoring`` reads of a prompt


def resource(templated: bool) -> Any:
    """What ``vendoring`` reads of a resource."""
    return SimpleNamespace(is_template=templated, scopes=())


def tool(task: str | None = None, schema: Any = None, scopes: tuple[str, ...] = ()) -> Any:
    """What ``vendoring`` reads of a tool."""
    schema = schema or {"type": "object"}
    return SimpleNamespace(
        task=task, http=None, input_schema=schema, output_schema=None, scopes=scopes
    )


@pytest.mark.parametrize(
    "upstream, mode, oauth, redis", list(itertools.product((False, True), MODES, *[(0, 1)] * 2))
)
def test_every_combination_of_features_carries_what_it_imports(
    upstream: bool, mode: str, oauth: bool, redis: bool
) -> None:
    manifest = fake(upstream, mode, bool(oauth), bool(redis))
    found = vendoring.carried(manifest)  # raises if a module imports a left-out one eagerly
    for name in found:
        assert vendoring.imports(name)[1] <= found
    assert ("upstream" in found) == upstream
    assert ("metatools" in found) == (upstream and mode != "tools")
    assert ("codemode" in found) == (upstream and mode == "code")
    assert ("shared_redis" in found) == ("shared" in found) == ("sharing" in found) == bool(redis)
    assert ("introspection" in found) == bool(oauth)
    requirements = " ".join(vendoring.requirements(manifest))
    assert ("pydantic-monty" in requirements) == (upstream and mode == "code")
    assert ("redis>=" in requirements) == bool(redis)


def test_the_scoped_policy_only_when_something_needs_a_scope() -> None:
    plain = fake()
    plain.tools = (tool(),)
    assert "scopes" not in vendoring.carried(plain)
    scoped = fake()
    scoped.tools = (tool(scopes=("read",)),)
    assert "scopes" in vendoring.carried(scoped)


def test_tasks_only_when_a_tool_runs_as_one() -> None:
    plain = fake()
    assert not {"tasks", "tasks_client", "tasks_store", "upstream_poll"} & vendoring.carried(plain)
    tasked = fake()
    tasked.tools = (tool(task="optional"),)
    assert {"tasks", "tasks_client", "tasks_store", "tasks_wire"} <= vendoring.carried(tasked)


def test_prompts_and_completions_only_when_declared() -> None:
    plain = fake()
    assert not {"prompts", "completions"} & vendoring.carried(plain)
    assert not any(r.startswith("jinja2") for r in vendoring.requirements(plain))
    both = fake()
    both.prompts, both.capabilities.completions = (PROMPT,), True
    assert {"prompts", "completions", "resources"} <= vendoring.carried(both)
    assert any(r.startswith("jinja2") for r in vendoring.requirements(both))


def test_resources_only_when_something_reads_one() -> None:
    """A resource, a prompt (which may embed one) or resource subscriptions carry
    ``resources``; a tools-only package does not, and its server still builds."""
    assert "resources" not in vendoring.carried(fake())
    declared, prompted, subscribed = fake(), fake(), fake()
    declared.resources = (resource(False),)
    prompted.prompts = (PROMPT,)
    subscribed.capabilities.resources_subscribe = True
    for manifest in (declared, prompted, subscribed):
        assert "resources" in vendoring.carried(manifest)


def test_the_pattern_matcher_only_when_a_schema_names_a_pattern() -> None:
    """``patterns`` (linear-time ``pattern``) with a tool schema that has one, in a shared
    definition too, or with a wrapped API (whose schemas the server checks)."""
    plain = fake()
    plain.tools = (tool(schema={"type": "object", "properties": {"a": {"type": "string"}}}),)
    assert "patterns" not in vendoring.carried(plain) and "schemas" in vendoring.carried(plain)
    direct, shared = fake(), fake()
    direct.tools = (tool(schema={"properties": {"a": {"type": "string", "pattern": "^a"}}}),)
    shared.tools = (tool(schema={"properties": {"a": {"$ref": "#/$defs/A"}}}),)
    shared.shared_defs = {"A": {"type": "object", "patternProperties": {"^x": {}}}}
    for manifest in (direct, shared, fake(upstream=True)):
        assert "patterns" in vendoring.carried(manifest)


def test_the_linear_keywords_only_when_a_schema_has_one() -> None:
    """``bounded`` (linear-work ``uniqueItems``, ``anyOf``, ``oneOf``, ``unevaluated*``) with
    a tool schema that has one (an output schema, a shared definition too), with a pattern
    (``patterns``' validator extends it) or a wrapped API; not for a plain schema."""
    plain = fake()
    plain.tools = (tool(schema={"type": "object", "properties": {"a": {"type": "string"}}}),)
    assert "bounded" not in vendoring.carried(plain)
    direct, output, shared, pattern = fake(), fake(), fake(), fake()
    direct.tools = (tool(schema={"properties": {"a": {"type": "array", "uniqueItems": True}}}),)
    output.tools = (tool(),)
    output.tools[0].output_schema = {"oneOf": [{"type": "object"}, {"required": ["x"]}]}
    shared.tools = (tool(schema={"properties": {"a": {"$ref": "#/$defs/A"}}}),)
    shared.shared_defs = {"A": {"anyOf": [{"type": "string"}, {"type": "null"}]}}
    pattern.tools = (tool(schema={"properties": {"a": {"type": "string", "pattern": "^a"}}}),)
    for manifest in (direct, output, shared, pattern, fake(upstream=True)):
        assert "bounded" in vendoring.carried(manifest)


def test_the_format_checks_only_when_an_input_schema_names_a_checked_format() -> None:
    """``formats`` (and its rfc3339-validator) with a tool's input schema naming a checked
    format, in a shared definition too; not for a format that stays an annotation."""
    plain, direct, shared = fake(upstream=True), fake(), fake()
    plain.tools = (
        tool(schema={"properties": {"a": {"type": "string", "format": "uri-reference"}}}),
    )
    direct.tools = (tool(schema=DATED),)
    shared.tools = (tool(schema={"properties": {"a": {"$ref": "#/$defs/A"}}}),)
    shared.shared_defs = {"A": {"type": "string", "format": "uuid"}}
    assert "formats" not in vendoring.carried(plain)
    assert not any("rfc3339" in r for r in vendoring.requirements(plain))
    for manifest in (direct, shared):
        assert "formats" in vendoring.carried(manifest)
        assert "rfc3339-validator>=0.1.4,<0.2" in vendoring.requirements(manifest)


def test_uri_templates_only_with_a_templated_resource() -> None:
    fixed, templated = fake(), fake()
    fixed.resources = (resource(False),)
    templated.resources = (*fixed.resources, resource(True))
    assert "resources" in vendoring.carried(fixed) and "uri" not in vendoring.carried(fixed)
    assert "uri" in vendoring.carried(templated)


@pytest.mark.parametrize(
    "capability",
    ["tools_list_changed", "resources_list_changed", "prompts_list_changed", "resources_subscribe"],
)
def test_listen_streams_only_with_a_change_notification(capability: str) -> None:
    """subscriptions/listen (``listen.py``) is carried when some change can be heard of."""
    manifest = fake()
    assert "listen" not in vendoring.carried(manifest)
    setattr(manifest.capabilities, capability, True)
    assert "listen" in vendoring.carried(manifest)


def test_a_plain_package_carries_no_feature_it_does_not_use() -> None:
    found = vendoring.carried(fake())
    left = {"upstream", "credentials", "token_endpoint", "metatools", "search", "codemode"}
    assert not found & (left | {"search_words", "shared_redis", "auth_keys", "introspection"})
    assert vendoring.left_out(fake()) == sorted(
        {"credentials", "metatools", "upstream", "completions", "prompts"}
        | {
            "tasks",
            "auth",
            "auth_keys",
            "http_auth",
            "http_legacy",
            "listen",
            "operation_binding",
        }
        | {"shared", "sharing", "resources", "patterns", "formats", "scopes", "websocket"}
        | {"bounded"}
    )


HTTP_STACK = {"http_app", "http_guard", "h11guard", "serve"}
VERIFYING = {"auth", "http_auth"}  # checking credentials


@pytest.mark.parametrize(
    "transports",
    [("stdio",), ("http",), ("stdio", "http"), ("stdio", "sse"), ("stdio", "http", "websocket")],
)
@pytest.mark.parametrize("auth", ["none", "bearer", "oauth"])
def test_transports_and_auth_carry_only_what_is_offered(
    transports: tuple[str, ...], auth: str
) -> None:
    """``transports.offer`` decides the HTTP stack, legacy SSE and WebSocket; ``auth`` the
    credential checks (only behind a network transport)."""
    manifest = fake(transports=transports, auth=auth)
    found = vendoring.carried(manifest)
    for name in found:
        assert vendoring.imports(name)[1] <= found
    network = transports != ("stdio",)
    assert found & HTTP_STACK == (HTTP_STACK if network else set())
    assert ("websocket" in found) == ("websocket" in transports)
    legacy = bool({"sse", "websocket"} & set(transports))
    assert ("http_legacy" in found) == legacy
    assert ("client_legacy" in found) == legacy  # the typed client's .sse() and .websocket()
    assert found & VERIFYING == (VERIFYING if network and auth != "none" else set())
    assert ("testing_auth" in found) == (auth != "none")  # the generated tests' credentials
    assert ("testing_oauth" in found) == (auth == "oauth")
    requirements = " ".join(vendoring.requirements(manifest))
    assert ("websockets" in requirements) == ("websocket" in transports)
    assert ("uvicorn" in requirements) == network


def test_authorization_server_tokens_only_for_the_sources_that_fetch_them() -> None:
    oauth2 = {"o": {"type": "oauth2", "tokenUrl": "https://idp.example/token"}}
    exchange = {"key": {"from": "tokenExchange", "tokenUrl": "https://idp/t", "audience": "api"}}
    assert "upstream_tokens" not in vendoring.carried(fake(True))
    assert {"upstream_tokens", "token_endpoint"} <= vendoring.carried(fake(True, schemes=oauth2))
    exchanged = fake(
        True, schemes={"key": {"type": "http", "scheme": "bearer"}}, credentials=exchange
    )
    assert "upstream_tokens" in vendoring.carried(exchanged)


def test_the_files_carry_a_header_and_the_source(tmp_path: Path) -> None:
    files = vendoring.runtime_files(fake())
    text = files["src/pkg_mcp/_runtime/tools.py"]
    header, _, rest = text.partition("\n")
    assert header.startswith("# Generated by mcpgen ") and "mcpgen/runtime/tools.py" in header
    assert header.endswith("do not edit (regenerating overwrites it).")
    assert rest == (vendoring.RUNTIME_DIR / "tools.py").read_text("utf-8")
    assert "src/pkg_mcp/_runtime/modes.json" not in files
    assert "src/pkg_mcp/_runtime/modes.json" in vendoring.runtime_files(fake(True, "search"))


@pytest.mark.parametrize("upstream", [False, True], ids=["plain", "api-key"])
def test_the_carried_runtime_imports_on_its_own(tmp_path: Path, upstream: bool) -> None:
    """A plain package's runtime (or one wrapping an API with a key), alone: every module
    imports, credentials work without the token modules, and a Redis URL is refused with a
    message that says how to get the replicas' modules (not an ImportError)."""
    manifest = fake(upstream)
    try:
        _import_carried(manifest, tmp_path)
        if upstream:
            credentials = importlib.import_module("pkg_mcp._runtime.credentials")
            made = credentials.Credentials(API_KEY, env_prefix="X", environ={"X_KEY": "k"})
            asyncio.run(made.aclose())
        assert "shared" not in vendoring.carried(manifest)  # one process: sealing.py only
        if not upstream:
            asyncio.run(_serves_a_tool(importlib.import_module("pkg_mcp._runtime.server")))
        http_app = importlib.import_module("pkg_mcp._runtime.http_app")
        errors = importlib.import_module("pkg_mcp._runtime.errors")
        with pytest.raises(
            errors.ConfigError, match="built without Redis: the manifest plans no replicas"
        ):
            http_app.require_sharing()
    finally:
        _forget(tmp_path)


def _import_carried(manifest: Any, tmp_path: Path) -> None:
    """Write the runtime ``manifest`` carries under ``tmp_path/src/pkg_mcp`` and import every
    module of it with only that on the path (``_forget`` undoes it)."""
    for path, text in vendoring.runtime_files(manifest).items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, "utf-8")
    (tmp_path / "src/pkg_mcp/__init__.py").write_text("", "utf-8")
    sys.path.insert(0, str(tmp_path / "src"))
    for name in sorted(vendoring.carried(manifest)):
        if name != "testing":  # pytest's plugin module: imported by the tests only
            importlib.import_module(f"pkg_mcp._runtime.{name}")


def _forget(tmp_path: Path) -> None:
    sys.path.remove(str(tmp_path / "src"))
    for module in [m for m in sys.modules if m == "pkg_mcp" or m.startswith("pkg_mcp.")]:
        del sys.modules[module]


def _combo(features: str, **options: Any) -> Any:
    """A fake manifest with the features named in ``features`` (space separated)."""
    manifest = fake(**options)
    on = set(features.split())
    manifest.tools = (
        tool(
            task="optional" if "tasks" in on else None,
            schema=(
                PATTERNED
                if "pattern" in on
                else DATED if "format" in on else UNEXAMPLED if "unexampled" in on else None
            ),
            scopes=("read",) if "scopes" in on else (),
        ),
    )
    manifest.prompts = (PROMPT,) if "prompts" in on else ()
    templated = "template" in on
    manifest.resources = (resource(templated),) if templated else ()
    manifest.capabilities.completions = "completions" in on
    manifest.capabilities.tools_list_changed = "listen" in on
    if "poll" in on:
        manifest.tools[0].http = SimpleNamespace(poll=True)
    return manifest


PATTERNED = {"properties": {"a": {"type": "string", "pattern": "^a"}}}
DATED = {"properties": {"a": {"type": "string", "format": "date-time"}}}
UNEXAMPLED = {"type": "object", "properties": {"a": {"not": {}}}, "required": ["a"]}
OAUTH2 = {"o": {"type": "oauth2", "tokenUrl": "https://idp.example/token"}}
COMBOS = {  # between them, every ``vendoring.FEATURES`` key on in one and off in another
    "stdio-only": _combo("", transports=("stdio",)),
    "tasks-without-replicas": _combo("tasks", transports=("http",), auth="bearer"),
    "replicas-without-tasks": _combo("listen", redis=True),
    "tasks-and-replicas": _combo("tasks pattern", redis=True, auth="apiKey"),
    "sse-only": _combo("prompts", transports=("sse",)),
    "websocket-only": _combo("template completions listen", transports=("websocket",)),
    "oauth": _combo("scopes unexampled", oauth=True),
    "api-tools": _combo("poll format", upstream=True, schemes=OAUTH2),
    "api-search": _combo("", upstream=True, mode="search", transports=("stdio",)),
    "api-code": _combo("tasks", upstream=True, mode="code", redis=True),
}


def test_the_combinations_turn_every_feature_on_and_off() -> None:
    for name, uses in vendoring.FEATURES.items():
        assert {uses(m) for m in COMBOS.values()} == {True, False}, name


@pytest.mark.parametrize("combo", COMBOS, ids=str)
def test_every_carried_module_imports_and_its_lazy_parts_are_there(
    tmp_path: Path, combo: str
) -> None:
    """Every module a combination of features carries imports with only the carried runtime
    on the path, and what a carried module reaches only when it runs (a function's import,
    a data file) is carried too: the task store's cache, search and code mode's modes."""
    manifest = COMBOS[combo]
    found = vendoring.carried(manifest)
    try:
        _import_carried(manifest, tmp_path)
        if "tasks_store" in found:
            importlib.import_module("pkg_mcp._runtime.tasks_store").local_cache()
        if "metatools" in found:
            assert importlib.import_module("pkg_mcp._runtime.metatools")._modes()
    finally:
        _forget(tmp_path)


async def _serves_a_tool(server: Any) -> None:
    """A tools-only server built from the carried runtime alone (no ``resources``, no
    ``patterns``) lists and calls its tool, validating the arguments."""
    from mcp.client import Client

    schema = {"type": "object", "properties": {"n": {"$ref": "#/$defs/N"}}, "$defs": {"N": {}}}
    definition = {"name": "echo", "inputSchema": {**schema, "required": ["n"]}}
    server_info = {"name": "t", "version": "1"}
    spec = {"server": server_info, "tools": [{"definition": definition}], "capabilities": {}}
    handlers = server.Handlers()

    @handlers.tool("echo")
    async def echo(arguments: Any, ctx: Any) -> str:
        return str(arguments["n"])

    built = server.build_server(spec, handlers)
    assert built.resources is None and built.prompts is None
    async with Client(built, mode="legacy") as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["echo"]
        result = await client.call_tool("echo", {"n": 7})
        assert not result.is_error and result.content[0].text == "7"
        refused = await client.call_tool("echo", {})
        assert refused.is_error and "Invalid arguments" in refused.content[0].text


def test_the_calculator_carries_no_feature_it_lacks() -> None:
    """The calculator (tools only: no resource, prompt, pattern, task, auth or replicas)."""
    from mcpgen.pipeline import load_manifest

    root = Path(__file__).resolve().parent.parent / "manifests"
    calculator = load_manifest(root / "calculator.yaml").manifest
    found = vendoring.carried(calculator)
    unused = {"resources", "prompts", "completions", "uri", "patterns", "tasks_client"}
    assert not found & (unused | {"local_cache", "auth", "http_auth", "shared"})
    # nor the spans of an upstream API, the legacy transports' client, the replicas' events
    assert not found & {"telemetry_spans", "client_legacy", "sharing"}
    assert "telemetry_spans" in vendoring.carried(fake(True))
    assert not any(r.startswith("uritemplate") for r in vendoring.requirements(calculator))
    travel = load_manifest(root / "travel.yaml").manifest  # resources, prompts, templates
    assert {"resources", "prompts", "uri"} <= vendoring.carried(travel)


def test_the_runtime_imports_in_no_circle() -> None:
    """No runtime module imports one that imports it back, lazily or under TYPE_CHECKING
    too (what ``carried`` follows): a name both use lives in the lower one, or is passed in
    (``redirects.API``, ``telemetry_sdk.build``'s providers, ``shared_redis_link``)."""
    names = [path.stem for path in vendoring.RUNTIME_DIR.glob("*.py")]
    graph = {n: vendoring.imports(n)[0] - {n} for n in names}
    graphlib.TopologicalSorter(graph).prepare()  # CycleError names the circle
