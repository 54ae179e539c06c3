"""Search and code mode: the operations of a wrapped API reached through a few tools
instead of one tool each.

* ``search``: ``search_operations`` (ranked, says why each matched), ``describe_operation``
  and ``call_operation``;
* ``code``: ``search_docs`` and ``execute`` (model-written Python in a sandbox, where every
  operation is a function; ``codemode``).

Every operation stays reachable only through the tool table's dispatch (scopes, argument
validation, timeouts exactly as for a direct call), and search, describe and the sandbox
see only what the caller may call.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from importlib import resources
from typing import Any

import mcp_types as types

from . import telemetry
from .content import structured, tool_error
from .context import Context
from .errors import Forbidden, ToolError
from .operation_binding import OperationBinding
from .tools import Arguments, ToolTable, UnknownTool, plain

Json = Any


@cache
def _modes() -> dict[str, list[dict[str, Json]]]:
    text = resources.files(__package__ or __name__).joinpath("modes.json").read_text("utf-8")
    data: dict[str, list[dict[str, Json]]] = json.loads(text)
    return data


def _index_data(spec: dict[str, Json]) -> dict[str, Json] | None:
    """The search index the generator computed (``_search.json`` beside ``_spec.json``), or
    None (the index is then built at start; also when the data was made for other
    operations, which ``SearchIndex`` sees from its fingerprint)."""
    package = (spec.get("server") or {}).get("package")
    if not package:
        return None
    try:
        text = resources.files(package).joinpath("_search.json").read_text("utf-8")
        data = json.loads(text)
    except (OSError, ValueError, ModuleNotFoundError, TypeError):
        return None
    return data if isinstance(data, dict) else None


def mode_tools(mode: str) -> list[dict[str, Json]]:
    """The definitions of a mode's own tools (a copy)."""
    copied: list[dict[str, Json]] = json.loads(json.dumps(_modes().get(mode, [])))
    return copied


class Operations:
    """The operations reachable through a mode's tools, filtered by the caller's scopes."""

    def __init__(self, spec: dict[str, Json], table: ToolTable) -> None:
        from .search import SearchIndex, docs_from_spec

        self.table = table
        self.entries = {
            e["definition"]["name"]: e for e in spec["tools"] if e.get("http") is not None
        }
        self.index = SearchIndex(docs_from_spec(spec), data=_index_data(spec))

    def allowed(self, context: Context, name: str) -> bool:
        return (
            name in self.entries
            and name not in self.table.hidden
            and self.table.policy.visible(context.identity, "tool", name)
        )

    def permitted(self, context: Context, name: str) -> bool:
        """Whether the caller holds the operation's scopes: in code mode, what ``search_docs``
        shows and what ``execute`` may call, whether or not tools/list hides anything."""
        return (
            name in self.entries
            and name not in self.table.hidden
            and self.table.policy.allowed(context.identity, "tool", name)
        )

    def known(self, context: Context, name: str) -> bool:
        """Whether the operation exists for this caller: a hidden one (``hideUnauthorizedTools``
        and a caller without its scopes) is as unknown as a name that was never there."""
        if name not in self.entries or name in self.table.hidden:
            return False
        return not self.table.policy.hide_unauthorized or self.permitted(context, name)

    def unknown(self, name: str) -> ToolError:
        return ToolError(f"no operation named {name[:100]!r}; search for one first")

    async def dispatch(
        self, name: str, arguments: dict[str, Json], context: Context
    ) -> types.CallToolResult | types.InputRequiredResult:
        """One operation through the table's dispatch; unknown and forbidden ones answer
        as tool errors (a forbidden one names the missing scope, so a client can ask for it)."""
        if name not in self.entries:
            raise self.unknown(name)
        observed = telemetry.ACTIVE
        if observed is not None and observed.tracing:
            from .telemetry_spans import operation_span

            result: types.CallToolResult | types.InputRequiredResult = await operation_span(
                observed.tracer, name, lambda: self._dispatch(name, arguments, context)
            )
            return result
        return await self._dispatch(name, arguments, context)

    async def _dispatch(
        self, name: str, arguments: dict[str, Json], context: Context
    ) -> types.CallToolResult | types.InputRequiredResult:
        try:
            return await self.table.dispatch(name, arguments, context)
        except UnknownTool:
            raise self.unknown(name) from None
        except Forbidden as exc:  # named, as a direct call's 403 names it (step-up auth)
            if self.table.policy.hide_unauthorized:  # ... unless discovery hides it
                raise self.unknown(name) from None
            raise ToolError(str(exc)) from None

    # -- search mode ----------------------------------------------------------------------

    async def search(self, given: Arguments, context: Context) -> types.CallToolResult:
        from .code_docs import search_operations

        arguments = plain(given)
        limit = int(arguments.get("limit", 10))
        return search_operations(
            self.index, str(arguments["query"]), limit, lambda n: self.allowed(context, n)
        )

    async def describe(self, given: Arguments, context: Context) -> types.CallToolResult:
        name = str(plain(given)["name"])
        if not self.allowed(context, name):
            raise self.unknown(name)
        entry = self.entries[name]
        full = entry.get("full") or {}
        shown = {  # the whole texts and arguments; the result's shape as tools/list has it
            **entry["definition"],
            **{k: full[k] for k in ("title", "description", "inputSchema") if k in full},
        }
        return structured(json.loads(json.dumps(shown)))

    async def call(
        self, given: Arguments, context: Context
    ) -> types.CallToolResult | types.InputRequiredResult:
        arguments = plain(given)
        inner = arguments.get("arguments") or {}
        if not isinstance(inner, dict):
            raise ToolError("arguments must be an object")
        return await self.dispatch(str(arguments["name"]), inner, context)


