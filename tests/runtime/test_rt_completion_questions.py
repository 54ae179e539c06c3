"""A completion handler (``context: true``) that asks the client (``ctx.elicit``, sampling,
roots): in the handshake era the question travels on the connection's back channel and the
handler completes with the answer; where there is none (stateless HTTP in the handshake
era) and on 2026-07-28 (``completion/complete`` has no ``input_required`` round trip: only
tools/call, prompts/get and resources/read do) the request fails with an error that says
why, not the generic "completion failed". Every transport but stdio, both eras."""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest
import rtkit
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel
from rtconnect import TRANSPORTS, Mode, cells, connect

from mcpgen.runtime.context import Context

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

GREET = types.PromptReference(type="ref/prompt", name="greet")
NO_BACK_CHANNEL = {"http-stateless", "http-json"}  # in the handshake era


class Mood(BaseModel):
    mood: str


@rtkit.HANDLERS.completion("prompt", "greet", "mood")
async def moods(prefix: str, context: dict[str, str], ctx: Context) -> list[str]:
    answer = await ctx.elicit("How do you feel?", Mood)
    return [f"{prefix}{answer.mood if answer else 'declined'}"]


def spec() -> dict[str, Any]:
    made = rtkit.make_spec()
    made["capabilities"].update(completions=True)
    made["completions"] = [
        {"target": "prompt", "ref": "greet", "argument": "mood", "handler": True}
    ]
    return made


async def elicit(context: Any, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"mood": "sunny"})


def answered(transport: str, mode: Mode) -> bool:
    return mode == "legacy" and transport not in NO_BACK_CHANNEL


CELLS = [t for t in TRANSPORTS if t != "stdio"]


@cells(CELLS, answered)
async def test_a_completion_asks_on_the_back_channel(transport: str, mode: Mode) -> None:
    async with connect(transport, mode, spec(), elicitation_callback=elicit) as client:
        done = await client.complete(GREET, {"name": "mood", "value": "so "})
    assert done.completion.values == ["so sunny"]


@cells(CELLS, lambda transport, mode: not answered(transport, mode))
async def test_a_completion_that_cannot_ask_says_why(transport: str, mode: Mode) -> None:
    async with connect(transport, mode, spec(), elicitation_callback=elicit) as client:
        with pytest.raises(MCPError) as error:
            await client.complete(GREET, {"name": "mood", "value": "so "})
    message = error.value.error.message
    assert error.value.error.code == types.INVALID_REQUEST, error.value
    assert "completion/complete cannot ask the client (elicitation/create)" in message, message
    if mode == "legacy":
        assert "stateless HTTP in the handshake era" in message, message
        assert "2026-07-28" not in message, message  # no way out there either
    else:
        assert "no input_required round trip on 2026-07-28" in message, message
