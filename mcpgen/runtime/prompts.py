"""Prompts: declared messages rendered in a Jinja sandbox, or a handler's result."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST

from .authz import Policy, current_identity
from .content import PromptReturn, text
from .context import Context, InputRequired, input_required
from .errors import Forbidden, ToolError, echoed
from .paging import page
from .resources import ResourceTable
from .stubs import is_stub

logger = logging.getLogger("mcp_server")
PromptRender = Callable[[dict[str, str], Context], Awaitable[PromptReturn]]
Embedded = types.TextResourceContents | types.BlobResourceContents
_TEMPLATES: dict[str, Any] = {}
MAX_UNKNOWN = 10  # unknown argument names an error lists: a caller may send any number


@dataclass
class PromptBinding:
    definition: dict[str, Any]
    messages: list[dict[str, Any]] = field(default_factory=list)
    render: PromptRender | None = None
    handler_path: str = ""

    @property
    def name(self) -> str:
        return str(self.definition["name"])

    @cached_property
    def prompt(self) -> types.Prompt:
        return types.Prompt.model_validate(self.definition)

    def check_arguments(self, arguments: dict[str, str]) -> None:
        declared = self.definition.get("arguments", [])
        missing = [a["name"] for a in declared if a.get("required") and a["name"] not in arguments]
        if missing:
            raise MCPError(
                INVALID_PARAMS,
                f"Missing required argument(s) for prompt {self.name!r}: " + ", ".join(missing),
                data={"missing": missing},
            )
        unknown = sorted(set(arguments) - {a["name"] for a in declared})
        if unknown:
            shown = [echoed(name) for name in unknown[:MAX_UNKNOWN]]
            more = len(unknown) - MAX_UNKNOWN
            raise MCPError(
                INVALID_PARAMS,
                f"Unknown argument(s) for prompt {self.name!r}: "
                + ", ".join(shown)
                + (f", ... {more} more" if more > 0 else ""),
                data={"unknown": shown},
            )


def unknown_prompt(name: str) -> MCPError:
    """What prompts/get and completion/complete answer for a prompt the caller cannot see."""
    shown = echoed(name)
    return MCPError(INVALID_PARAMS, f"Unknown prompt: {shown}", data={"prompt": shown})


def embedded_uris(messages: Sequence[types.PromptMessage]) -> list[str]:
    """The URIs of the resources ``messages`` embed."""
    contents = [m.content for m in messages]
    return [str(c.resource.uri) for c in contents if isinstance(c, types.EmbeddedResource)]


def render_text(source: str, arguments: dict[str, str]) -> str:
    """A declared message's text with the arguments filled in (a sandboxed Jinja template:
    arguments are data, never code; a template error is the server's fault, a bound the
    arguments made it reach is named)."""
    from .templating import OverLimit, render, sandbox

    template = _TEMPLATES.get(source)
    if template is None:
        template = _TEMPLATES[source] = sandbox().from_string(source)
    try:
        return render(template, arguments)
    except OverLimit as exc:
        logger.error("prompt template failed: %s", exc)
        raise MCPError(INTERNAL_ERROR, f"The prompt's template went over a limit: {exc}") from None
    except Exception as exc:  # '{1}'.format(a): an IndexError
        # the sandbox refuses what it must (huge ranges or texts, unsafe attributes), or the
        # template fails: its fault, answered as an internal error with a standard code
        logger.error("prompt template failed: %s: %s", type(exc).__name__, exc)
        raise MCPError(
            INTERNAL_ERROR, "The prompt's template failed (see the server log)"
        ) from None


def no_static(uri: str) -> MCPError:
    """A prompt's resource URI (made from its arguments, maybe) that names no static
    resource, or one hidden from the caller: the two answer alike."""
    return MCPError(INVALID_PARAMS, f"Prompt resource {uri!r} has no static content")


def _embedded(message: dict[str, Any], uri: str, resources: ResourceTable) -> Embedded:
    mime = message.get("mimeType")
    if "text" in message:
        return types.TextResourceContents(uri=uri, mime_type=mime, text=message["text"])
    if "blob" in message:
        return types.BlobResourceContents(uri=uri, mime_type=mime, blob=message["blob"])
    found = resources.static(uri)
    if found is None or found[0].content is None:
        raise no_static(uri)
    static = found[0].content
    mime = mime or found[0].definition.get("mimeType")
    if "text" in static:
        return types.TextResourceContents(uri=uri, mime_type=mime, text=static["text"])
    return types.BlobResourceContents(uri=uri, mime_type=mime, blob=static["blob"])


def render_messages(
    messages: list[dict[str, Any]], arguments: dict[str, str], resources: ResourceTable
) -> list[types.PromptMessage]:
    rendered: list[types.PromptMessage] = []
    for message in messages:
        kind = message["kind"]
        content: (
            types.TextContent | types.ImageContent | types.AudioContent | types.EmbeddedResource
        )
        if kind == "text":
            content = text(render_text(message["text"], arguments))
        elif kind == "image":
            content = types.ImageContent(data=message["blob"], mime_type=message["mimeType"])
        elif kind == "audio":
            content = types.AudioContent(data=message["blob"], mime_type=message["mimeType"])
        else:
            uri = message["uri"]
            if "{" in uri:
                uri = render_text(uri, arguments)
            content = types.EmbeddedResource(resource=_embedded(message, uri, resources))
        rendered.append(types.PromptMessage(role=message["role"], content=content))
    return rendered


class PromptTable:
    def __init__(
        self,
        bindings: Sequence[PromptBinding],
        resources: ResourceTable,
        policy: Policy | None = None,
        hidden: Sequence[str] = (),
    ) -> None:
        self.by_name = {b.name: b for b in bindings}
        self.order = [b.name for b in bindings]
        self.resources = resources
        self.policy = policy or Policy()
        self.hidden = set(hidden)
        self.events: Any = None
        self.registry: Any = {}

    def set_enabled(self, name: str, enabled: bool) -> None:
        if name not in self.by_name:
            raise KeyError(f"no prompt named {name!r}")
        if enabled:
            self.hidden.discard(name)
        else:
            self.hidden.add(name)

    def prompts(self, identity: Any) -> list[types.Prompt]:
        return [self.by_name[name].prompt for name in self.order if self.visible(identity, name)]

    def visible(self, identity: Any, name: str) -> bool:
        """Whether prompts/list shows ``name`` to ``identity``; prompts/get and
        completion/complete take a prompt it does not show for an unknown one."""
        return (
            name in self.by_name
            and name not in self.hidden
            and self.policy.visible(identity, "prompt", name)
            and (not self.policy.hide_unauthorized or self._may_embed(identity, name))
        )

    def authorized(self, name: str, identity: Any) -> PromptBinding:
        """The prompt ``name`` when ``identity`` may get it (or complete its arguments): an
        MCPError otherwise, unknown as for a missing prompt, or forbidden."""
        if not self.visible(identity, name):
            raise unknown_prompt(name)
        try:
            self.policy.check(identity, "prompt", name)
        except Forbidden as exc:  # shown (the policy hides nothing), not allowed
            raise exc.error() from None
        binding = self.by_name[name]
        if self.policy.scoped and not self.policy.hide_unauthorized:  # (hidden: visible)
            self._check_embedded(identity, self._fixed_uris(name))  # before any argument
        return binding

    def _fixed_uris(self, name: str) -> list[str]:
        """The URIs the prompt's declared messages embed as written (templated URIs are
        checked once rendered, at get time)."""
        messages = self.by_name[name].messages
        uris = [m.get("uri", "") for m in messages if m.get("kind") == "resource"]
        return [uri for uri in uris if uri and "{" not in uri]

    def _may_embed(self, identity: Any, name: str) -> bool:
        """Whether ``identity`` may read every resource the prompt embeds by a fixed URI."""
        for uri in self._fixed_uris(name):
            found = self.resources.find(uri)
            if found is not None and not self.policy.allowed(identity, "resource", found[0].key):
                return False
        return True

    def _check_embedded(self, identity: Any, uris: Sequence[str]) -> None:
        """Refuse a prompt that embeds a resource the caller may not read, as reading it
        would be refused (a prompt must not serve a scoped resource's text)."""
        for uri in uris:
            found = self.resources.find(uri)
            if found is None:
                continue
            try:
                self.policy.check(identity, "resource", found[0].key)
            except Forbidden as exc:
                if self.policy.hide_unauthorized:  # (a fixed URI hid the prompt already)
                    raise no_static(uri) from None
                needs = " ".join(exc.missing)
                raise exc.error(
                    f"Forbidden: prompt embeds a resource that needs scope(s) {needs}"
                ) from None

    async def get(
        self, ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult | types.InputRequiredResult:
        context = Context(ctx, params, events=self.events, registry=self.registry)
        binding = self.authorized(params.name, context.identity)
        arguments = dict(params.arguments or {})
        binding.check_arguments(arguments)
        description = binding.definition.get("description")
        if binding.render is None:
            messages = render_messages(binding.messages, arguments, self.resources)
            self._check_embedded(context.identity, embedded_uris(messages))
            return types.GetPromptResult(description=description, messages=messages)
        try:
            value = await binding.render(arguments, context)
        except InputRequired as asked:
            return input_required(asked, context)
        except ToolError as exc:
            raise MCPError(INVALID_REQUEST, str(exc)) from None
        except MCPError:
            raise
        except NotImplementedError as exc:
            if not is_stub(exc, binding.handler_path):
                logger.exception("prompt %s failed", params.name)
                raise MCPError(
                    INTERNAL_ERROR, f"Prompt {params.name!r} failed (see the server log)"
                ) from None
            raise MCPError(
                INTERNAL_ERROR,
                f"Prompt {params.name!r} is not implemented yet: write its handler in "
                f"{binding.handler_path}",
            ) from None
        except Exception:
            logger.exception("prompt %s failed", params.name)
            raise MCPError(
                INTERNAL_ERROR, f"Prompt {params.name!r} failed (see the server log)"
            ) from None
        if isinstance(value, str):
            value = [types.PromptMessage(role="user", content=text(value))]
        if not isinstance(value, types.GetPromptResult):
            value = types.GetPromptResult(description=description, messages=list(value))
        self._check_embedded(context.identity, embedded_uris(value.messages))
        return value


def prompt_table(
    spec: dict[str, Any],
    handlers: Any,
    resources: ResourceTable,
    policy: Policy,
    hidden: Sequence[str] = (),
) -> PromptTable:
    """The spec's prompts bound to the generated ``server.py``'s handlers (``Handlers``)."""
    bindings = [
        PromptBinding(
            p["definition"],
            p.get("messages", []),
            render=handlers.prompts.get(p["definition"]["name"]),
            handler_path=p.get("handler", ""),
        )
        for p in spec["prompts"]
    ]
    return PromptTable(bindings, resources, policy, hidden=hidden)


def list_prompts(prompts: PromptTable, size: int) -> Any:
    """The SDK server's prompts/list callback (paged by ``size``)."""

    async def list_page(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        items, cursor = page(
            prompts.prompts(current_identity()), params.cursor if params else None, size
        )
        return types.ListPromptsResult(prompts=items, next_cursor=cursor)

    return list_page
