"""Resources and resource templates: listing, matching a URI, reading (scopes checked),
subscribing. Carried by a package whose manifest declares a resource or a prompt (which
may embed one)."""

from __future__ import annotations

import base64
import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any
from urllib.parse import unquote

import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.server.subscriptions import ServerEvent, SubscriptionBus
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_REQUEST

from .authz import Policy, current_identity
from .content import ResourceReturn
from .context import Context, InputRequired, input_required
from .errors import Forbidden, ResourceNotFound, ToolError, echoed, not_found, redact_query
from .events import Events, connection_of, lives_one_request
from .paging import page
from .stubs import is_stub

logger = logging.getLogger("mcp_server")
ResourceRead = Callable[[dict[str, str], Context], Awaitable[ResourceReturn]]
DOT_SEGMENTS = frozenset({".", ".."})
SUBSCRIBED_CHARS = 64 * 1024  # characters of subscribed URIs one connection may hold
# a subscription nothing could ever be sent on is refused rather than accepted and dropped
NO_UPDATES = (
    "resources/subscribe needs a connection that carries notifications, and this one "
    "cannot (stateless HTTP in the handshake era): use a stateful session or "
    "subscriptions/listen (2026-07-28)"
)


@dataclass
class ResourceBinding:
    definition: dict[str, Any]
    read: ResourceRead | None = None
    content: dict[str, str] | None = None  # static: {"text": ...} or {"blob": base64}
    handler_path: str = ""
    names: list[str] = field(default_factory=list)
    raw: bool = False  # variables as written (an API's read decodes them itself)
    secret: frozenset[str] = frozenset()  # arguments the API marks secret (password, writeOnly)

    @property
    def key(self) -> str:
        """The URI (fixed resources) or URI template: what scopes are declared against."""
        return str(self.definition.get("uri") or self.definition.get("uriTemplate"))

    @property
    def is_template(self) -> bool:
        return "uriTemplate" in self.definition

    @cached_property
    def pattern(self) -> Any:
        if not self.is_template:
            return None
        from .uri import to_regex  # carried only by a package with a resource template

        return to_regex(self.definition["uriTemplate"])

    def match(self, uri: str) -> dict[str, str] | None:
        if not self.is_template:
            return {} if uri == self.definition.get("uri") else None
        from .uri import match, variables

        names = self.names or variables(self.key)
        found: dict[str, str] | None = match(self.pattern, names, uri, decode=not self.raw)
        if found is None or any(
            DOT_SEGMENTS & set(re.split(r"[/\\]", unquote(v))) for v in found.values()
        ):
            return None  # a "." or ".." segment (even from %2F) names no item: never passed on
        return found

    @cached_property
    def secret_names(self) -> set[str]:
        """The template's names of the variables the API marks secret (as ``match`` names them)."""
        from .uri import variables

        return {n for n in self.names or variables(self.key) if unquote(n) in self.secret}

    def cuts(self, uri: str) -> list[tuple[int, int]]:
        """Where the values of ``uri``'s secret variables are, if it matches (as read)."""
        from .uri import spans, variables

        found = spans(self.pattern, self.names or variables(self.key), uri) or {}
        return [span for name, span in found.items() if name in self.secret_names]


def contents(
    value: ResourceReturn, uri: str, mime_type: str | None
) -> list[types.TextResourceContents | types.BlobResourceContents]:
    if isinstance(value, str):
        return [types.TextResourceContents(uri=uri, mime_type=mime_type, text=value)]
    if isinstance(value, bytes):
        blob = base64.b64encode(value).decode("ascii")
        return [types.BlobResourceContents(uri=uri, mime_type=mime_type, blob=blob)]
    return list(value)


def static_value(content: dict[str, str]) -> ResourceReturn:
    """A static resource's content: ``{"text": ...}`` or ``{"blob": base64}``."""
    return content["text"] if "text" in content else base64.b64decode(content["blob"])


