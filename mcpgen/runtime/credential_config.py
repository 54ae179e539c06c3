"""What ``openapi.credentials`` may say, and where each security scheme carries its secret.

Parsed once when the server starts (and by the build, through ``check_config``): anything
unsafe or unclear is refused with a ``CredentialConfigError`` naming the scheme, never
discovered per call.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

SOURCES = ("env", "tokenExchange", "header")
CLIENT_AUTH = ("basic", "post")
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
TOKEN_CHARS = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_OPTIONS = {
    "env": {"from"},
    "tokenExchange": {"from", "tokenUrl", "audience", "resource", "scope", "clientAuth"},
    "header": {"from", "header"},
}
# Scheme types a token (exchanged, or from a header) can be sent as.
TOKEN_SCHEMES = ("apiKey", "http", "oauth2", "openIdConnect")

Scheme = Mapping[str, Any]
Parts = tuple[dict[str, str], dict[str, str], dict[str, str]]


class CredentialConfigError(ValueError):
    """The credentials configuration is unusable: raised when the server starts, not per call.

    ``scheme`` and ``option`` (when one option is at fault) say where; ``reason`` is the
    message without the ``openapi.credentials.<scheme>:`` prefix.
    """

    def __init__(self, message: str, scheme: str = "", option: str = "", reason: str = ""):
        super().__init__(message)
        self.scheme = scheme
        self.option = option
        self.reason = reason or message


class CredentialFailure(Exception):
    """Internal: a credential failure whose message is safe to show (no secret in it)."""


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


def check_config(
    schemes: Mapping[str, Scheme],
    config: Mapping[str, Mapping[str, Any]] | None,
    server_auth_header: str | None = None,
) -> None:
    """Refuse an unusable ``openapi.credentials`` (the build can call it; so does the server)."""
    parse_sources(schemes, config, server_auth_header)


def forbidden_headers(server_auth_header: str | None) -> set[str]:
    """Header names (lower case) no ``header`` source may read."""
    forbidden = set(FORBIDDEN_HEADERS)
    if server_auth_header:
        forbidden.add(server_auth_header.lower())
    return forbidden


def parse_sources(
    schemes: Mapping[str, Scheme],
    config: Mapping[str, Mapping[str, Any]] | None,
    server_auth_header: str | None,
) -> dict[str, SchemeSource]:
    """Every scheme's source (``env`` for a scheme the configuration does not name)."""
    forbidden = forbidden_headers(server_auth_header)
    if config is not None and not isinstance(config, Mapping):
        raise CredentialConfigError("openapi.credentials must be a mapping")
    given = config or {}
    return {
        name: parse_source(name, schemes.get(name), given.get(name), forbidden)
        for name in sorted({*schemes, *given})
    }


