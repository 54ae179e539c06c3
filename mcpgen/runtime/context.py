"""The context handed to handlers: who is calling, progress, logs, questions, notifications."""

from __future__ import annotations

import contextlib
import functools
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, cast

import anyio
import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.server.subscriptions import (
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ToolsListChanged,
)
from mcp.server.validation import validate_tool_use_result_messages
from mcp.shared.exceptions import MCPError, NoBackChannelError
from mcp.shared.message import ServerMessageMetadata
from mcp_types import INVALID_PARAMS
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, ValidationError

from .authz import current_identity
from .content import text
from .errors import ToolError
from .events import CallerUpdate
from .identity import Identity

if TYPE_CHECKING:
    from .credentials import Credential
    from .events import Event, Events
    from .sealing import BoundState, UserStateStore

logger = logging.getLogger("mcp_server")
ModelT = TypeVar("ModelT", bound=BaseModel)
AnswerT = TypeVar("AnswerT", bound=BaseModel)
Json = Any
InputRequest = types.InputRequest
InputResponse = types.CreateMessageResult | types.ListRootsResult | types.ElicitResult
ANSWER_TYPES: dict[str, Any] = {
    "elicitation/create": types.ElicitResult,
    "sampling/createMessage": types.CreateMessageResult,
    "roots/list": types.ListRootsResult,
}


class InputRequired(Exception):
    """Internal: the 2026-07-28 era asks the client for input by returning a result."""

    def __init__(self, requests: dict[str, InputRequest]) -> None:
        super().__init__(", ".join(requests))
        self.requests = requests


def elicitation(message: str, schema: dict[str, Json]) -> types.ElicitRequest:
    """An elicitation (form) request, for :meth:`Context.ask`."""
    params = types.ElicitRequestFormParams(message=message, requested_schema=schema)
    return types.ElicitRequest(params=params)


def sampling(
    prompt: str | Sequence[types.SamplingMessage],
    *,
    max_tokens: int = 1000,
    system_prompt: str | None = None,
    temperature: float | None = None,
) -> types.CreateMessageRequest:
    """A sampling request, for :meth:`Context.ask`."""
    if isinstance(prompt, str):
        prompt = [types.SamplingMessage(role="user", content=text(prompt))]
    params = types.CreateMessageRequestParams(
        messages=list(prompt),
        max_tokens=max_tokens,
        system_prompt=system_prompt,
        temperature=temperature,
    )
    return types.CreateMessageRequest(params=params)


def roots() -> types.ListRootsRequest:
    """A roots request, for :meth:`Context.ask`."""
    return types.ListRootsRequest()


