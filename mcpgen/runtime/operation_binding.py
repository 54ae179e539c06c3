"""The tool of an imported operation (or of its override, or of a mode's own tool): checked
against the full schemas where tools/list advertises compact ones (``_spec.json`` ``full``);
a result the wrapped API answered that its output schema refuses is passed on, logged once
(the user's override's is a tool error, as any handler's). Carried with a wrapped API."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import mcp_types as types

from .tools import ToolBinding, ToolCall

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
    make = partial(OperationBinding, full_schemas=full, strict_output=call is not None)
    if call is None:  # listed tools' results are checked by clients against their output schema
        listed = entry["definition"] if spec.get("mode", "tools") == "tools" else None
        call = upstream.tool_call(entry["http"], entry["ident"], listed)
    return make, call
