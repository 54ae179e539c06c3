"""Calls to the HTTP API a server wraps: one pooled client, retries, credentials, redirects.

Credentials never leave for another origin: redirects are followed by hand, and one to a
different origin (scheme, host, port) is followed without any credential, and not at all
into the server's own networks (``redirects``). Cookies an answer sets are not kept: every
caller's later calls would carry them. URLs shown to clients or written in errors have
credential query values redacted. The MCP client's own token is never forwarded upstream."""

from __future__ import annotations

import os
import random
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Any
from urllib.parse import quote, quote_plus, urljoin, urlsplit

import anyio
import httpx2
import mcp_types as types

from . import answers, files, redirects, wire, wire_body, wire_request
from .context import Context
from .credentials import CacheBackend, Credentials
from .errors import REDACTED, ToolError
from .wire_request import Request

Json = Any
IDEMPOTENT = {"GET", "HEAD", "PUT", "DELETE", "OPTIONS"}
RETRY_STATUS = {429, 502, 503, 504}


class Upstream:
    """The wrapped API: base URL, credentials and the shared HTTP client."""

    def __init__(
        self, settings: dict[str, Json], package: str, cache: CacheBackend | None = None
    ) -> None:
        self.settings = settings
        self.package = package
        self.prefix = settings["envPrefix"]
        self.timeout = float(os.environ.get(f"{self.prefix}_TIMEOUT", "30"))
        self._client: httpx2.AsyncClient | None = None
        self.credentials = Credentials(
            settings.get("securitySchemes", {}),
            settings.get("credentials"),
            env_prefix=self.prefix,
            env_names=settings.get("credentialEnv"),
            base_url=lambda: self.base_url,
            error=ToolError,
            http=self.client,
            server_auth_header=settings.get("serverAuthHeader"),
            cache=cache,
        )

    @property
    def retries(self) -> int:
        """Retries of an idempotent call; read at each call, like the base URL."""
        return int(os.environ.get(f"{self.prefix}_RETRIES", "2"))

    @property
    def max_response(self) -> int:
        """The most bytes of an answer this server reads (a tool error past it)."""
        value = os.environ.get(f"{self.prefix}_MAX_RESPONSE_BYTES", "")
        return int(value) if value.isdigit() else answers.MAX_RESPONSE_BYTES

    @property
    def max_file(self) -> int:
        """The most bytes of one file argument (a tool error past it)."""
        value = os.environ.get(f"{self.prefix}_MAX_FILE_BYTES", "")
        return int(value) if value.isdigit() else wire_body.MAX_FILE_BYTES

    @property
    def base_url(self) -> str:
        url: str = os.environ.get(self.settings["baseUrlEnv"]) or self.settings["baseUrl"]
        return url.rstrip("/")

    def base_of(self, operation: dict[str, Json]) -> str:
        """Where ``operation`` goes: its own server (relative: against the base URL), but
        not one with a host (``//host`` too) when ``baseUrlEnv`` sets the deployment's API."""
        server, pinned = operation.get("server"), os.environ.get(self.settings["baseUrlEnv"])
        if not isinstance(server, str) or (pinned and urlsplit(server).netloc):
            return self.base_url
        return urljoin(self.base_url + "/", server).rstrip("/")

    def client(self) -> httpx2.AsyncClient:
        if self._client is None:
            self._client = httpx2.AsyncClient(
                timeout=httpx2.Timeout(self.timeout),
                limits=httpx2.Limits(max_connections=100, max_keepalive_connections=20),
                follow_redirects=False,  # followed by hand: ``redirects.follow``
                cookies=CookieJar(DefaultCookiePolicy(allowed_domains=[])),
            )
        return self._client

    async def authorize(
        self, request: Request, security: list[dict[str, list[str]]], ctx: Context | None
    ) -> None:
        """The caller's credentials for the first security alternative that can be met."""
        identity = ctx.identity if ctx is not None else None
        inbound = ctx.headers if ctx is not None else None
        headers, query, cookies = await self.credentials.apply(security, identity, inbound)
        wire.set_headers(request.parts["headers"], headers)
        request.parts["query"].update(query)
        request.parts["cookies"].update(cookies)
        request.secret_query.update(query)
        request.secret_headers.update(headers)
        for value in (*headers.values(), *query.values(), *cookies.values()):
            request.secrets.update(wire_request.credential_forms(str(value)))

    async def call(
        self,
        operation: dict[str, Json],
        arguments: dict[str, Json],
        ctx: Context | None = None,
        output: Any = None,
    ) -> types.CallToolResult:
        """The operation called; ``output`` validates a success answer (``answers.result``)."""
        path, arguments = operation["path"], wire.integral(arguments)
        request, hidden = Request(operation["method"], ""), ""  # the path as shown, if secret
        part_headers: dict[str, dict[str, str]] = {}  # multipart property -> its parts' headers
        for param in operation["params"]:
            value, where = arguments.get(param["argument"]), param["location"]
            value = wire_body.without_read_only(value, param.get("read_only") or {})  # not sent
            if value is None and (where != "path" or param["argument"] not in arguments):
                continue  # null is absent (a null path value is refused below)
            if secret := param.get("secret"):  # (format: password, writeOnly): not shown
                request.chosen |= _secret_forms(value)
            if where == "path":
                name = "{" + param["name"] + "}"
                text = wire.path_segment(param["name"], value, param)
                if secret or hidden:  # (from the first secret one on)
                    hidden = (hidden or path).replace(name, REDACTED if secret else text)
                path = path.replace(name, text)
            elif where == "query":
                query = request.parts["query"]
                for key, text in wire.query_pairs(param["name"], value, param):
                    held = query.get(key)
                    query[key] = text if held is None else [*wire.as_list(held), text]
                    if secret:
                        request.hidden_query |= {key}
            elif where == "header":
                if param["name"].lower() in wire.RESERVED_HEADERS:
                    continue  # framing and credentials are never the caller's to set
                text = wire.header_value(param["name"], value, param)
                held = part_headers.setdefault(param["part"], {}) if "part" in param else None
                (request.parts["headers"] if held is None else held)[param["name"]] = text
            else:
                request.parts["cookies"].update(wire.cookie_pairs(param["name"], value, param))
        request.url = wire_request.join(base := self.base_of(operation), path)
        request.at(base, self.settings["baseUrl"] if base == self.base_url else base, path, hidden)
        await self.authorize(request, operation["security"], ctx)
        body = operation.get("body")
        if body is not None and _sent(body, arguments):
            arguments = await files.resolve(body, arguments, ctx, self.max_file)
            request.options = wire_body.body(body, arguments, part_headers, self.max_file)
            if body.get("write_only"):  # a password sent: any answer echoing it has it redacted
                request.chosen |= wire_body.write_only(body, arguments)
                request.secret_body = bool(request.chosen)
            media = request.options.pop("type", body.get("media_type") or body["content_type"])
            if request.options:
                request.parts["headers"].setdefault("Content-Type", media)
        if kind := operation.get("responseType"):  # then, less preferred, an error's types
            errors = [f"{t};q=0.9" for t in operation.get("errorTypes", ())]
            request.parts["headers"].setdefault("Accept", ", ".join([kind, *errors]))
        response = await self._send(request)
        if response.status_code == 202 and operation.get("poll"):  # docs/tasks.md
            from .upstream_poll import poll

            response = await poll(self, request, response, operation["poll"], ctx)
        if response.status_code == 401 and operation["security"]:
            # a cached upstream token may have been revoked: the next call gets a new one
            identity = ctx.identity if ctx is not None else None
            await self.credentials.invalidate_all(operation["security"], identity)
        return answers.result(response, operation, request, output)

    async def _send(self, request: Request) -> httpx2.Response:
        attempts = 1 + (self.retries if request.method in IDEMPOTENT else 0)
        for attempt in range(attempts):
            last = attempt == attempts - 1
            try:
                with anyio.fail_after(self.timeout):  # the whole answer (httpx: each read)
                    response = await redirects.follow(self, request)
            except (httpx2.TransportError, TimeoutError) as exc:
                if last or isinstance(exc, httpx2.LocalProtocolError | httpx2.UnsupportedProtocol):
                    hint = f" (is the API up? {self.settings['baseUrlEnv']} sets its base URL)"
                    why = type(exc).__name__ + (
                        hint if isinstance(exc, httpx2.ConnectError) else ""
                    )
                    raise ToolError(f"{request.shown()} failed: {why}") from None
                await anyio.sleep(_backoff(attempt, None))
                continue
            except (httpx2.HTTPError, httpx2.InvalidURL) as exc:  # never "internal error"
                raise ToolError(f"{request.shown()} failed: {type(exc).__name__}") from None
            if response.status_code in RETRY_STATUS and not last:
                await anyio.sleep(_backoff(attempt, response.headers.get("Retry-After")))
                continue
            return response
        raise AssertionError("unreachable")


def _secret_forms(value: Json) -> set[str]:
    """The strings of a secret parameter's ``value``, as sent and percent-encoded (an API
    echoing the URL it was asked)."""
    texts = [t for t in wire.as_list(value) if isinstance(t, str) and t]
    return {form for t in texts for form in (t, quote(t, safe=""), quote_plus(t))}


def _sent(body: dict[str, Json], arguments: dict[str, Json]) -> bool:
    """Whether the call sends the body (an optional one spread: when a property is given)."""
    if body.get("argument") is not None or body.get("required"):
        return True
    return any(argument in arguments for argument in body.get("arguments") or ())


def _backoff(attempt: int, retry_after: str | None) -> float:
    if retry_after and retry_after.isascii() and retry_after.isdigit():
        return min(float(retry_after), 5.0)
    return min(0.2 * (2.0**attempt), 2.0) + random.uniform(0, 0.1)
