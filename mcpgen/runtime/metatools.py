"""Search mode: three tools (search, describe, call) in place of one tool per operation.

Every operation stays reachable, but only through ``call_operation``, which goes through
the tool table's dispatch: the caller's scopes, argument validation and timeouts apply
exactly as for a direct call. Search and describe show only what the caller may call.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import mcp_types as types

from .content import structured
from .context import Context
from .errors import Forbidden, ToolError
from .tools import Arguments, ToolBinding, ToolTable, UnknownTool, plain

Json = Any
SEARCH = "search_operations"
DESCRIBE = "describe_operation"
CALL = "call_operation"
META_TOOLS: list[dict[str, Json]] = json.loads(
    resources.files(__package__ or __name__).joinpath("modes.json").read_text("utf-8")
)["search"]


class Operations:
    """The operations reachable through the meta tools, filtered by the caller's scopes."""

    def __init__(self, spec: dict[str, Json], table: ToolTable) -> None:
        self.table = table
        self.entries = {
            e["definition"]["name"]: e for e in spec["tools"] if e.get("http") is not None
        }
        from .search import SearchIndex, documents

        self.index = SearchIndex(documents(spec))

    def allowed(self, context: Context, name: str) -> bool:
        policy = self.table.policy
        return (
            name in self.entries
            and name not in self.table.hidden
            and (policy.visible(context.identity, "tool", name))
        )

    async def search(self, given: Arguments, context: Context) -> types.CallToolResult:
        arguments = plain(given)
        limit = int(arguments.get("limit", 10))
        hits = self.index.search(
            str(arguments["query"]), limit, allowed=lambda name: self.allowed(context, name)
        )
        found = [
            {
                "name": hit.name,
                "title": self.entries[hit.name]["definition"].get("title"),
                "summary": hit.summary,
                "matched": hit.why,
            }
            for hit in hits
        ]
        return structured({"operations": found})

    async def describe(self, given: Arguments, context: Context) -> types.CallToolResult:
        name = str(plain(given)["name"])
        if not self.allowed(context, name):
            raise ToolError(f"no operation named {name!r}; use {SEARCH}")
        return structured(json.loads(json.dumps(self.entries[name]["definition"])))

    async def call(
        self, given: Arguments, context: Context
    ) -> types.CallToolResult | types.InputRequiredResult:
        arguments = plain(given)
        name = str(arguments["name"])
        if name not in self.entries:
            raise ToolError(f"no operation named {name!r}; use {SEARCH}")
        inner = arguments.get("arguments") or {}
        if not isinstance(inner, dict):
            raise ToolError("arguments must be an object")
        try:
            return await self.table.dispatch(name, inner, context)
        except UnknownTool:
            raise ToolError(f"no operation named {name!r}; use {SEARCH}") from None
        except Forbidden as exc:
            if self.table.policy.hide_unauthorized:
                raise ToolError(f"no operation named {name!r}; use {SEARCH}") from None
            raise ToolError(str(exc)) from None


def install(mode: str, spec: dict[str, Json], table: ToolTable) -> set[str]:
    """Add the mode's own tools to ``table``; their names."""
    if mode == "code":
        from .codemode import install as install_code

        return install_code(spec, table)
    operations = Operations(spec, table)
    calls = {SEARCH: operations.search, DESCRIBE: operations.describe, CALL: operations.call}
    for definition in META_TOOLS:
        binding = ToolBinding(definition, calls[definition["name"]])
        table.by_name[binding.name] = binding
        table.order.append(binding.name)
    return set(calls)
