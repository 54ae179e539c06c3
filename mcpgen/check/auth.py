"""The server's own authentication and exposure checked, and ``openapi.credentials`` (the
upstream API's) against the imported document and the server's authentication."""

from __future__ import annotations

import re
from dataclasses import fields
from typing import Any

from mcpgen.check.checker import Checker
from mcpgen.check.structure import did_you_mean, entries
from mcpgen.identifiers import env_base
from mcpgen.load import JsonPath
from mcpgen.model.settings import OFFERED_TRANSPORTS, auth_header
from mcpgen.runtime.credential_config import (  # safe_url: https, or http to this machine
    CredentialConfigError,
    forbidden_headers,
    parse_source,
    parse_sources,
    safe_url,
    variables,
)
from mcpgen.runtime.settings import LOCAL_HOSTS, OWN_PATHS, TRANSPORTS, Settings, own_route

ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an RFC 9110 token
# the auth settings only type oauth reads (a warning with any other type)
OAUTH = ("issuer", "audience", "jwksUrl", "jwksFile", "introspectionUrl", "algorithms", "leeway")
CREDENTIALS: JsonPath = ("openapi", "credentials")
AUTH_TYPES = ("apiKey", "bearer", "oauth")


def check_auth(checker: Checker) -> None:
    auth, transports = checker.data["auth"], checker.data["transports"]
    # the default transport is one the server offers (an unknown one: the structural check's)
    offer = transports.get("offer", OFFERED_TRANSPORTS)
    default = transports.get("default", "stdio")
    known = isinstance(offer, list | tuple) and {default, *offer} <= set(TRANSPORTS)
    if known and offer and default not in offer:
        checker.error(
            ("transports", "default") if "default" in transports else ("transports",),
            f"the default transport {default!r} is not offered: add it to transports.offer "
            f"({', '.join(map(str, offer))}), or set transports.default to one of those",
        )
    kind = auth.get("type", "none")
    http = transports.get("http", {})
    host = http.get("host", "127.0.0.1")
    if kind == "none" and host not in LOCAL_HOSTS:
        checker.warn(
            ("transports", "http", "host"),
            f"HTTP bound to {host!r} without authentication; only localhost is safe without auth",
        )
    if own_route(http.get("path", "/mcp")):
        checker.error(
            ("transports", "http", "path"),
            f"{http['path']!r} is a route of the server's own ({', '.join(OWN_PATHS)}): "
            "the MCP endpoint goes at another path",
        )
    if host not in LOCAL_HOSTS and "allowedHosts" not in http:
        checker.warn(
            ("transports", "http", "host"),
            f"HTTP bound to {host!r} without transports.http.allowedHosts: Host header "
            "checks (DNS-rebinding protection) stay off until allowed hosts are set",
        )
    if kind != "none" and offer == ["stdio"]:
        checker.warn(
            ("auth", "type") if "type" in auth else ("auth",),
            "auth is checked on network transports only, and this server offers only stdio "
            "(whose caller is the local user, with every scope): add a network transport to "
            "transports.offer, or drop auth",
        )
    if "env" in auth and not ENV_NAME.fullmatch(auth["env"]):
        checker.error(("auth", "env"), f"{auth['env']!r} is not an environment variable name")
    if "header" in auth and not HEADER_NAME.fullmatch(auth["header"]):
        checker.error(("auth", "header"), f"{auth['header']!r} is not an HTTP header name")
    if kind == "oauth":
        for key in ("issuer", "audience"):
            if key not in auth:
                checker.error(("auth",), f"oauth needs {key!r}")
        if not {"jwksUrl", "jwksFile", "introspectionUrl"} & set(auth):
            checker.error(
                ("auth",),
                "oauth needs 'jwksUrl' or 'jwksFile' (to check JWT signatures) or "
                "'introspectionUrl' (to ask the authorization server about opaque tokens)",
            )
        for key in ("issuer", "jwksUrl", "introspectionUrl"):
            url = auth.get(key)
            if isinstance(url, str) and not safe_url(url):
                checker.error(
                    ("auth", key), f"{key} must be an https URL (http only for localhost)"
                )
        if "env" in auth:
            checker.warn(("auth", "env"), "oauth reads no static keys: 'env' is ignored")
        if auth.get("hideUnauthorizedTools") and (
            checker.data["observability"].get("metrics") == "public"
        ):
            checker.warn(
                ("observability", "metrics"),
                "public GET /metrics names in its labels the tools and prompts that "
                "hideUnauthorizedTools hides, to anyone who reaches the port",
            )
    else:
        for key in OAUTH:
            if key in auth:
                checker.warn(("auth", key), f"{key!r} is used only with auth type oauth")
        if auth.get("hideUnauthorizedTools"):
            checker.warn(
                ("auth", "hideUnauthorizedTools"),
                "only oauth tokens carry scopes: with other auth types every tool is listed",
            )
        if scoped := [i for i, tool in entries(checker.data["tools"]) if tool.get("scopes")]:
            checker.warn(
                ("tools", scoped[0], "scopes"),
                "scopes are enforced only with auth type oauth"
                + ("" if kind == "none" else f" ({kind} keys grant every scope)"),
            )
    if "*" in http.get("corsOrigins", []) and kind == "none":
        checker.warn(
            ("transports", "http", "corsOrigins"),
            "'*' lets any web page call this unauthenticated server from a browser",
        )


