"""Credentials for the wrapped API, chosen per security scheme of its OpenAPI document.

Three sources, set per scheme by ``openapi.credentials`` in the manifest (``env`` when a
scheme is not named):

- ``env``: the server's own secrets from environment variables (API key, HTTP basic,
  bearer token, OAuth2 client credentials). Every caller reaches the upstream as the server.
- ``tokenExchange`` (RFC 8693): the caller's verified inbound token is exchanged at an
  authorization server for a token meant for the upstream (its own audience); the caller
  reaches the upstream as themselves. The inbound token itself never goes upstream.
- ``header``: a credential for the upstream that the caller (or a gateway in front of the
  server) sends in one allow-listed request header; never the MCP access token.

Secrets are never logged: at most a short fingerprint (``fingerprint``) of a token is.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import re
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import quote_plus, urlsplit

import anyio
import httpx2

from .identity import LOCAL, Identity

logger = logging.getLogger(__name__)

TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
SOURCES = ("env", "tokenExchange", "header")
CLIENT_AUTH = ("basic", "post")
SKEW = 30.0
"""Seconds before an upstream token's end at which a cached copy is no longer used."""
DEFAULT_LIFETIME = 60.0
"""How long a token is cached when the authorization server gives no ``expires_in``."""
MAX_HEADER_VALUE = 8192

# Inbound headers that may never be named as a credential's source: the MCP server's own
# credential, cookies, and headers that belong to HTTP or to the MCP transport.
FORBIDDEN_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "host",
        "connection",
        "content-length",
        "content-type",
        "transfer-encoding",
        "upgrade",
        "te",
        "trailer",
        "forwarded",
    }
)
FORBIDDEN_HEADER_PREFIXES = ("mcp-", "sec-", "x-forwarded-")
_TOKEN_CHARS = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_OPTIONS = {
    "env": {"from"},
    "tokenExchange": {"from", "tokenUrl", "audience", "resource", "scope", "clientAuth"},
    "header": {"from", "header"},
}

Scheme = Mapping[str, Any]
Requirement = Mapping[str, Sequence[str]]
ErrorFactory = Callable[[str], BaseException]


class CredentialError(Exception):
    """The default error for a credential that cannot be had; pass ``error=`` to replace it."""


class CredentialConfigError(ValueError):
    """The credentials configuration is unusable: raised when the server starts, not per call."""


class _Fail(Exception):
    """Internal: a credential failure whose message is safe to show (no secret in it)."""


def fingerprint(secret: str) -> str:
    """A short, non-reversible tag for a secret, the most any log line shows of one."""
    return hashlib.sha256(secret.encode()).hexdigest()[:8]


# -- the cache ---------------------------------------------------------------------------


class CacheBackend(Protocol):
    """Where issued upstream tokens are kept (in memory by default; Redis can back it).

    Values are opaque strings; ``ttl`` is in seconds and always positive.
    """

    async def get(self, key: str) -> str | None: ...

    async def set(self, key: str, value: str, ttl: float) -> None: ...

    async def delete(self, key: str) -> None: ...


