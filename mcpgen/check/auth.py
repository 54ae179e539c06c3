"""The server's own authentication and exposure checked: what an HTTP server bound beyond
this machine needs, and settings that only one auth type reads."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from mcpgen.check.view import entries
from mcpgen.model.settings import OFFERED_TRANSPORTS
from mcpgen.runtime.credential_config import safe_url  # https, or http to this machine
from mcpgen.runtime.settings import LOCAL_HOSTS, TRANSPORTS  # the server's own

if TYPE_CHECKING:
    from mcpgen.check.semantics import Checker

ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an RFC 9110 token
# the auth settings only type oauth reads (a warning with any other type)
OAUTH = ("issuer", "audience", "jwksUrl", "jwksFile", "introspectionUrl", "algorithms", "leeway")


def check_auth(checker: Checker) -> None:
    check_transports(checker)
    auth, transports = checker.data["auth"], checker.data["transports"]
    kind = auth.get("type", "none")
    http = transports.get("http", {})
    host = http.get("host", "127.0.0.1")
    if kind == "none" and host not in LOCAL_HOSTS:
        checker.warn(
            ("transports", "http", "host"),
            f"HTTP bound to {host!r} without authentication; only localhost is safe without auth",
        )
    if host not in LOCAL_HOSTS and "allowedHosts" not in http:
        checker.warn(
            ("transports", "http", "host"),
            f"HTTP bound to {host!r} without transports.http.allowedHosts: Host header "
            "checks (DNS-rebinding protection) stay off until allowed hosts are set",
        )
    if kind != "none" and transports.get("offer", OFFERED_TRANSPORTS) == ["stdio"]:
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
    else:
        for key in OAUTH:
            if key in auth:
                checker.warn(("auth", key), f"{key!r} is used only with auth type oauth")
        if auth.get("hideUnauthorizedTools"):
            checker.warn(
                ("auth", "hideUnauthorizedTools"),
                "only oauth tokens carry scopes: with other auth types every tool is listed",
            )
        scoped = [i for i, tool in entries(checker.data["tools"]) if tool.get("scopes")]
        if scoped:
            checker.warn(
                ("tools", scoped[0], "scopes"),
                "scopes are enforced only with auth type oauth"
                + ("" if kind == "none" else f" ({kind} keys grant every scope)"),
            )
    if auth.get("hideUnauthorizedTools") and (
        checker.data.get("observability", {}).get("metrics") == "public"
    ):
        checker.warn(
            ("observability", "metrics"),
            "public GET /metrics names in its labels the tools and prompts that "
            "hideUnauthorizedTools hides, to anyone who reaches the port",
        )
    cors = http.get("corsOrigins", [])
    if "*" in cors and kind == "none":
        checker.warn(
            ("transports", "http", "corsOrigins"),
            "'*' lets any web page call this unauthenticated server from a browser",
        )


def check_transports(checker: Checker) -> None:
    """The default transport is one the server offers (the package carries only those)."""
    transports = checker.data["transports"]
    offer = transports.get("offer", OFFERED_TRANSPORTS)
    default = transports.get("default", "stdio")
    known = set(TRANSPORTS)  # anything else is the structural check's to report
    if (
        default in known
        and isinstance(offer, list | tuple)
        and offer
        and set(offer) <= known
        and default not in offer
    ):
        where = ("transports", "default") if "default" in transports else ("transports",)
        offered = ", ".join(map(str, offer))
        checker.error(
            where,
            f"the default transport {default!r} is not offered: add it to transports.offer "
            f"({offered}), or set transports.default to one of those",
        )