@dataclass
class Context:
    """What a handler can do besides computing its result."""

    request: ServerRequestContext[Any, Any]
    params: Any = None
    events: Events | None = None
    registry: Mapping[str, Any] = field(default_factory=dict)
    identity: Identity = field(default_factory=current_identity)
    _asked: int = 0
    _answers: dict[str, Json] = field(default_factory=dict)
    _state: str | None = None
    _new_state: str | None = None
    task: Any = None  # running as an MCP task: progress goes to its status (runtime/tasks.py)

    def __post_init__(self) -> None:
        self._answers, self._state = previous_round(self.params)
        self._new_state = self._state  # what ``set_state`` keeps for the next round (sealed)

    @property
    def state(self) -> str | None:
        """State this handler saved with :meth:`set_state` in an earlier round (2026-07-28)."""
        return self._state

    def set_state(self, value: str | None) -> None:
        self._new_state = value

    @property
    def store(self) -> BoundState:
        """What this caller (its verified identity) keeps across calls: awaited ``get(name,
        default)``, ``set(name, value, ttl=None)`` (JSON; a day by default), ``delete(name)``;
        in Redis when replicas share state. Without authentication, one anonymous user."""
        from .sealing import BoundState

        store = self.registry.get("store") or _process_store()
        return BoundState(store, self.identity.key)

    @property
    def client_capabilities(self) -> types.ClientCapabilities | None:
        """What the client declared it can do (sampling, elicitation, roots...)."""
        return self.request.session.client_capabilities

    @property
    def modern(self) -> bool:
        """True on the stateless 2026-07-28 protocol, False in the handshake era."""
        return self.request.protocol_version in MODERN_PROTOCOL_VERSIONS

    @property
    def headers(self) -> Mapping[str, str]:
        """HTTP request headers (empty on stdio)."""
        request = self.request.request
        return cast(Mapping[str, str], getattr(request, "headers", None) or {})

    async def credential(self, scheme: str, *, scopes: Sequence[str] = ()) -> Credential:
        """The caller's credential for a security scheme of the wrapped API (docs/security.md);
        ``scopes``: what to ask for when the configuration names none."""
        credentials = self.registry.get("credentials")
        if credentials is None:
            raise ToolError("this server wraps no API: it has no upstream credentials")
        found: Credential = await credentials.for_scheme(
            scheme, self.identity, self.headers, scopes=scopes
        )
        return found

    async def forget_credential(self, scheme: str, *, scopes: Sequence[str] = ()) -> None:
        """Drop the caller's cached upstream token for ``scheme`` (the API answered 401)."""
        credentials = self.registry.get("credentials")
        if credentials is not None:
            await credentials.invalidate(scheme, self.identity, scopes=scopes)

    async def close_sse_stream(self) -> None:
        """Close this request's SSE stream; the client reconnects and resumes (HTTP only)."""
        if self.request.close_sse_stream is not None:
            await self.request.close_sse_stream()

    def enable_tool(self, name: str, enabled: bool = True) -> None:
        """Show or hide a tool in tools/list (follow with :meth:`notify_tools_changed`)."""
        self._switch("tools", name, enabled)

    def enable_prompt(self, name: str, enabled: bool = True) -> None:
        """Show or hide a prompt in prompts/list (follow with :meth:`notify_prompts_changed`)."""
        if self.registry.get("prompts") is None:  # the server declares no prompt
            raise KeyError(f"no prompt named {name!r}")
        self._switch("prompts", name, enabled)

    def _switch(self, kind: str, name: str, enabled: bool) -> None:
        switches = self.registry.get("switches")  # replicas: ``sharing.Switches``
        if switches is None:
            self.registry[kind].set_enabled(name, enabled)
        else:
            switches.set(kind, name, enabled)

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report progress (if the caller asked for it); also a task's ``statusMessage``."""
        if self.task is None:
            await self.request.session.report_progress(progress, total, message)
            return
        await self.task(progress, total, message)
        with contextlib.suppress(Exception):  # the request that started the task may be gone
            await self.request.session.report_progress(progress, total, message)

    async def log(
        self, level: types.LoggingLevel, data: Json, logger_name: str | None = None
    ) -> None:
        """Send a log message to the client (and to the server's own log)."""
        logger.log(logging.getLevelNamesMapping().get(level.upper(), logging.INFO), "%s", data)
        session = self.request.session
        if not self.modern and self.events and not self.events.level_enabled(session, level):
            return
        with contextlib.suppress(MCPError, anyio.ClosedResourceError, anyio.BrokenResourceError):
            await session.send_log_message(
                level, data, logger_name, related_request_id=self.request.request_id
            )

    async def elicit(
        self, message: str, schema: type[ModelT], *, key: str | None = None
    ) -> ModelT | None:
        """Ask the user to fill in ``schema``; None when they decline or cancel. On
        2026-07-28 the handler re-runs once the client answers: ask before side effects."""
        answer = await self.elicit_raw(message, requested_schema(schema), key=key)
        return None if answer.action != "accept" else schema.model_validate(answer.content or {})

    async def elicit_raw(
        self, message: str, requested: dict[str, Json], *, key: str | None = None
    ) -> types.ElicitResult:
        """Ask the user to fill in a form described by a flat JSON Schema; the raw answer."""
        return await self._ask_one(
            "elicit", elicitation(message, requested), key, types.ElicitResult
        )

    async def sample(
        self,
        prompt: str | Sequence[types.SamplingMessage],
        *,
        max_tokens: int = 1000,
        system_prompt: str | None = None,
        temperature: float | None = None,
        key: str | None = None,
    ) -> types.CreateMessageResult:
        """Ask the client's model for a completion (sampling), in both protocol eras."""
        request = sampling(
            prompt, max_tokens=max_tokens, system_prompt=system_prompt, temperature=temperature
        )
        return await self._ask_one("sample", request, key, types.CreateMessageResult)

    async def list_roots(self, *, key: str | None = None) -> list[types.Root]:
        """The client's roots (folders or files it shares), in both protocol eras."""
        return list((await self._ask_one("roots", roots(), key, types.ListRootsResult)).roots)

    async def ask(self, requests: Mapping[str, InputRequest]) -> dict[str, InputResponse]:
        """Ask the client several things at once (elicitation, sampling, roots), by key:
        one after the other over the back channel (handshake era), or all unanswered ones
        in one ``input_required`` result, the handler re-run with the answers (2026-07-28)."""
        if self.modern:  # (every answer given is checked, even when one is missing)
            given = {k: r for k, r in self._answers.items() if r is not None}
            answers = {
                k: checked_answer(r.method, k, given[k]) for k, r in requests.items() if k in given
            }
            if missing := {k: r for k, r in requests.items() if k not in answers}:
                raise InputRequired(missing)
            return answers
        answers = {}
        for key, request in requests.items():
            # a task asks on a tasks/result request (input_required meanwhile)
            via, request = (
                await self.task.channel(request) if self.task else (self.request, request)
            )
            if isinstance(request, types.CreateMessageRequest):
                validate_tool_use_result_messages(request.params.messages)
            # a question travels on its request; roots on the connection
            related = None if isinstance(request, types.ListRootsRequest) else via.request_id
            try:
                answers[key] = await via.session.send_request(
                    request,
                    ANSWER_TYPES[request.method],
                    metadata=ServerMessageMetadata(related_request_id=related),
                )
            except NoBackChannelError:
                raise CannotAsk(request.method, *_no_channel(via)) from None
            if self.task is not None:
                await self.task.asking(False)
        return answers

    async def _ask_one(
        self, kind: str, request: InputRequest, key: str | None, expected: type[AnswerT]
    ) -> AnswerT:
        if key is None:
            key = f"{kind}-{self._asked}"
            self._asked += 1
        answer = (await self.ask({key: request}))[key]
        assert isinstance(answer, expected)
        return answer

    async def notify_tools_changed(self) -> None:
        await self._publish(ToolsListChanged())

    async def notify_resources_changed(self) -> None:
        await self._publish(ResourcesListChanged())

    async def notify_prompts_changed(self) -> None:
        await self._publish(PromptsListChanged())

    async def notify_resource_updated(self, uri: str, *, caller_only: bool = False) -> None:
        """Subscribers of ``uri`` should read it again (``caller_only``: this caller's only)."""
        event = CallerUpdate(uri, self.identity.key) if caller_only else ResourceUpdated(uri)
        await self._publish(event)

    async def _publish(self, event: Event) -> None:
        if (switches := self.registry.get("switches")) is not None:
            await switches.flush()  # other replicas read them when they hear of the change
        if self.events is not None:
            await self.events.publish(event, self.request)


