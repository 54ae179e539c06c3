"""The exceptions handlers raise and the runtime answers with, and what stands for a secret
wherever one is shown (``REDACTED``, ``redact_query``: URLs in logs, spans, errors)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import unquote

if TYPE_CHECKING:  # mcpgen's own commands import this module, which must not need the SDK
    from mcp.shared.exceptions import MCPError

FORBIDDEN = -32003  # JSON-RPC error code (server range): the caller lacks a scope
# What stands for a secret wherever one is shown (URLs, logs, spans, error messages).
REDACTED = "REDACTED"
ECHOED = 100  # characters of what a caller sent that an error repeats (then its length)


def echoed(text: str, length: int | None = None) -> str:
    """What a caller sent (an unknown name or URI, an invalid value's ``repr``) as an error
    repeats it: a long one by its first ECHOED characters and its length (``length``: the
    value's own, not its ``repr``'s; a 2 MB name was answered twice over, a 4 MB value whole)."""
    if len(text) <= ECHOED:
        return text
    return f"{text[:ECHOED]}... ({len(text) if length is None else length} characters)"


class ToolError(Exception):
    """Raise in a handler to answer with an error the model can read (a tool error for
    tools, a JSON-RPC error for resources and prompts) carrying this message."""


class ResourceNotFound(Exception):
    """Raise in a resource handler when the requested resource does not exist."""


class ConfigError(Exception):
    """A setting that cannot work; the message says which one and how to fix it."""


class Forbidden(Exception):
    """The caller lacks a scope the tool, resource or prompt needs."""

    def __init__(self, kind: str, name: str, required: tuple[str, ...], missing: list[str]):
        super().__init__(f"Forbidden: {kind} {name!r} needs scope(s) {' '.join(missing)}")
        self.kind, self.name, self.required, self.missing = kind, name, required, missing

    def error(self, message: str = "") -> MCPError:
        """The JSON-RPC error a refused request gets: -32003 with the scopes it lacks."""
        from mcp.shared.exceptions import MCPError

        data = {"requiredScopes": list(self.required), "missingScopes": self.missing}
        return MCPError(FORBIDDEN, message or str(self), data=data)


class InvalidArguments(Exception):
    """The arguments of a call do not match what the tool (or prompt) declares."""

    def __init__(self, name: str, problems: list[str]) -> None:
        super().__init__(f"Invalid arguments for {name!r}: " + "; ".join(problems))
        self.problems = problems


def not_found(uri: str, why: str = "") -> MCPError:
    """-32602 (what SDK 2.3 and the conformance suite expect for an unknown resource);
    ``why``: the handler's own words, kept after the standard message."""
    from mcp.shared.exceptions import MCPError
    from mcp_types import INVALID_PARAMS

    shown = echoed(uri)
    message = f"Resource not found: {shown}" + (f": {why}" if why else "")
    return MCPError(INVALID_PARAMS, message, data={"uri": shown})


class AuthError(Exception):
    """A credential was refused (status 401), or could not be checked (503)."""

    def __init__(self, description: str, status: int = 401) -> None:
        super().__init__(description)
        self.description = description
        self.status = status


# Query parameters that may carry a credential (a token sent as ?access_token= is refused,
# but the access log would still record it): their values are left out of access logs.
_SECRET_WORD = re.compile(
    r"(?i)token|key|secret|password|passwd|auth|credential|signature|sig|code"
)
# A parameter's name from its "?" or "&" to its "=" (or the run without one, consumed whole:
# the path is read once, not again from each "?" of ``?????...``, a client's request line).
_NAME = re.compile(r"[?&][^=&#]*=?")
_VALUE_END = re.compile(r"[&#]")


def redact_query(path: str) -> str:
    """``path`` (with its query string) with the values of credential-like parameters
    replaced, in time linear in its length."""
    if "?" not in path:
        return path
    parts, at = [], 0
    for name in _NAME.finditer(path):
        if name.start() < at or name.group()[-1] != "=":
            continue  # (a name inside a value just left out is not looked at)
        if not _SECRET_WORD.search(unquote(name.group())):  # as a server reads it: %74oken
            continue
        end = _VALUE_END.search(path, name.end())
        parts += [path[at : name.end()], REDACTED]
        at = end.start() if end else len(path)
    return "".join(parts) + path[at:]
