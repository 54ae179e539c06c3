"""The tool of an imported operation (or of its override, or of a mode's own tool): checked
against the full schemas where tools/list advertises compact ones (``_spec.json`` ``full``);
a result the wrapped API answered that its output schema refuses is passed on, logged once
(the user's override's is a tool error, as any handler's). And the read behind an imported
resource (``resource_read``). Carried with a wrapped API."""

from __future__ import annotations

import base64
import importlib.util
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from itertools import islice
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from . import answers
from .content import ResourceReturn, ToolReturn
from .context import Context
from .errors import REDACTED
from .tools import Arguments, ToolBinding, ToolCall, plain
from .wire import as_list

if TYPE_CHECKING:
    from .upstream import Upstream

logger = logging.getLogger("mcp_server")


@dataclass
class OperationBinding(ToolBinding):
    full_schemas: Mapping[str, Any] | None = None
    strict_output: bool = False  # the user's override answers: a tool error (``checked``)
    warned: bool = False

    @property
    def input_schema(self) -> Any:
        return (self.full_schemas or {}).get("inputSchema", self.definition.get("inputSchema"))

    @property
    def output_schema(self) -> Any:
        return (self.full_schemas or {}).get("outputSchema", self.definition.get("outputSchema"))

    def checked(self, result: types.CallToolResult) -> types.CallToolResult:
        if self.strict_output:
            return super().checked(result)
        problems = self.result_errors(result)
        if problems and not self.warned:
            self.warned = True
            logger.warning(
                "tool %s: the API answered data its output schema refuses (passed on): %s",
                self.name,
                "; ".join(problems[:3]),
            )
        return result


def operation(
    spec: Mapping[str, Any], entry: Mapping[str, Any], call: ToolCall | None, upstream: Any
) -> tuple[Callable[..., ToolBinding], ToolCall]:
    """How ``server.tool_bindings`` binds an imported operation: the user's override
    (``call``, whose results are checked strictly) or the wrapped API's call."""
    full = entry.get("full")
    secret = frozenset(p["argument"] for p in entry["http"]["params"] if p.get("secret"))
    make = partial(
        OperationBinding, full_schemas=full, strict_output=call is not None, secret=secret
    )
    if call is None:  # listed tools' results are checked by clients against their output schema
        listed = entry["definition"] if spec.get("mode", "tools") == "tools" else None
        call = tool_call(upstream, entry["http"], entry["ident"], listed)
    return make, call


def tool_call(
    upstream: Upstream, operation: dict[str, Any], ident: str, definition: Any = None
) -> ToolCall:
    """The call behind one imported tool: the user's override if one exists, else HTTP.
    ``definition``: the tool's as listed (clients check results with its output schema)."""
    output_schema = (definition or {}).get("outputSchema")
    override: list[Callable[..., Any] | None] = []
    checker: list[Any] = []

    async def call(given: Arguments, ctx: Context) -> ToolReturn:
        arguments = plain(given)
        if not override:
            override.append(_find_override(upstream.package, ident))
        handler = override[0]
        if handler is not None:
            result: ToolReturn = await handler(arguments, ctx)
            return result
        if output_schema is not None and not checker:
            from .schemas import validator

            checker.append(validator(output_schema))
        return await upstream.call(operation, arguments, ctx, checker[0] if checker else None)

    return call


def resource_read(
    upstream: Upstream, operation: dict[str, Any], schema: dict[str, Any] | None
) -> Callable[[dict[str, str], Context], Any]:
    """The read behind an imported resource: the template's variables, checked against
    the operation's parameter schemas, are the call's arguments."""
    validator: Any = None
    if schema is not None:
        from .schemas import validator as schema_validator

        validator = schema_validator(schema, formats=True)
    secret = {p["argument"] for p in operation["params"] if p.get("secret")}

    async def read(variables: dict[str, str], ctx: Context) -> ResourceReturn:
        # template variable names are percent-encoded where RFC 6570 needs it; the
        # values come as written (a list splits on its literal commas, then decodes)
        given = (schema or {}).get("properties", {})  # typed as their parameters are
        arguments = {
            unquote(k): _typed(v, given.get(unquote(k)), schema) for k, v in variables.items()
        }
        if validator is not None:
            errors = [  # (not all; a secret argument's value, which jsonschema quotes, not shown)
                (
                    e.message.replace(repr(e.instance), REDACTED, 1)
                    if e.path and e.path[0] in secret
                    else e.message
                )
                for e in islice(validator.iter_errors(arguments), 5)
            ]
            if errors:
                raise MCPError(INVALID_PARAMS, "Invalid resource URI: " + "; ".join(errors))
        result = await upstream.call(operation, arguments, ctx)
        if result.is_error:
            raise answers.failure(result)
        if result.structured_content is not None:
            return json.dumps(result.structured_content, ensure_ascii=False)
        first = result.content[0] if result.content else None
        if isinstance(first, types.TextContent):
            return first.text
        if isinstance(first, types.ImageContent | types.AudioContent):
            return base64.b64decode(first.data)
        if isinstance(first, types.EmbeddedResource) and isinstance(
            first.resource, types.BlobResourceContents
        ):
            return base64.b64decode(first.resource.blob)
        return ""

    return read


def _typed(text: str, schema: Any, root: Any) -> Any:
    """``text`` (percent-encoded) as a type ``schema`` allows: its ``type`` (a list when
    nullable), its ``anyOf``/``oneOf`` members' and, for a ``$defs`` reference, the
    definition's. A list splits on the commas written, each item decoded after."""
    ref = schema.get("$ref", "") if isinstance(schema, dict) else ""
    schema = root.get("$defs", {}).get(ref.rpartition("/")[2], schema) if ref else schema
    if not isinstance(schema, dict):
        return unquote(text)
    members = [schema, *schema.get("anyOf", []), *schema.get("oneOf", [])]
    kinds = [k for m in members if isinstance(m, dict) for k in as_list(m.get("type"))]
    if "array" in kinds:
        return [_typed(v, schema.get("items", {}), root) for v in text.split(",") if v]
    text = unquote(text)
    for kind, cast in (("integer", int), ("number", float)):
        if kind in kinds:
            try:
                return cast(text)
            except ValueError:
                pass  # the schema check says what is wrong
    return text == "true" if "boolean" in kinds and text in ("true", "false") else text


def _find_override(package: str, ident: str) -> Callable[..., Any] | None:
    """``handlers/tools/<ident>.py`` with ``async def handle(args, ctx)``, if the user wrote one."""
    name = f"{package}.handlers.tools.{ident}"
    try:
        if importlib.util.find_spec(name) is None:
            return None
    except ModuleNotFoundError:
        return None
    handle = importlib.import_module(name).handle

    async def call(arguments: dict[str, Any], ctx: Context) -> Any:
        return await handle(arguments, ctx)

    return call
