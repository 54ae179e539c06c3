"""What every generated typed client shares: connecting, calling, parsing, blocking use. The
generated ``client.py`` subclasses ``BaseClient`` (or one of its subclasses) with a typed
method per tool, prompt and resource, and ``BaseSyncClient`` with their blocking twins."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from functools import partial, wraps
from typing import Any, Concatenate, Generic, Literal, ParamSpec, Self, TypeVar, overload

import httpx2
import mcp_types as types
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp.client import Client
from mcp.client.session import ElicitationFnT, ListRootsFnT, LoggingFnT, SamplingFnT
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.dispatcher import ProgressFnT

from .content import ContentBlock, adapter

Mode = Literal["auto", "legacy", "2026-07-28"]
P = ParamSpec("P")
R = TypeVar("R")
ClientT = TypeVar("ClientT", bound="BaseClient")
ProgressCallback = ProgressFnT
Content = ContentBlock


class ToolCallError(Exception):
    """The server answered a tool call with a tool error (``isError``)."""

    def __init__(self, tool: str, message: str, result: types.CallToolResult) -> None:
        super().__init__(f"{tool}: {message}")
        self.tool, self.message, self.result = tool, message, result


@overload
def parse(model: type[R], data: Any) -> R: ...


@overload
def parse(model: object, data: Any) -> Any: ...


def parse(model: Any, data: Any) -> Any:
    """Structured content as the tool's output type: a model class, or a type alias (an
    output that is a plain mapping), whose value the caller annotates."""
    return adapter(model).validate_python(data)


def arguments(required: dict[str, Any], optional: dict[str, Any]) -> dict[str, Any]:
    """A tool's arguments as JSON: the required ones, and the optional ones given."""
    given = {**required, **{key: value for key, value in optional.items() if value is not None}}
    data: dict[str, Any] = adapter(Any).dump_python(
        given, mode="json", by_alias=True, exclude_unset=True
    )
    return data


def error_text(result: types.CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, types.TextContent))


class BaseClient:
    """Typed access to one server; subclasses add a method per tool, prompt and resource."""

    package = ""  # the server's package: what ``stdio()`` runs with ``python -m``
    extensions: tuple[Callable[[], Any], ...] = ()  # what ``connect`` declares (tasks_client)

    def __init__(self, client: Client) -> None:
        self.client = client

    @classmethod
    @asynccontextmanager
    async def connect(
        cls: type[ClientT],
        target: Any,
        *,
        mode: Mode = "auto",
        on_elicit: ElicitationFnT | None = None,
        on_sample: SamplingFnT | None = None,
        on_roots: ListRootsFnT | None = None,
        on_log: LoggingFnT | None = None,
        **options: Any,
    ) -> AsyncIterator[ClientT]:
        """Connect to any target ``mcp.client.Client`` accepts (URL, transport, server object).
        ``on_elicit``, ``on_sample`` and ``on_roots`` answer the server's questions, ``on_log``
        receives its log messages; other options go to ``Client``."""
        callbacks: dict[str, Any] = {
            "elicitation_callback": on_elicit,
            "sampling_callback": on_sample,
            "list_roots_callback": on_roots,
            "logging_callback": on_log,
        }
        options.update({k: v for k, v in callbacks.items() if v is not None})
        options.setdefault("extensions", [make() for make in cls.extensions])
        async with Client(target, mode=mode, **options) as client:
            yield cls(client)

    @classmethod
    def stdio(
        cls,
        command: str | None = None,
        args: Sequence[str] | None = None,
        env: Mapping[str, str] | None = None,
        *,
        mode: Mode = "auto",
        **options: Any,
    ) -> AbstractAsyncContextManager[Self]:
        """Spawn the server as a subprocess and talk to it over stdio."""
        parameters = StdioServerParameters(
            command=command or sys.executable,
            args=list(args) if args is not None else ["-m", cls.package],
            env=dict(env) if env is not None else None,
        )
        return cls.connect(parameters, mode=mode, **options)

    @classmethod
    @asynccontextmanager
    async def http(
        cls: type[ClientT],
        url: str,
        *,
        token: str | None = None,
        headers: Mapping[str, str] | None = None,
        mode: Mode = "auto",
        **options: Any,
    ) -> AsyncIterator[ClientT]:
        """Connect over streamable HTTP; ``token`` is sent as a bearer token."""
        all_headers = headers_with(token, headers)
        timeout = httpx2.Timeout(30.0, read=300.0)
        async with (
            httpx2.AsyncClient(headers=all_headers, timeout=timeout, follow_redirects=True) as http,
            cls.connect(
                streamable_http_client(url, http_client=http), mode=mode, **options
            ) as client,
        ):
            yield client

    async def call(
        self, name: str, arguments: dict[str, Any], progress: ProgressCallback | None = None
    ) -> types.CallToolResult:
        """Call a tool by name; a tool error raises ``ToolCallError``."""
        result = await self.call_result(name, arguments, progress)
        if result.is_error:
            raise ToolCallError(name, error_text(result), result)
        return result

    async def call_result(
        self, name: str, arguments: dict[str, Any], progress: ProgressCallback | None = None
    ) -> types.CallToolResult:  # a tool error too
        return await self.client.call_tool(name, arguments, progress_callback=progress)


def headers_with(token: str | None, headers: Mapping[str, str] | None) -> dict[str, str]:
    all_headers = dict(headers or {})
    if token is not None:
        all_headers["Authorization"] = f"Bearer {token}"
    return all_headers


def blocking(
    method: Callable[Concatenate[ClientT, P], Awaitable[R]],
) -> Callable[Concatenate[BaseSyncClient[Any], P], R]:
    """The blocking twin of a client method: same signature and docstring."""

    @wraps(method)
    def call(self: BaseSyncClient[Any], /, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.portal.call(partial(method, self.typed, *args, **kwargs))

    return call


class BaseSyncClient(Generic[ClientT]):
    """A blocking facade over a typed client, for scripts."""

    client_class: type[BaseClient] = BaseClient

    def __init__(self, portal: BlockingPortal, typed: ClientT) -> None:
        self.portal, self.typed = portal, typed

    @classmethod
    @contextmanager
    def _wrap(cls, opener: Callable[[], AbstractAsyncContextManager[Any]]) -> Iterator[Self]:
        with (
            start_blocking_portal() as portal,
            portal.wrap_async_context_manager(opener()) as typed,
        ):
            yield cls(portal, typed)

    @classmethod
    def stdio(cls, **options: Any) -> contextlib.AbstractContextManager[Self]:
        """Spawn the server over stdio (options as for the async client's ``stdio``)."""
        return cls._wrap(lambda: cls.client_class.stdio(**options))

    @classmethod
    def http(cls, url: str, **options: Any) -> contextlib.AbstractContextManager[Self]:
        """Connect over streamable HTTP (options as for the async client's ``http``)."""
        return cls._wrap(lambda: cls.client_class.http(url, **options))
