"""``openapi.credentials`` checked at build time, against the imported document and the
server's own authentication, each problem located at the scheme's entry in the manifest.

The rules are the runtime's own (``mcpgen.runtime.credential_config``, the same code the
server runs when it starts), so what the build accepts the server accepts. On top of them:
every named scheme must be a security scheme of the document, and token exchange is
pointless without verified inbound tokens (auth type oauth).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpgen.check.structure import did_you_mean
from mcpgen.load import JsonPath
from mcpgen.model.settings import auth_header
from mcpgen.runtime.credential_config import CredentialConfigError, forbidden_headers, parse_source

if TYPE_CHECKING:
    from mcpgen.check.semantics import Checker

SECTION: JsonPath = ("openapi", "credentials")
AUTH_TYPES = ("apiKey", "bearer", "oauth")


def check_credentials(checker: Checker) -> None:
    """Every entry of ``openapi.credentials`` (malformed ones were reported by the
    structural check and are left out: ``checker.broken`` holds their paths)."""
    options = checker.data.get("openapi")
    if not isinstance(options, dict) or SECTION in checker.broken:
        return
    config = options.get("credentials")
    imported = checker.doc.imported
    upstream = imported.upstream if imported is not None else None
    if not isinstance(config, dict) or not config or not isinstance(upstream, dict):
        return  # nothing configured, or the document did not import (already reported)
    schemes: dict[str, Any] = upstream.get("securitySchemes") or {}
    source = str(options.get("source", "the OpenAPI document"))
    auth = checker.data.get("auth", {})
    kind = auth.get("type", "none")
    # the header this server's own callers authenticate with (none without auth)
    forbidden = forbidden_headers(auth_header(auth) if kind in AUTH_TYPES else None)
    for name, entry in config.items():
        where: JsonPath = (*SECTION, name)
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
            checker.warn(
                (*where, "from"),
                f"token exchange needs each caller's verified access token, which only auth "
                f"type oauth gives (auth type here: {kind!r}): every call that needs {name!r} "
                "fails, and on stdio too",
            )
