"""Building the SDK server of a generated package from its spec and its handlers."""

from __future__ import annotations

import gc
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache, partial
from inspect import iscoroutinefunction
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar, cast

import mcp_types as types
from mcp.server import NotificationOptions, Server, ServerRequestContext
from mcp.server.models import InitializationOptions
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.subscriptions import SubscriptionBus
from mcp.shared.exceptions import MCPDeprecationWarning

from . import telemetry
from .authz import IdentityMiddleware, Policy, current_identity, principal
from .events import Events
from .paging import page
from .spec import scopes_of, unshare_defs
from .tools import ToolBinding, ToolCall, ToolTable

if TYPE_CHECKING:  # resources, prompts, completions, credentials: packages that use them
    from mcp.server.subscriptions import ListenHandler

    from .completions import CompleteCall
    from .prompts import PromptRender, PromptTable
    from .resources import ResourceRead, ResourceTable
    from .shared import SharedState

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
F = TypeVar("F", bound=Callable[..., Any])
# The capabilities whose events ``subscriptions/listen`` (2026-07-28) carries.
LISTENED = ("toolsListChanged", "resourcesListChanged", "promptsListChanged", "resourcesSubscribe")


def policy_of(spec: dict[str, Any]) -> Policy:
    """The policy of ``spec``: scoped when a tool, resource or prompt needs a scope."""
    hide = bool(spec.get("auth", {}).get("hideUnauthorized"))
    scopes = scopes_of(spec)
    if not any(needed for table in scopes.values() for needed in table.values()):
        return Policy(hide)
    from .scopes import ScopedPolicy  # (Any where the package does not carry it)

    scoped: Policy = ScopedPolicy(scopes, hide_unauthorized=hide)
    return scoped


@dataclass
class Handlers:
    """The user's code, by name, as the generated ``server.py`` wires it (decorators of
    each handler, or of a function that makes it on first use: ``lazy``)."""

    models: Callable[[], ModuleType] | None = None  # the package's models (fast path)
    tools: dict[str, ToolCall] = field(default_factory=dict)
    resources: dict[str, ResourceRead] = field(default_factory=dict)  # by resource name
    prompts: dict[str, PromptRender] = field(default_factory=dict)
    completions: dict[tuple[str, str, str], CompleteCall] = field(default_factory=dict)

    def tool(self, name: str) -> Callable[[F], F]:
        return partial(_register, self.tools, name)

    def resource(self, name: str) -> Callable[[F], F]:
        return partial(_register, self.resources, name)

    def prompt(self, name: str) -> Callable[[F], F]:
        return partial(_register, self.prompts, name)

    def completion(self, target: str, ref: str, argument: str) -> Callable[[F], F]:
        return partial(_register, self.completions, (target, ref, argument))


def _register(table: dict[Any, Any], key: Any, function: F) -> F:
    table[key] = function if iscoroutinefunction(function) else lazy(function)
    return function


def lazy(make: Callable[[], Any]) -> Callable[..., Any]:
    """The handler ``make`` (a function of no arguments) returns on the first call, then
    kept. The generated ``server.py`` imports each handler and its models there: the server
    starts without importing them, and one that fails to import fails only its own calls
    (and is tried again on the next)."""
    made = cache(make)
    return lambda *args: made()(*args)