class CannotAsk(ToolError):
    """A handshake-era request with no back channel to carry the question ``method``."""

    def __init__(self, method: str, why: str, ways: str) -> None:
        super().__init__(
            f"this needs to ask the client ({method}), which this connection cannot carry "
            f"({why}); {ways} or the 2026-07-28 protocol"
        )
        self.method, self.why, self.ways = method, why, ways


def _no_channel(channel: Any) -> tuple[str, str]:
    """Why a request cannot carry a question to the client, and the way out."""
    headers = getattr(channel.request, "headers", None) or {}
    if "mcp-session-id" in headers:  # a stateful session: its POSTs are answered with JSON
        return (
            "a session whose requests are answered with JSON, not SSE streams",
            "serve SSE responses (--no-json-response), use stdio",
        )
    return "stateless HTTP in the handshake era", "use a stateful connection"


@functools.cache
def _process_store() -> UserStateStore:
    """One in-memory store for contexts made outside a server (tests, scripts)."""
    from .shared_local import local_user_state

    return local_user_state()


def requested_schema(schema: type[BaseModel]) -> dict[str, Json]:
    """An elicitation schema from a model: flat properties, enums and defaults kept."""
    requested = schema.model_json_schema()
    requested.pop("title", None)
    for prop in requested.get("properties", {}).values():
        prop.pop("title", None)
    return requested


def previous_round(params: Any) -> tuple[dict[str, Json], str | None]:
    """Answers gathered in earlier rounds (from the sealed request state) plus this round's."""
    raw_state = getattr(params, "request_state", None)
    try:
        loaded = json.loads(raw_state) if raw_state else {}  # (most calls have none)
    except ValueError:
        loaded = None
    if not isinstance(loaded, dict):
        loaded = {}
    answers: dict[str, Json] = dict(loaded.get("a") or {})
    for key, response in (getattr(params, "input_responses", None) or {}).items():
        if isinstance(response, BaseModel):
            response = response.model_dump(mode="json", by_alias=True, exclude_none=True)
        answers[key] = response
    return answers, loaded.get("s")


def checked_answer(method: str, key: str, raw: Json) -> InputResponse:
    try:
        answer: InputResponse = ANSWER_TYPES[method].model_validate(raw)
    except ValidationError:
        message = f"Invalid input response for {key!r}"
        raise MCPError(INVALID_PARAMS, message, data={"inputResponse": key}) from None
    return answer


def input_required(asked: InputRequired, context: Context) -> types.InputRequiredResult:
    state = json.dumps({"a": context._answers, "s": context._new_state}, sort_keys=True)
    return types.InputRequiredResult(input_requests=dict(asked.requests), request_state=state)