def parse_source(
    name: str, spec: Scheme | None, config: Mapping[str, Any] | None, forbidden: set[str]
) -> SchemeSource:
    """One scheme's source from the configuration; refuses anything unsafe or unclear."""

    def refuse(why: str, option: str = "") -> CredentialConfigError:
        return CredentialConfigError(f"openapi.credentials.{name}: {why}", name, option, why)

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
        raise refuse(f"'from' must be one of {', '.join(SOURCES)}, not {source!r}", "from")
    unknown = sorted(set(config) - _OPTIONS[source])
    if unknown:
        raise refuse(f"unknown option(s) for from: {source}: {', '.join(unknown)}", unknown[0])
    kind = spec.get("type")
    if source == "env":
        return SchemeSource(name, "env", spec)
    if source == "header":
        header = config.get("header")
        if not isinstance(header, str) or not TOKEN_CHARS.match(header):
            raise refuse("'header' must be an HTTP header name", "header")
        lowered = header.lower()
        if lowered in forbidden or lowered.startswith(FORBIDDEN_HEADER_PREFIXES):
            raise refuse(
                f"the {header} header cannot carry an upstream credential (the MCP access "
                "token and transport headers are never passed through)",
                "header",
            )
        if kind not in TOKEN_SCHEMES:
            raise refuse(f"security scheme type {kind!r} cannot take a header credential", "from")
        return SchemeSource(name, "header", spec, header=header)
    if kind == "http" and spec.get("scheme") == "basic":
        raise refuse("token exchange issues a token, which HTTP basic cannot carry", "from")
    if kind not in TOKEN_SCHEMES:
        raise refuse(f"security scheme type {kind!r} cannot carry an exchanged token", "from")
    token_url = config.get("tokenUrl")
    if not isinstance(token_url, str) or not safe_url(token_url):
        raise refuse(
            "'tokenUrl' must be an https URL (http only to 127.0.0.1 or localhost)", "tokenUrl"
        )
    audience, resource, scope = config.get("audience"), config.get("resource"), config.get("scope")
    for option, value in (("audience", audience), ("resource", resource), ("scope", scope)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise refuse(f"'{option}' must be a non-empty string", option)
    if audience is None and resource is None:
        raise refuse("set 'audience' (or 'resource') so the issued token is meant for the API")
    if resource is not None and not urlsplit(resource).scheme:
        raise refuse("'resource' must be an absolute URI", "resource")
    client_auth = config.get("clientAuth", "basic")
    if client_auth not in CLIENT_AUTH:
        raise refuse(f"'clientAuth' must be one of {', '.join(CLIENT_AUTH)}", "clientAuth")
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


def safe_url(url: str) -> bool:
    """https, or http to this machine's loopback."""
    parts = urlsplit(url)
    if not parts.hostname:
        return False
    if parts.scheme == "https":
        return True
    return parts.scheme == "http" and parts.hostname in ("127.0.0.1", "localhost", "::1")


def place(spec: Scheme, value: str) -> Parts:
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


def header_values(inbound: Mapping[str, str] | None, name: str) -> list[str]:
    """Every value of one inbound header, whatever its case (duplicates included)."""
    if not inbound:
        return []
    wanted = name.lower()
    items: Any = inbound.multi_items() if hasattr(inbound, "multi_items") else inbound.items()
    return [str(v) for k, v in items if str(k).lower() == wanted and str(v).strip()]


def from_header(source: SchemeSource, inbound: Mapping[str, str] | None, mcp_token: str) -> str:
    """The credential a ``header`` source reads: the one allow-listed header, sent once."""
    assert source.header is not None
    values = header_values(inbound, source.header)
    if len(values) != 1:
        raise CredentialFailure(f"{source.scheme}: send the {source.header} header exactly once")
    value = values[0].strip()
    if CONTROL.search(value) or len(value) > MAX_HEADER_VALUE:
        raise CredentialFailure(
            f"{source.scheme}: the {source.header} header is not a usable credential"
        )
    kind = source.spec.get("type")
    if kind in ("http", "oauth2", "openIdConnect"):
        word = "basic" if source.spec.get("scheme") == "basic" else "bearer"
        if value[: len(word) + 1].lower() == word + " ":
            value = value[len(word) + 1 :].strip()
    if not value:
        raise CredentialFailure(f"{source.scheme}: the {source.header} header is empty")
    if mcp_token and mcp_token.strip() in value:  # in any spelling: "Bearer T", "T,", ...
        raise CredentialFailure(
            f"{source.scheme}: the {source.header} header carries the MCP access token, "
            "which is never passed to the upstream API"
        )
    return value


def env_suffixes(source: SchemeSource) -> list[tuple[str, str, bool]]:
    """The variables a source reads: (suffix of the scheme's base name, meaning, secret)."""
    kind = source.spec.get("type")
    if source.source == "header":
        return []
    if source.source == "tokenExchange" or (kind == "oauth2" and source.spec.get("tokenUrl")):
        what = "token exchange" if source.source == "tokenExchange" else "OAuth2 client credentials"
        return [
            ("_CLIENT_ID", f"client id for {what}", False),
            ("_CLIENT_SECRET", f"client secret for {what}", True),
        ]
    if kind == "http" and source.spec.get("scheme") == "basic":
        return [
            ("_USERNAME", "HTTP basic user name", False),
            ("_PASSWORD", "HTTP basic password", True),
        ]
    if kind == "apiKey":
        return [("", "API key", True)]
    if kind == "http":
        return [("", "bearer token", True)]
    if kind in ("oauth2", "openIdConnect"):  # user flows only: a token got out of band
        return [("", "access token (sent as a bearer token)", True)]
    return []


def variables(
    sources: Mapping[str, SchemeSource], base: Callable[[str], str]
) -> list[tuple[str, str, str, bool]]:
    """Every variable the sources read: (name, scheme, meaning, secret); ``base`` names a
    scheme's variable (the package's prefix and the scheme's name)."""
    return [
        (base(scheme) + suffix, scheme, meaning, secret)
        for scheme, source in sources.items()
        for suffix, meaning, secret in env_suffixes(source)
    ]


def fingerprint(secret: str) -> str:
    """A short, non-reversible tag for a secret, the most any log line shows of one."""
    return hashlib.sha256(secret.encode()).hexdigest()[:8]


def fetches_tokens(source: SchemeSource) -> bool:
    """Whether a source's credential comes from an authorization server (token exchange,
    OAuth2 client credentials): only then are ``upstream_tokens`` and ``token_endpoint``
    needed."""
    return source.source == "tokenExchange" or (
        source.source == "env" and bool(source.spec.get("tokenUrl"))  # (OAuth2's)
    )


def env_name(scheme: str) -> str:
    """A scheme's name as part of an environment variable name (``api-key`` -> ``API_KEY``):
    the build names each scheme's variable with it (``credentialEnv``), and so does a
    server whose spec does not."""
    return re.sub("[^A-Za-z0-9]", "_", scheme).upper()


def requirement_scopes(scopes: Sequence[str]) -> str | None:
    """An operation's required scopes as one ``scope`` value (sorted, no duplicates)."""
    return " ".join(sorted(set(scopes))) or None


def missing(
    source: SchemeSource,
    base: str,
    env: Callable[[str], str | None],
    caller_token: str | None,
    inbound: Mapping[str, str] | None,
) -> str | None:
    """Why a source's credential cannot be had right now (None: it can be tried).

    ``base``: the scheme's variable name; ``env(suffix)`` reads ``base + suffix``;
    ``caller_token``: the verified caller's own token (None for a local caller).
    """
    name, kind = source.scheme, source.spec.get("type")
    if source.source == "tokenExchange":
        if not caller_token:
            return (
                f"{name} needs the caller's own access token to exchange "
                "(this caller is not authenticated, or is local)"
            )
        if env("_CLIENT_ID") is None or env("_CLIENT_SECRET") is None:
            return f"set {base}_CLIENT_ID and {base}_CLIENT_SECRET (token exchange)"
        return None
    if source.source == "header":
        assert source.header is not None
        if not header_values(inbound, source.header):
            return f"send the {source.header} header ({name})"
        return None
    if kind == "http" and source.spec.get("scheme") == "basic":
        if env("_USERNAME") is None or env("_PASSWORD") is None:
            return f"set {base}_USERNAME and {base}_PASSWORD"
        return None
    if kind == "oauth2" and source.spec.get("tokenUrl"):
        if env("_CLIENT_ID") is None or env("_CLIENT_SECRET") is None:
            return f"set {base}_CLIENT_ID and {base}_CLIENT_SECRET"
        return None
    if kind in ("oauth2", "openIdConnect") and env("") is None:  # no client-credentials flow
        return f"set {base} to an access token for {name} (its flows give the server none)"
    if kind in ("apiKey", "http", "oauth2", "openIdConnect"):
        return None if env("") is not None else f"set {base}"
    return f"{name}: security scheme type {kind!r} has no environment source"
