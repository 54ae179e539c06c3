"""Conformance fixture: test_input_required_result_tampered_state (user code).

The request state is sealed by the generated server (RequestStateBoundary), so a client
that edits it gets a JSON-RPC error instead of a second round.
"""

from __future__ import annotations

from ... import Context, ToolReturn
from ...models import TestInputRequiredResultTamperedStateInput


async def handle(args: TestInputRequiredResultTamperedStateInput, ctx: Context) -> ToolReturn:
    ctx.set_state("sealed")
    answer = await ctx.elicit_raw(
        "Please confirm",
        {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
        key="confirm",
    )
    return f"Confirmed ({answer.action}) with state {ctx.state}"