class GeneratedServer(Server[Any]):
    """A low-level SDK server that advertises listChanged and keeps the tables it serves."""

    notification_options = NotificationOptions()
    tools: ToolTable
    resources: ResourceTable | None  # None: the manifest declares no resource nor prompt
    prompts: PromptTable | None  # None: the manifest declares no prompt
    events: Events
    listen: ListenHandler | None = None  # subscriptions/listen (2026-07-28), when offered
    tasks: Any = None  # ``runtime.tasks.Tasks`` when a tool runs as an MCP task
    readable: Any = None  # ``resources.ReadableSubscriptions`` when subscriptions are offered
    subscribable = True  # handshake-era resources/subscribe can be kept (not stateless HTTP)
    streamed = True  # a request's answer can carry notifications (not stateless JSON answers)

    def create_initialization_options(
        self, notification_options: NotificationOptions | None = None, *args: Any, **options: Any
    ) -> InitializationOptions:
        """What ``initialize`` answers (the handshake era only)."""
        given = notification_options or self.notification_options
        made = super().create_initialization_options(given, *args, **options)
        if made.capabilities.resources is not None and not self.subscribable:
            made.capabilities.resources.subscribe = False  # refused: ``resources.subscribed``
        if not self.streamed:  # no log message can reach the client (and setLevel is refused)
            made.capabilities.logging = None
        return made

    def stateless(self, streamed: bool) -> None:
        """Stateless HTTP: a handshake-era client is promised only what can reach it. No
        resource subscription (no later request to carry updates: refused); list changes and
        logging only when answers are SSE streams (what a handler announces or logs rides its
        own request's stream). A 2026-07-28 client listens (``subscriptions/listen``) as ever."""
        self.subscribable, self.streamed = False, streamed
        if not streamed:
            self.notification_options = NotificationOptions()


def _strict(models: Callable[[], ModuleType] | None, name: str | None) -> Any:
    """The model class, looked up on first use (the models import lazily) and kept."""
    if models is None or not name:
        return None
    return cache(lambda: getattr(models(), name))


def tool_bindings(spec: dict[str, Any], handlers: Handlers, upstream: Any) -> list[ToolBinding]:
    """One binding per tool: the user's handler, or the API's operation (or its override)."""
    bindings = []
    for entry in spec.get("tools", []):
        name = entry["definition"]["name"]
        call, make = handlers.tools.get(name), cast(Callable[..., ToolBinding], ToolBinding)
        if entry.get("http") is not None:  # (the package carries operation_binding.py)
            from .operation_binding import operation

            make, call = operation(spec, entry, call, upstream)
        if call is None:
            raise RuntimeError(f"no handler wired for tool {name!r}: rebuild the package")
        bindings.append(
            make(
                entry["definition"],
                call,
                handler_path=entry.get("handler", ""),
                timeout=entry.get("timeout"),
                strict_model=_strict(handlers.models, entry.get("model")),
                output_model=_strict(handlers.models, entry.get("outputModel")),
            )
        )
    return bindings


