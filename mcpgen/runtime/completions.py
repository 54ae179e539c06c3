"""Completions for prompt arguments and URI template variables.

A completion reveals what a prompt or resource holds, so the caller needs the scopes that
prompt or resource template needs (the policy's), as for a get or a read; a prompt the
caller cannot get (``PromptTable.authorized``) it cannot complete either. A handler is
called with a ``Context`` of the caller (the generated ``server.py`` hands it on when the
manifest's completion says ``context: true``), made only once the checks passed. A
handler's question to the client (``ctx.elicit``, ...) is asked on the back channel in the
handshake era; where there is none, and on 2026-07-28 (no ``input_required`` result for a
completion), the request fails -32600 saying so."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST

from .authz import Policy, current_identity
from .context import CannotAsk, Context, InputRequired
from .errors import Forbidden, ToolError, echoed

if TYPE_CHECKING:
    from .events import Events
    from .prompts import PromptTable

CompleteCall = Callable[[str, dict[str, str], Context], Awaitable[Sequence[str]]]
MAX_COMPLETIONS = 100
CANNOT_ASK = "completion/complete cannot ask the client"
NO_ROUND_TRIP = (
    "there is no input_required round trip on 2026-07-28 for it (only for tools/call, "
    "prompts/get and resources/read); complete from what the request carries"
)
logger = logging.getLogger("mcp_server")


@dataclass
class CompletionBinding:
    target: str  # "prompt" or "resource"
    ref: str  # prompt name or URI template
    argument: str
    values: Sequence[str] = ()
    complete: CompleteCall | None = None


class CompletionTable:
    def __init__(
        self,
        bindings: Sequence[CompletionBinding],
        policy: Policy | None = None,
        known: Collection[tuple[str, str]] | None = None,
        prompts: PromptTable | None = None,
    ) -> None:
        self.by_key = {(b.target, b.ref, b.argument): b for b in bindings}
        self.policy = policy or Policy()
        # (target, ref) of every prompt and URI template; None: those of the bindings
        self.known = {(b.target, b.ref) for b in bindings} if known is None else set(known)
        self.prompts = prompts  # the server's PromptTable: who may see and get which prompt
        self.events: Events | None = None  # as the other tables: what a ``Context`` reaches
        self.registry: Mapping[str, Any] = {}

    async def complete(
        self, ctx: ServerRequestContext[Any, Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        ref = params.ref
        if isinstance(ref, types.PromptReference):
            kind, name = "prompt", ref.name
        else:
            kind, name = "resource", str(ref.uri)
        # As prompts/get and resources/read answer: an unknown prompt or template is invalid
        # params, and so is a hidden one (a caller cannot tell the two apart).
        what = "prompt" if kind == "prompt" else "resource template"
        shown = echoed(name)
        unknown = MCPError(INVALID_PARAMS, f"Unknown {what}: {shown}", data={kind: shown})
        if (kind, name) not in self.known:
            raise unknown
        if kind == "prompt" and self.prompts is not None:  # as prompts/get answers
            self.prompts.authorized(name, current_identity())
        else:
            try:
                self.policy.check(current_identity(), kind, name)
            except Forbidden as exc:
                if self.policy.hide_unauthorized:
                    raise unknown from None
                raise exc.error() from None
        binding = self.by_key.get((kind, name, params.argument.name))
        prefix = params.argument.value
        context = dict(params.context.arguments or {}) if params.context else {}
        if binding is None:
            values: list[str] = []
        elif binding.complete is not None:
            caller = Context(ctx, params, events=self.events, registry=self.registry)
            values = await self._run(binding.complete, prefix, context, caller, name)
        else:
            lowered = prefix.lower()
            values = [v for v in binding.values if v.lower().startswith(lowered)]
        total = len(values)
        return types.CompleteResult(
            completion=types.Completion(
                values=values[:MAX_COMPLETIONS], total=total, has_more=total > MAX_COMPLETIONS
            )
        )

    async def _run(
        self, complete: CompleteCall, prefix: str, context: dict[str, str], ctx: Context, name: str
    ) -> list[str]:
        """A completion handler's values; its failure is an error naming no internals."""
        try:
            return [str(v) for v in await complete(prefix, context, ctx)]
        except CannotAsk as exc:
            why = f"on this connection ({exc.why}); {exc.ways}"
            raise MCPError(INVALID_REQUEST, f"{CANNOT_ASK} ({exc.method}) {why}") from None
        except InputRequired as asked:  # (a completion's result cannot be input_required)
            methods = ", ".join(sorted({r.method for r in asked.requests.values()}))
            raise MCPError(INVALID_REQUEST, f"{CANNOT_ASK} ({methods}): {NO_ROUND_TRIP}") from None
        except ToolError as exc:  # as a prompt's or a resource's handler
            raise MCPError(INVALID_REQUEST, str(exc)) from None
        except MCPError:
            raise
        except Exception:
            logger.exception("completion for %s failed", name)
            raise MCPError(INTERNAL_ERROR, "completion failed (see the server log)") from None


def completion_table(
    spec: dict[str, Any], handlers: Any, policy: Policy, prompts: PromptTable | None = None
) -> CompletionTable:
    """The spec's completions bound to the generated ``server.py``'s handlers (``prompts``:
    the server's ``PromptTable``)."""
    bindings = [
        CompletionBinding(
            c["target"],
            c["ref"],
            c["argument"],
            values=c.get("values", []),
            complete=handlers.completions.get((c["target"], c["ref"], c["argument"])),
        )
        for c in spec.get("completions", [])
    ]
    known = [("prompt", p["definition"]["name"]) for p in spec.get("prompts", [])]
    known += [
        ("resource", r["definition"]["uriTemplate"])
        for r in spec.get("resources", [])
        if "uriTemplate" in r["definition"]
    ]
    return CompletionTable(bindings, policy, known, prompts)