def install(mode: str, spec: dict[str, Json], table: ToolTable) -> Callable[[Any], list[str]]:
    """Add the mode's own tools to ``table``; what tools/list then shows a caller: what
    ``table`` shows but the operations, reached through the mode's tools."""
    operations = Operations(spec, table)
    if mode == "code":
        calls = _code_mode(spec, operations)
    else:
        calls = {
            "search_operations": operations.search,
            "describe_operation": operations.describe,
            "call_operation": operations.call,
        }
    for definition in mode_tools(mode):
        binding = OperationBinding(definition, calls[definition["name"]])
        table.by_name[binding.name] = binding
        table.order.append(binding.name)
    wrapped = {e["definition"]["name"] for e in spec["tools"] if e.get("http") is not None}

    def listed(identity: Any) -> list[str]:
        return [n for n in table.visible(identity) if n not in wrapped]

    return listed


def _code_mode(spec: dict[str, Json], operations: Operations) -> dict[str, Any]:
    from dataclasses import fields

    from .codemode import CodeMode, Limits

    given = spec.get("codeMode") or {}
    limits = Limits(**{f.name: given[f.name] for f in fields(Limits) if f.name in given})

    async def run(name: str, arguments: dict[str, Json], ctx: Any) -> types.CallToolResult:
        try:
            result = await operations.dispatch(name, arguments, ctx)
        except ToolError as exc:
            return tool_error(str(exc))
        if isinstance(result, types.InputRequiredResult):
            return tool_error(f"operation {name!r} asks the user for input, which code cannot do")
        return result

    code = CodeMode(operations.index, run, limits)

    async def search_docs(given: Arguments, context: Context) -> types.CallToolResult:
        arguments = plain(given)
        allowed = lambda n: operations.permitted(context, n)  # noqa: E731
        query, limit = str(arguments["query"]), int(arguments.get("limit", 8))
        # typed here: a package in search mode does not carry codemode (mypy sees Any)
        found: types.CallToolResult = await code.search_docs(query, limit, allowed)
        return found

    async def execute(given: Arguments, context: Context) -> types.CallToolResult:
        allowed = lambda n: operations.permitted(context, n)  # noqa: E731
        known = lambda n: operations.known(context, n)  # noqa: E731
        result: types.CallToolResult = await code.execute(
            str(plain(given)["code"]), context, allowed, known
        )
        return result

    return {"search_docs": search_docs, "execute": execute}