def build_server(
    spec: dict[str, Any],
    handlers: Handlers,
    *,
    network: bool = False,
    bus: SubscriptionBus | None = None,
    request_state: RequestStateSecurity | None = None,
    shared: SharedState | None = None,
) -> GeneratedServer:
    """The SDK server for ``spec``. ``network``: behind the HTTP apps (an unauthenticated
    request gets no scoped access). ``shared`` (``runtime.shared``): what replicas share
    (bus, events, ``ctx.store``, upstream tokens, tasks); without it, this process only.
    ``request_state`` seals 2026-07-28 ``requestState`` (a key of this process if None)."""
    unshare_defs(spec)  # a spec read without ``load_spec`` (tests, tools) is made whole too
    caps = spec.get("capabilities", {})
    policy = policy_of(spec)
    events = Events(bus)
    if shared is not None:  # events raised on another replica reach this one's connections
        from .sharing import ReplicaEvents

        events = ReplicaEvents(bus or shared.bus)
    from .shared_local import local_user_state  # ``ctx.store``: per user, shared or not

    registry: dict[str, Any] = {"store": local_user_state() if shared is None else shared.state}
    upstream = None  # an OpenAPI server's wrapped API: one HTTP client and token cache
    if spec.get("upstream"):
        from .upstream import Upstream

        cache = shared.cache("credentials") if shared is not None else None  # (replicas')
        upstream = Upstream(spec["upstream"], spec["server"]["package"], cache)
        registry["credentials"] = upstream.credentials  # what ``Context.credential`` reads
    tools = ToolTable(tool_bindings(spec, handlers, upstream), policy, hidden=hidden(spec["tools"]))
    resources = prompts = None
    # a resource table when something reads a resource (a prompt may embed one)
    if spec.get("resources") or spec.get("prompts") or caps.get("resourcesSubscribe"):
        from .resources import ResourceTable, resource_bindings

        resources = ResourceTable(resource_bindings(spec, handlers, upstream), policy)
        if spec.get("prompts"):
            from .prompts import prompt_table

            prompts = prompt_table(spec, handlers, resources, policy, hidden(spec["prompts"]))
    registry.update(tools=tools, prompts=prompts, resources=resources)
    for table in (tools, resources, prompts):
        if table is not None:
            table.events = events
            table.registry = registry
    mode = spec.get("mode", "tools")
    listed: Callable[[Any], list[str]] = tools.visible
    if mode != "tools":  # the declared tools and the mode's own
        from .metatools import install

        listed = install(mode, spec, tools)
    size = int(caps.get("pageSize", 100))

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        names = listed(current_identity())
        # Page first, then build the Tool objects: a big server only pays for one page.
        shown, cursor = page(
            names, params.cursor if params else None, size, lambda n: tools.by_name[n].size
        )
        return types.ListToolsResult(
            tools=[tools.by_name[n].tool for n in shown], next_cursor=cursor
        )

    options: dict[str, Any] = {}
    if spec.get("tools") or mode != "tools":
        options.update(
            on_list_tools=list_tools,
            on_call_tool=tools.call,
            get_tool_input_schema=tools.input_schema,
        )
    if resources is not None:
        from .resources import resource_handlers

        options.update(resource_handlers(spec, resources, events, size))
    if prompts is not None:
        from .prompts import list_prompts

        options.update(on_list_prompts=list_prompts(prompts, size), on_get_prompt=prompts.get)
    if caps.get("completions"):
        from .completions import completion_table

        completions = completion_table(spec, handlers, policy, prompts)
        completions.events, completions.registry = events, registry  # a handler's ``ctx``
        options.update(on_completion=completions.complete)
    if caps.get("logging", True):
        options.update(on_set_logging_level=events.set_level)
    listen: ListenHandler | None = None
    if any(caps.get(k) for k in LISTENED):  # (the package carries listen.py)
        from .listen import listen_handler

        listen, options["on_subscriptions_listen"] = listen_handler(events, resources)
    info = spec["server"]
    with warnings.catch_warnings():  # logging/setLevel is deprecated in 2026-07-28, still served
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        server = GeneratedServer(
            info["name"],
            version=info.get("version"),
            title=info.get("title"),
            description=info.get("description"),
            instructions=info.get("instructions"),
            website_url=info.get("websiteUrl"),
            **options,
        )
    server.notification_options = NotificationOptions(
        prompts_changed=bool(caps.get("promptsListChanged")),
        resources_changed=bool(caps.get("resourcesListChanged")),
        tools_changed=bool(caps.get("toolsListChanged")),
    )
    security = request_state or RequestStateSecurity.ephemeral()
    security.bind_principal = principal
    server.middleware.append(IdentityMiddleware(network))
    if resources is not None and caps.get("resourcesSubscribe"):
        from .resources import ReadableSubscriptions

        server.readable = ReadableSubscriptions(events, resources)
        server.middleware.append(server.readable)
    server.tools, server.resources = tools, resources
    server.prompts, server.events = prompts, events
    server.listen = listen
    if shared is not None:
        from .sharing import replicate

        replicate(server, shared, registry)
    server.middleware.append(RequestStateBoundary(security, default_audience=info["name"]))
    if any(entry.get("task") for entry in spec.get("tools", [])):  # MCP tasks (tasks.py)
        from .tasks import install_tasks

        install_tasks(server, spec, shared.cache("tasks") if shared is not None else None)
    telemetry.install(server)
    return server


def hidden(entries: list[dict[str, Any]]) -> list[str]:
    return [e["definition"]["name"] for e in entries if e.get("enabled") is False]


def settle() -> None:
    """Once built, before serving: what start-up loaded lives as long as the process, so it
    leaves the collector's generations (``gc.freeze``)."""
    gc.freeze()