class ResourceTable:
    def __init__(self, bindings: Sequence[ResourceBinding], policy: Policy | None = None) -> None:
        self.fixed = [b for b in bindings if not b.is_template]
        self.templates = [b for b in bindings if b.is_template]
        self.secret = [b for b in self.templates if b.secret]
        self.policy = policy or Policy()
        self.events: Any = None
        self.registry: Any = {}

    def _visible(self, bindings: list[ResourceBinding], identity: Any) -> list[ResourceBinding]:
        return [b for b in bindings if self.policy.visible(identity, "resource", b.key)]

    def resources(self, identity: Any) -> list[types.Resource]:
        return [
            types.Resource.model_validate(b.definition) for b in self._visible(self.fixed, identity)
        ]

    def resource_templates(self, identity: Any) -> list[types.ResourceTemplate]:
        return [
            types.ResourceTemplate.model_validate(b.definition)
            for b in self._visible(self.templates, identity)
        ]

    def find(self, uri: str) -> tuple[ResourceBinding, dict[str, str]] | None:
        for binding in (*self.fixed, *self.templates):
            variables = binding.match(uri)
            if variables is not None:
                return binding, variables
        return None

    def shown(self, uri: str) -> str:
        """``uri`` as spans, logs and errors show it: the values of the variables the API
        marks secret REDACTED where a template that has one matches (where it, or any other
        such template, would read them), then credential-like query values."""
        from .uri import redacted

        return redact_query(redacted(uri, [cut for b in self.secret for cut in b.cuts(uri)]))

    def static(self, uri: str) -> tuple[ResourceBinding, dict[str, str]] | None:
        """A resource with static content (for prompts that embed one)."""
        found = self.find(uri)
        return found if found is not None and found[0].content is not None else None

    def listened(self, uris: Sequence[str]) -> None:
        """The resource subscriptions of a listen stream: held while it lasts (within the
        budget), each checked as a read would be."""
        within_budget(uris)
        for uri in uris:
            self.authorized(uri, current_identity())

    def authorized(self, uri: str, identity: Any) -> tuple[ResourceBinding, dict[str, str]]:
        """The resource ``uri`` names, when ``identity`` may read it: what every read and
        subscription passes (an MCPError otherwise: not found, or forbidden unless the
        policy hides what a caller may not use)."""
        found = self.find(uri)
        if found is None:
            raise not_found(self.shown(uri))
        try:
            self.policy.check(identity, "resource", found[0].key)
        except Forbidden as exc:
            if self.policy.hide_unauthorized:
                raise not_found(self.shown(uri)) from None
            raise exc.error() from None
        return found

    async def data(self, uri: str, context: Context) -> tuple[bytes, str | None]:
        """What reading ``uri`` gives, as bytes and a media type (scopes checked as for
        ``resources/read``): a tool's file argument may name one of this server's resources
        (``runtime/files.py``)."""
        binding, variables = self.authorized(uri, context.identity)
        mime_type = binding.definition.get("mimeType")
        if binding.content is not None:
            value: ResourceReturn = static_value(binding.content)
        else:
            assert binding.read is not None
            value = await binding.read(variables, context)
        found = contents(value, uri, mime_type)
        if not found:
            return b"", mime_type
        first = found[0]
        if isinstance(first, types.BlobResourceContents):
            return base64.b64decode(first.blob), first.mime_type or mime_type
        return first.text.encode(), first.mime_type or mime_type

    async def read(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult | types.InputRequiredResult:
        uri = str(params.uri)
        context = Context(ctx, params, events=self.events, registry=self.registry)
        binding, variables = self.authorized(uri, context.identity)
        mime_type = binding.definition.get("mimeType")
        if binding.content is not None:
            value: ResourceReturn = static_value(binding.content)
            return types.ReadResourceResult(contents=contents(value, uri, mime_type))
        assert binding.read is not None
        try:
            value = await binding.read(variables, context)
        except InputRequired as asked:
            return input_required(asked, context)
        except MCPError:
            raise
        except Exception as exc:
            raise failed(exc, self.shown(uri), binding.handler_path) from None
        return types.ReadResourceResult(contents=contents(value, uri, mime_type))


def failed(exc: Exception, uri: str, handler_path: str) -> MCPError:
    """The error of a read that raised ``exc`` (``uri`` as shown: ``ResourceTable.shown``)."""
    if isinstance(exc, ResourceNotFound):
        return not_found(uri, str(exc))
    if isinstance(exc, ToolError):
        return MCPError(INVALID_REQUEST, str(exc), data={"uri": echoed(uri)})
    if isinstance(exc, NotImplementedError) and is_stub(exc, handler_path):
        return MCPError(
            INTERNAL_ERROR,
            f"Resource {uri!r} is not implemented yet: write its handler in {handler_path}",
            data={"uri": uri},
        )
    logger.exception("reading resource %s failed", uri)
    return MCPError(INTERNAL_ERROR, f"Reading {uri!r} failed (see the server log)")


def resource_bindings(
    spec: dict[str, Any], handlers: Any, upstream: Any = None
) -> list[ResourceBinding]:
    """One binding per resource: the user's handler, its static content, or the wrapped
    API's operation. ``handlers``: the generated ``server.py``'s ``Handlers``."""
    bindings = []
    for entry in spec.get("resources", []):
        definition = entry["definition"]
        read = handlers.resources.get(definition["name"])
        if read is None and entry.get("http") is not None:
            from .operation_binding import resource_read
            from .upstream import Upstream

            if upstream is None:
                upstream = Upstream(spec["upstream"], spec["server"]["package"])
            read = resource_read(upstream, entry["http"], entry.get("input"))
        params = (entry.get("http") or {}).get("params", [])
        bindings.append(
            ResourceBinding(
                definition,
                read=read,
                content=entry.get("content"),
                handler_path=entry.get("handler", ""),
                names=list(entry.get("variables", [])),
                raw=read is not None and definition["name"] not in handlers.resources,
                secret=frozenset(p["argument"] for p in params if p.get("secret")),
            )
        )
    return bindings


def resource_handlers(
    spec: dict[str, Any], resources: ResourceTable, events: Events, size: int
) -> dict[str, Any]:
    """The SDK server's resource callbacks: lists (paged by ``size``) and reads when the
    spec declares resources, subscriptions when it offers them."""
    options: dict[str, Any] = {}

    async def list_resources(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        items, cursor = page(
            resources.resources(current_identity()), params.cursor if params else None, size
        )
        return types.ListResourcesResult(resources=items, next_cursor=cursor)

    async def list_templates(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        items, cursor = page(
            resources.resource_templates(current_identity()),
            params.cursor if params else None,
            size,
        )
        return types.ListResourceTemplatesResult(resource_templates=items, next_cursor=cursor)

    async def subscribe(
        ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        resources.authorized(str(params.uri), current_identity())  # as a read would
        return await subscribed(events, ctx, str(params.uri))

    async def unsubscribe(
        ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        return await subscribed(events, ctx, str(params.uri), False)

    if spec.get("resources"):
        options.update(
            on_list_resources=list_resources,
            on_list_resource_templates=list_templates,
            on_read_resource=resources.read,
        )
    if spec.get("capabilities", {}).get("resourcesSubscribe"):
        options.update(on_subscribe_resource=subscribe, on_unsubscribe_resource=unsubscribe)
    return options


class ReadableSubscriptions:
    """A connection's subscriptions are what its latest caller may read: a request (as SDK
    server middleware) or a GET stream (``stream_opened``, told by the HTTP layer) with a
    token of the same caller that may not read one (fewer scopes) ends that subscription;
    its updates went on to the connection."""

    def __init__(self, events: Events, resources: ResourceTable) -> None:
        self.events, self.resources = events, resources

    def keep_readable(self, connection: Any, identity: Any) -> None:
        uris = self.events.subscribed.get(connection)
        if uris:
            for uri in list(uris):
                try:
                    self.resources.authorized(uri, identity)
                except MCPError:
                    uris.discard(uri)

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
        if ctx.session is not None:
            self.keep_readable(connection_of(ctx.session), current_identity())
        return await call_next(ctx)

    def stream_opened(self, session_id: str, identity: Any) -> None:
        connection = self.events.sessions.get((session_id, identity.key))
        if connection is not None:
            self.keep_readable(connection, identity)


async def subscribed(
    events: Events, ctx: ServerRequestContext[Any, Any], uri: str, on: bool = True
) -> types.EmptyResult:
    """A handshake-era connection subscribes to ``uri`` (``on``) or unsubscribes: where
    ``Events`` sends its updates."""
    connection = connection_of(ctx.session)
    if on:
        if lives_one_request(connection):
            raise MCPError(types.INVALID_REQUEST, NO_UPDATES)
        uris = events.subscribed.setdefault(connection, set())
        within_budget(uris | {uri})
        uris.add(uri)
        events.callers[connection] = current_identity().key  # (its caller's updates)
        if getattr(connection, "session_id", None):  # (a GET stream names its session)
            events.sessions[connection.session_id, current_identity().key] = connection
    elif connection in events.subscribed:
        events.subscribed[connection].discard(uri)
    return types.EmptyResult()


class CallerBus:
    """The bus as ``subscriptions/listen`` streams see it: a stream, subscribed as its
    request's caller, does not hear of another caller's ``CallerUpdate``."""

    def __init__(self, bus: SubscriptionBus) -> None:
        self.bus = bus

    async def publish(self, event: ServerEvent) -> None:
        await self.bus.publish(event)

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        caller = current_identity().key
        return self.bus.subscribe(
            lambda event: None if getattr(event, "caller", caller) != caller else listener(event)
        )


def within_budget(uris: Sequence[str] | set[str]) -> None:
    """Subscribed URIs are kept while their connection or listen stream lasts: at most
    SUBSCRIBED_CHARS characters of them, not a request body's worth each time."""
    if sum(map(len, uris)) > SUBSCRIBED_CHARS:
        raise MCPError(
            types.INVALID_PARAMS,
            f"too many subscriptions: at most {SUBSCRIBED_CHARS} characters of URIs "
            "per connection or stream (unsubscribe from some first)",
        )