class MemoryCache:
    """A bounded in-process cache: expired entries are never returned; oldest go first."""

    def __init__(
        self, max_entries: int = 10_000, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.max_entries = max_entries
        self.clock = clock
        self._data: OrderedDict[str, tuple[str, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._data)

    async def get(self, key: str) -> str | None:
        entry = self._data.get(key)
        if entry is None:
            return None
        if entry[1] <= self.clock():
            del self._data[key]
            return None
        self._data.move_to_end(key)
        return entry[0]

    async def set(self, key: str, value: str, ttl: float) -> None:
        if ttl <= 0:
            self._data.pop(key, None)
            return
        self._data[key] = (value, self.clock() + ttl)
        self._data.move_to_end(key)
        if len(self._data) > self.max_entries:
            now = self.clock()
            for stale in [k for k, (_, end) in self._data.items() if end <= now]:
                del self._data[stale]
            while len(self._data) > self.max_entries:
                self._data.popitem(last=False)

    async def delete(self, key: str) -> None:
        self._data.pop(key, None)


class _Flight:
    """One token request in progress that callers with the same key wait for."""

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.value: str | None = None
        self.error: str | None = None


# -- what a caller gets ------------------------------------------------------------------


@dataclass(frozen=True)
class Credential:
    """One scheme's credential, placed as the scheme says (repr hides every secret).

    ``value`` is the secret as the scheme carries it: the API key, the bearer token, or the
    base64 ``user:password`` of HTTP basic.
    """

    scheme: str
    source: str
    value: str = field(repr=False)
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    query: Mapping[str, str] = field(default_factory=dict, repr=False)
    cookies: Mapping[str, str] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class SchemeSource:
    """A scheme's configured source, checked when the server starts."""

    scheme: str
    source: str
    spec: Scheme
    token_url: str | None = None
    audience: str | None = None
    resource: str | None = None
    scope: str | None = None
    client_auth: str = "basic"
    header: str | None = None


# -- the credentials layer ---------------------------------------------------------------


class Credentials:
    """The upstream credential of every security scheme, for a given caller.

    ``schemes``: the OpenAPI security schemes as the build stores them (``securitySchemes``
    in ``_spec.json``). ``config``: ``openapi.credentials`` of the manifest. ``env_prefix``
    and ``env_names`` (``credentialEnv``) name the environment variables, as ``Upstream``
    did. ``base_url`` (a string or a function read at each call) resolves a relative OAuth2
    ``tokenUrl``. ``error`` builds the exception raised when a credential cannot be had
    (the runtime's tool error). ``server_auth_header`` is the header the MCP server reads
    its own callers' credential from: it can never be a ``header`` source. ``http`` is the
    client (or a function returning it) for token requests; redirects are never followed.
    """

    def __init__(
        self,
        schemes: Mapping[str, Scheme],
        config: Mapping[str, Mapping[str, Any]] | None = None,
        *,
        env_prefix: str,
        env_names: Mapping[str, str] | None = None,
        base_url: str | Callable[[], str] = "",
        error: ErrorFactory = CredentialError,
        cache: CacheBackend | None = None,
        http: httpx2.AsyncClient | Callable[[], httpx2.AsyncClient] | None = None,
        server_auth_header: str | None = None,
        timeout: float = 10.0,
        skew: float = SKEW,
        environ: Mapping[str, str] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.schemes = dict(schemes)
        self.env_prefix = env_prefix
        self.env_names = dict(env_names or {})
        self._base_url = base_url
        self._error = error
        self.cache: CacheBackend = cache if cache is not None else MemoryCache()
        self._http = http
        self._own_http: httpx2.AsyncClient | None = None
        self.timeout = timeout
        self.skew = skew
        self._environ = environ
        self._clock = clock
        self._flights: dict[str, _Flight] = {}
        self.sources = _sources(self.schemes, config, server_auth_header)

    # -- public --------------------------------------------------------------------------

    async def apply(
        self,
        security: Sequence[Requirement],
        identity: Identity | None = None,
        inbound_headers: Mapping[str, str] | None = None,
    ) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
        """Headers, query and cookies of the first security alternative that can be met.

        An alternative is skipped when a credential is not available (a variable not set,
        a header not sent, a caller with no token to exchange); a token request that fails
        raises at once, so a refused caller never falls back to the server's own secrets.
        """
        if not security:
            return {}, {}, {}
        who = identity or LOCAL
        needs: list[str] = []
        for alternative in security:
            missing = [
                reason
                for name in alternative
                if (reason := self._unavailable(name, who, inbound_headers)) is not None
            ]
            if missing:
                needs.append(" and ".join(missing))
                continue
            headers: dict[str, str] = {}
            query: dict[str, str] = {}
            cookies: dict[str, str] = {}
            for name, scopes in alternative.items():
                credential = await self.for_scheme(name, who, inbound_headers, scopes=scopes)
                headers.update(credential.headers)
                query.update(credential.query)
                cookies.update(credential.cookies)
            return headers, query, cookies
        raise self._error("missing credentials for the upstream API: " + " or ".join(needs))

    async def for_scheme(
        self,
        name: str,
        identity: Identity | None = None,
        inbound_headers: Mapping[str, str] | None = None,
        *,
        scopes: Sequence[str] = (),
    ) -> Credential:
        """The caller's credential for one scheme (for handlers and overrides too).

        ``scopes``: the operation's required scopes for an OAuth2 scheme; a token exchange
        asks for them when the configuration sets no ``scope``.
        """
        who = identity or LOCAL
        source = self.sources.get(name)
        if source is None:
            raise self._error(f"the upstream API has no security scheme named {name!r}")
        try:
            reason = self._unavailable(name, who, inbound_headers)
            if reason is not None:
                raise _Fail(f"missing credentials for the upstream API: {reason}")
            if source.source == "tokenExchange":
                value = await self._exchanged(source, who, scopes)
            elif source.source == "header":
                value = self._from_header(source, who, inbound_headers)
            else:
                value = await self._from_env(source)
        except _Fail as exc:
            raise self._error(str(exc)) from None
        headers, query, cookies = _place(source.spec, value)
        return Credential(name, source.source, value, headers, query, cookies)

    async def invalidate(
        self, name: str, identity: Identity | None = None, *, scopes: Sequence[str] = ()
    ) -> None:
        """Forget a cached upstream token (call it when the upstream answers 401 with it)."""
        source = self.sources.get(name)
        if source is None:
            return
        who = identity or LOCAL
        if source.source == "tokenExchange" and who.token:
            key = self._exchange_key(source, who, self._scope(source, scopes))
        elif source.source == "env" and source.spec.get("type") == "oauth2":
            client_id = self._env(name, "_CLIENT_ID")
            if client_id is None:
                return
            key = self._client_key(source, client_id)
        else:
            return
        try:
            await self.cache.delete(key)
        except Exception as exc:
            logger.warning("credential cache unavailable: %s", type(exc).__name__)

    async def invalidate_all(
        self, security: Sequence[Requirement], identity: Identity | None = None
    ) -> None:
        """Forget the caller's cached tokens for every scheme an operation may use (on 401)."""
        for alternative in security:
            for name, scopes in alternative.items():
                await self.invalidate(name, identity, scopes=scopes)

    def env_name(self, scheme: str) -> str:
        """The environment variable holding a scheme's secret (the base of the others)."""
        return self.env_names.get(scheme) or f"{self.env_prefix}_{_env_name(scheme)}"

    def environment(self) -> list[dict[str, Any]]:
        """Every environment variable the credentials read, for ``_spec.json``/README."""
        found: list[dict[str, Any]] = []

        def add(name: str, description: str) -> None:
            found.append(
                {
                    "name": name,
                    "description": description,
                    "secret": True,
                    "required": False,
                    "default": None,
                }
            )

        for scheme, source in self.sources.items():
            base, kind = self.env_name(scheme), source.spec.get("type")
            if source.source == "tokenExchange":
                add(base + "_CLIENT_ID", f"client id for token exchange ({scheme})")
                add(base + "_CLIENT_SECRET", f"client secret for token exchange ({scheme})")
            elif source.source == "header":
                continue
            elif kind == "http" and source.spec.get("scheme") == "basic":
                add(base + "_USERNAME", f"HTTP basic user name ({scheme})")
                add(base + "_PASSWORD", f"HTTP basic password ({scheme})")
            elif kind == "oauth2":
                add(base + "_CLIENT_ID", f"OAuth2 client id ({scheme})")
                add(base + "_CLIENT_SECRET", f"OAuth2 client secret ({scheme})")
            elif kind == "apiKey":
                add(base, f"API key ({scheme})")
            elif kind == "http":
                add(base, f"bearer token ({scheme})")
        return found

    async def aclose(self) -> None:
        """Close the HTTP client this object made itself (never one it was given)."""
        if self._own_http is not None:
            await self._own_http.aclose()
            self._own_http = None

    # -- availability --------------------------------------------------------------------

    def _unavailable(
        self, name: str, identity: Identity, inbound: Mapping[str, str] | None
    ) -> str | None:
        """Why a scheme's credential cannot be had right now (None: it can be tried)."""
        source = self.sources.get(name)
        if source is None:
            return f"{name}: not a security scheme of the upstream API"
        base = self.env_name(name)
        kind = source.spec.get("type")
        if source.source == "tokenExchange":
            if not identity.token:
                return (
                    f"{name} needs the caller's own access token to exchange "
                    "(this caller is not authenticated, or is local)"
                )
            if self._env(name, "_CLIENT_ID") is None or self._env(name, "_CLIENT_SECRET") is None:
                return f"set {base}_CLIENT_ID and {base}_CLIENT_SECRET (token exchange)"
            return None
        if source.source == "header":
            assert source.header is not None
            if not _header_values(inbound, source.header):
                return f"send the {source.header} header ({name})"
            return None
        if kind == "http" and source.spec.get("scheme") == "basic":
            if self._env(name, "_USERNAME") is None or self._env(name, "_PASSWORD") is None:
                return f"set {base}_USERNAME and {base}_PASSWORD"
            return None
        if kind == "oauth2":
            if not source.spec.get("tokenUrl"):
                return f"{name}: the OAuth2 scheme has no client-credentials tokenUrl"
            if self._env(name, "_CLIENT_ID") is None or self._env(name, "_CLIENT_SECRET") is None:
                return f"set {base}_CLIENT_ID and {base}_CLIENT_SECRET"
            return None
        if kind in ("apiKey", "http"):
            return None if self._env(name) is not None else f"set {base}"
        return f"{name}: security scheme type {kind!r} has no environment source"

    # -- env -----------------------------------------------------------------------------

    def _env(self, scheme: str, suffix: str = "") -> str | None:
        environ = os.environ if self._environ is None else self._environ
        return environ.get(self.env_name(scheme) + suffix) or None

    async def _from_env(self, source: SchemeSource) -> str:
        name, kind = source.scheme, source.spec.get("type")
        if kind == "http" and source.spec.get("scheme") == "basic":
            user, password = self._env(name, "_USERNAME"), self._env(name, "_PASSWORD")
            assert user is not None and password is not None
            return base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        if kind == "oauth2":
            return await self._client_credentials(source)
        value = self._env(name)
        assert value is not None
        return value

    async def _client_credentials(self, source: SchemeSource) -> str:
        """The server's own OAuth2 token (client credentials), cached until near its end."""
        name = source.scheme
        client_id, secret = self._env(name, "_CLIENT_ID"), self._env(name, "_CLIENT_SECRET")
        assert client_id is not None and secret is not None
        key = self._client_key(source, client_id)
        form = {"grant_type": "client_credentials"}
        scopes = source.spec.get("scopes") or {}
        if scopes:
            form["scope"] = " ".join(sorted(scopes))

        async def request() -> tuple[str, float]:
            token, lifetime = await self._token_request(
                source, self._token_url(source), form, client_id, secret, "post", what="token"
            )
            logger.info(
                "client credentials for %s: upstream token %s, expires in %.0f s",
                name,
                fingerprint(token),
                lifetime,
            )
            return token, self._ttl(lifetime, None)

        return await self._cached(key, request, owner="server", subject="")

    def _client_key(self, source: SchemeSource, client_id: str) -> str:
        tag = _digest(self._token_url(source), client_id)
        return f"mcpgen:credentials:{source.scheme}:client:{tag}"

    def _token_url(self, source: SchemeSource) -> str:
        url = str(source.token_url or source.spec.get("tokenUrl") or "")
        if url.startswith("/"):  # relative to the API's origin
            base = self._base_url() if callable(self._base_url) else self._base_url
            origin = httpx2.URL(base)
            url = str(origin.copy_with(path=url, query=None))
        return url

    # -- header --------------------------------------------------------------------------

    def _from_header(
        self, source: SchemeSource, identity: Identity, inbound: Mapping[str, str] | None
    ) -> str:
        assert source.header is not None
        values = _header_values(inbound, source.header)
        if len(values) != 1:
            raise _Fail(f"{source.scheme}: send the {source.header} header exactly once")
        value = values[0].strip()
        if _CONTROL.search(value) or len(value) > MAX_HEADER_VALUE:
            raise _Fail(f"{source.scheme}: the {source.header} header is not a usable credential")
        kind = source.spec.get("type")
        if kind in ("http", "oauth2", "openIdConnect"):
            word = "basic" if source.spec.get("scheme") == "basic" else "bearer"
            if value[: len(word) + 1].lower() == word + " ":
                value = value[len(word) + 1 :].strip()
        if not value:
            raise _Fail(f"{source.scheme}: the {source.header} header is empty")
        if identity.token and value == identity.token:
            raise _Fail(
                f"{source.scheme}: the {source.header} header carries the MCP access token, "
                "which is never passed to the upstream API"
            )
        return value

    # -- token exchange ------------------------------------------------------------------

    def _scope(self, source: SchemeSource, scopes: Sequence[str]) -> str | None:
        if source.scope is not None:
            return source.scope
        return " ".join(sorted(set(scopes))) or None

    def _exchange_key(self, source: SchemeSource, identity: Identity, scope: str | None) -> str:
        assert identity.token
        config = _digest(
            source.token_url or "",
            source.audience or "",
            source.resource or "",
            scope or "",
            self._env(source.scheme, "_CLIENT_ID") or "",
        )
        subject = _digest(identity.token)
        return f"mcpgen:credentials:{source.scheme}:{config}:{identity.key}:{subject}"

    async def _exchanged(
        self, source: SchemeSource, identity: Identity, scopes: Sequence[str]
    ) -> str:
        """The caller's upstream token: from the cache, or exchanged (one request per key)."""
        name = source.scheme
        inbound = identity.token
        assert inbound
        client_id, secret = self._env(name, "_CLIENT_ID"), self._env(name, "_CLIENT_SECRET")
        assert client_id is not None and secret is not None
        scope = self._scope(source, scopes)
        key = self._exchange_key(source, identity, scope)
        form = {
            "grant_type": TOKEN_EXCHANGE_GRANT,
            "subject_token": inbound,
            "subject_token_type": ACCESS_TOKEN_TYPE,
            "requested_token_type": ACCESS_TOKEN_TYPE,
        }
        if source.audience:
            form["audience"] = source.audience
        if source.resource:
            form["resource"] = source.resource
        if scope:
            form["scope"] = scope

        async def request() -> tuple[str, float]:
            assert source.token_url is not None
            try:
                token, lifetime = await self._token_request(
                    source,
                    source.token_url,
                    form,
                    client_id,
                    secret,
                    source.client_auth,
                    what="token exchange",
                    hidden=(inbound,),
                )
            except _Fail as exc:
                logger.warning(
                    "token exchange for %s failed for caller %s (inbound %s): %s",
                    name,
                    identity.key[:12],
                    fingerprint(inbound),
                    exc,
                )
                raise
            if token == inbound:
                raise _Fail(
                    f"the authorization server answered the token exchange for {name} with "
                    "the caller's own token; it is never passed to the upstream API"
                )
            logger.info(
                "token exchange for %s: caller %s, inbound %s -> upstream %s, expires in %.0f s",
                name,
                identity.key[:12],
                fingerprint(inbound),
                fingerprint(token),
                lifetime,
            )
            return token, self._ttl(lifetime, identity.expires_at)

        return await self._cached(key, request, owner=identity.key, subject=_digest(inbound))

    def _ttl(self, lifetime: float, ends_at: int | None) -> float:
        """How long to keep a token: until shortly before it (or the inbound token) ends."""
        ttl = lifetime - min(self.skew, lifetime / 4)
        if ends_at is not None:
            ttl = min(ttl, ends_at - self._clock())
        return ttl

    async def _cached(
        self,
        key: str,
        request: Callable[[], Awaitable[tuple[str, float]]],
        *,
        owner: str,
        subject: str,
    ) -> str:
        """A cached token for ``key``, else one request shared by every concurrent caller."""
        found = await self._lookup(key, owner, subject)
        if found is not None:
            return found
        while (flight := self._flights.get(key)) is not None:
            await flight.done.wait()
            if flight.value is not None:
                return flight.value
            if flight.error is not None:
                raise _Fail(flight.error)
            # the request was cancelled or crashed: try again, perhaps as the leader
        flight = _Flight()
        self._flights[key] = flight
        try:
            found = await self._lookup(key, owner, subject)
            if found is None:
                token, ttl = await request()
                if ttl > 0:
                    entry = {"token": token, "owner": owner, "subject": subject}
                    try:
                        await self.cache.set(key, json.dumps(entry), ttl)
                    except Exception as exc:  # a cache outage costs requests, not calls
                        logger.warning("credential cache unavailable: %s", type(exc).__name__)
                found = token
            flight.value = found
            return found
        except _Fail as exc:
            flight.error = str(exc)
            raise
        finally:
            del self._flights[key]
            flight.done.set()

    async def _lookup(self, key: str, owner: str, subject: str) -> str | None:
        try:
            raw = await self.cache.get(key)
        except Exception as exc:
            logger.warning("credential cache unavailable: %s", type(exc).__name__)
            return None
        if raw is None:
            return None
        try:
            entry = json.loads(raw)
        except ValueError:
            return None
        if not isinstance(entry, dict) or not isinstance(entry.get("token"), str):
            return None
        if entry.get("owner") != owner or entry.get("subject") != subject:
            logger.error("credential cache entry %s belongs to another caller; ignored", key[:40])
            return None
        token: str = entry["token"]
        return token

    # -- token endpoint ------------------------------------------------------------------

    def _client(self) -> httpx2.AsyncClient:
        if isinstance(self._http, httpx2.AsyncClient):
            return self._http
        if self._http is not None:
            return self._http()
        if self._own_http is None:
            self._own_http = httpx2.AsyncClient(timeout=httpx2.Timeout(self.timeout))
        return self._own_http

    async def _token_request(
        self,
        source: SchemeSource,
        url: str,
        form: dict[str, str],
        client_id: str,
        secret: str,
        client_auth: str,
        *,
        what: str,
        hidden: tuple[str, ...] = (),
    ) -> tuple[str, float]:
        """POST to a token endpoint; (access token, lifetime in seconds) or ``_Fail``."""
        name = source.scheme
        data = dict(form)
        headers = {"Accept": "application/json"}
        if client_auth == "basic":
            pair = f"{quote_plus(client_id)}:{quote_plus(secret)}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        else:
            data["client_id"] = client_id
            data["client_secret"] = secret
        secrets = (*hidden, secret)
        try:
            response = await self._client().post(
                url, data=data, headers=headers, follow_redirects=False, timeout=self.timeout
            )
        except httpx2.HTTPError as exc:
            raise _Fail(
                f"{what} for {name}: could not reach the authorization server "
                f"({type(exc).__name__})"
            ) from None
        status = response.status_code
        payload: Any = None
        try:
            payload = response.json()
        except ValueError:
            payload = None
        if 300 <= status < 400:
            raise _Fail(
                f"{what} for {name}: the authorization server answered a redirect (HTTP "
                f"{status}); token requests never follow redirects"
            )
        if status >= 400 or (isinstance(payload, dict) and "error" in payload):
            detail = _oauth_error(payload, secrets)
            raise _Fail(
                f"{what} for {name} was refused by the authorization server: HTTP {status}"
                + (f" ({detail})" if detail else "")
            )
        if not isinstance(payload, dict):
            raise _Fail(f"{what} for {name}: the authorization server did not answer JSON")
        token = payload.get("access_token")
        if not isinstance(token, str) or not token:
            raise _Fail(f"{what} for {name}: the answer has no access_token")
        token_type = payload.get("token_type")
        if isinstance(token_type, str) and token_type.lower() not in ("bearer", "n_a"):
            raise _Fail(
                f"{what} for {name}: token_type {_clean(token_type, secrets)!r} is not a "
                "bearer token"
            )
        if _CONTROL.search(token) or len(token) > MAX_HEADER_VALUE:
            raise _Fail(f"{what} for {name}: the issued token is not usable in a header")
        expires = payload.get("expires_in")
        if isinstance(expires, int | float) and not isinstance(expires, bool) and expires >= 0:
            lifetime = float(expires)
        else:
            lifetime = DEFAULT_LIFETIME
        return token, lifetime


# -- configuration -----------------------------------------------------------------------


def check_config(
    schemes: Mapping[str, Scheme],
    config: Mapping[str, Mapping[str, Any]] | None,
    server_auth_header: str | None = None,
) -> None:
    """Refuse an unusable ``openapi.credentials`` (the build can call it; so does the server)."""
    _sources(schemes, config, server_auth_header)


def _sources(
    schemes: Mapping[str, Scheme],
    config: Mapping[str, Mapping[str, Any]] | None,
    server_auth_header: str | None,
) -> dict[str, SchemeSource]:
    forbidden = set(FORBIDDEN_HEADERS)
    if server_auth_header:
        forbidden.add(server_auth_header.lower())
    if config is not None and not isinstance(config, Mapping):
        raise CredentialConfigError("openapi.credentials must be a mapping")
    given = config or {}
    return {
        name: _parse(name, schemes.get(name), given.get(name), forbidden)
        for name in sorted({*schemes, *given})
    }


def _parse(
    name: str, spec: Scheme | None, config: Mapping[str, Any] | None, forbidden: set[str]
) -> SchemeSource:
    """One scheme's source from the configuration; refuses anything unsafe or unclear."""

    def refuse(why: str) -> CredentialConfigError:
        return CredentialConfigError(f"openapi.credentials.{name}: {why}")

    if spec is None:
        raise refuse("the API has no security scheme of that name")
    if config is None:
        return SchemeSource(name, "env", spec)
    if not isinstance(config, Mapping):
        raise refuse("must be a mapping")
    if "from" not in config:
        raise refuse(f"say where the credential comes 'from': {', '.join(SOURCES)}")
    source = config["from"]
    if source not in SOURCES:
        raise refuse(f"'from' must be one of {', '.join(SOURCES)}, not {source!r}")
    unknown = sorted(set(config) - _OPTIONS[source])
    if unknown:
        raise refuse(f"unknown option(s) for from: {source}: {', '.join(unknown)}")
    kind = spec.get("type")
    if source == "env":
        return SchemeSource(name, "env", spec)
    if source == "header":
        header = config.get("header")
        if not isinstance(header, str) or not _TOKEN_CHARS.match(header):
            raise refuse("'header' must be an HTTP header name")
        lowered = header.lower()
        if lowered in forbidden or lowered.startswith(FORBIDDEN_HEADER_PREFIXES):
            raise refuse(
                f"the {header} header cannot carry an upstream credential (the MCP access "
                "token and transport headers are never passed through)"
            )
        if kind not in ("apiKey", "http", "oauth2", "openIdConnect"):
            raise refuse(f"security scheme type {kind!r} cannot take a header credential")
        return SchemeSource(name, "header", spec, header=header)
    if kind == "http" and spec.get("scheme") == "basic":
        raise refuse("token exchange issues a token, which HTTP basic cannot carry")
    if kind not in ("apiKey", "http", "oauth2", "openIdConnect"):
        raise refuse(f"security scheme type {kind!r} cannot carry an exchanged token")
    token_url = config.get("tokenUrl")
    if not isinstance(token_url, str) or not _safe_url(token_url):
        raise refuse("'tokenUrl' must be an https URL (http only to 127.0.0.1 or localhost)")
    audience, resource, scope = config.get("audience"), config.get("resource"), config.get("scope")
    for option, value in (("audience", audience), ("resource", resource), ("scope", scope)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise refuse(f"'{option}' must be a non-empty string")
    if audience is None and resource is None:
        raise refuse("set 'audience' (or 'resource') so the issued token is meant for the API")
    if resource is not None and not urlsplit(resource).scheme:
        raise refuse("'resource' must be an absolute URI")
    client_auth = config.get("clientAuth", "basic")
    if client_auth not in CLIENT_AUTH:
        raise refuse(f"'clientAuth' must be one of {', '.join(CLIENT_AUTH)}")
    return SchemeSource(
        name,
        "tokenExchange",
        spec,
        token_url=token_url,
        audience=audience,
        resource=resource,
        scope=scope,
        client_auth=client_auth,
    )


def _safe_url(url: str) -> bool:
    parts = urlsplit(url)
    if not parts.hostname:
        return False
    if parts.scheme == "https":
        return True
    return parts.scheme == "http" and parts.hostname in ("127.0.0.1", "localhost", "::1")


# -- helpers -----------------------------------------------------------------------------


def _place(spec: Scheme, value: str) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """Where a scheme carries its secret: an API key's place, or the Authorization header."""
    headers: dict[str, str] = {}
    query: dict[str, str] = {}
    cookies: dict[str, str] = {}
    kind = spec.get("type")
    if kind == "apiKey":
        target = {"header": headers, "query": query, "cookie": cookies}[spec.get("in", "header")]
        target[str(spec["name"])] = value
    elif kind == "http" and spec.get("scheme") == "basic":
        headers["Authorization"] = f"Basic {value}"
    else:
        headers["Authorization"] = f"Bearer {value}"
    return headers, query, cookies


def _header_values(inbound: Mapping[str, str] | None, name: str) -> list[str]:
    """Every value of one inbound header, whatever its case (duplicates included)."""
    if not inbound:
        return []
    wanted = name.lower()
    items: Any = inbound.multi_items() if hasattr(inbound, "multi_items") else inbound.items()
    return [str(v) for k, v in items if str(k).lower() == wanted and str(v).strip()]


def _env_name(scheme: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in scheme).upper()


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:32]


def _clean(text: str, secrets: Sequence[str]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[redacted]")
    return _CONTROL.sub(" ", text)[:200]


def _oauth_error(payload: Any, secrets: Sequence[str]) -> str:
    """``error: error_description`` of an OAuth error answer, with secrets taken out."""
    if not isinstance(payload, dict):
        return ""
    error, description = payload.get("error"), payload.get("error_description")
    parts = [_clean(str(p), secrets) for p in (error, description) if isinstance(p, str) and p]
    return ": ".join(parts)