def check_credentials(checker: Checker) -> None:
    """Each well-formed ``openapi.credentials`` entry checked by the server's own rules
    (``mcpgen.runtime.credential_config``) and against the imported security schemes."""
    options = checker.data.get("openapi")
    if not isinstance(options, dict) or CREDENTIALS in checker.broken:
        return
    config = options.get("credentials")
    upstream = checker.doc.imported.upstream if checker.doc.imported else None
    if not isinstance(upstream, dict):
        return  # the document did not import (already reported)
    check_variables(checker, upstream)
    if not isinstance(config, dict) or not config:
        return
    schemes: dict[str, Any] = upstream.get("securitySchemes") or {}
    source = str(options.get("source", "the OpenAPI document"))
    auth = checker.data.get("auth", {})
    kind = auth.get("type", "none")
    # the header this server's own callers authenticate with (none without auth)
    forbidden = forbidden_headers(auth_header(auth) if kind in AUTH_TYPES else None)
    for name, entry in config.items():
        where: JsonPath = (*CREDENTIALS, name)
        if where in checker.broken:
            continue
        if name not in schemes:
            known = ", ".join(sorted(schemes)) or "none"
            checker.error(
                where,
                f"{source} has no security scheme {name!r}{did_you_mean(name, schemes)}; "
                f"its schemes: {known}",
                key=True,
            )
            continue
        try:
            parsed = parse_source(name, schemes[name], entry, forbidden)
        except CredentialConfigError as exc:
            at = (*where, exc.option) if exc.option and exc.option in entry else where
            checker.error(at, exc.reason)
            continue
        if parsed.source == "tokenExchange" and kind != "oauth":
            leaks = kind in AUTH_TYPES  # a static key is no token of the AS: never sent to it
            (checker.error if leaks else checker.warn)(
                (*where, "from"),
                f"token exchange needs each caller's verified access token, which only auth "
                f"type oauth gives (auth type here: {kind!r}): "
                + (
                    "the callers' static keys would be sent to the token endpoint"
                    if leaks
                    else f"every call that needs {name!r} fails, and on stdio too"
                ),
            )


def check_variables(checker: Checker, upstream: dict[str, Any]) -> None:
    """``openapi.baseUrlEnv`` and ``auth.env`` name no variable the wrapped API's security
    schemes read: one value would serve both."""
    try:  # (a configuration it refuses is check_credentials' error)
        sources = parse_sources(upstream["securitySchemes"], upstream["credentials"], None)
    except CredentialConfigError:
        return
    # each variable a scheme reads: who reads it
    readers = {
        name: f"security scheme {scheme!r} of the wrapped API"
        for name, scheme, *_ in variables(sources, upstream["credentialEnv"].__getitem__)
    }
    auth, prefix = checker.data["auth"], env_base(checker.data["server"]["name"]) + "_"
    keys = auth.get("env", prefix + "TOKENS") if auth.get("type") in ("apiKey", "bearer") else ""
    # the server's own settings and keys: never the wrapped API's base URL either
    mine = {prefix + s.name.upper(): "this server" for s in fields(Settings)[1:]}
    mine |= {f"{prefix}INTROSPECTION_CLIENT_{k}": "this server" for k in ("ID", "SECRET")}
    mine |= {keys: "this server (its callers' keys, auth.env)", **readers}
    base: JsonPath = ("openapi", "baseUrlEnv")
    for where, variable, known in (
        (base, upstream["baseUrlEnv"], mine),
        (("auth", "env") if "env" in auth else ("auth",), keys, readers),
    ):
        if variable in known:
            checker.error(
                where,
                f"{known[variable]} reads {variable} too: one value would serve both; "
                "choose another variable",
            )
