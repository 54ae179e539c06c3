"""Completions for prompt arguments and URI template variables."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.server import ServerRequestContext

CompleteCall = Callable[[str, dict[str, str]], Awaitable[Sequence[str]]]
MAX_COMPLETIONS = 100


@dataclass
class CompletionBinding:
    target: str  # "prompt" or "resource"
    ref: str  # prompt name or URI template
    argument: str
    values: Sequence[str] = ()
    complete: CompleteCall | None = None


class CompletionTable:
    def __init__(self, bindings: Sequence[CompletionBinding]) -> None:
        self.by_key = {(b.target, b.ref, b.argument): b for b in bindings}

    async def complete(
        self, ctx: ServerRequestContext[Any, Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        ref = params.ref
        if isinstance(ref, types.PromptReference):
            key = ("prompt", ref.name, params.argument.name)
        else:
            key = ("resource", str(ref.uri), params.argument.name)
        binding = self.by_key.get(key)
        prefix = params.argument.value
        context = dict(params.context.arguments or {}) if params.context else {}
        if binding is None:
            values: list[str] = []
        elif binding.complete is not None:
            values = [str(v) for v in await binding.complete(prefix, context)]
        else:
            lowered = prefix.lower()
            values = [v for v in binding.values if v.lower().startswith(lowered)]
        total = len(values)
        return types.CompleteResult(
            completion=types.Completion(
                values=values[:MAX_COMPLETIONS], total=total, has_more=total > MAX_COMPLETIONS
            )
        )
