"""An error repeats an unknown name or URI the caller sent by at most its first 100
characters and its length: a 2 MB name was answered twice over (message and data)."""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest
import rtkit
from mcp.client import Client
from mcp.shared.exceptions import MCPError

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

LONG = "x" * 200_000
SHOWN = "x" * 100 + "... (200000 characters)"


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_long_unknown_name_or_uri_is_repeated_in_part(mode: str) -> None:
    async with Client(rtkit.server(rtkit.make_spec("none")), mode=mode) as client:
        asks = {
            "tool": lambda: client.call_tool(LONG, {}),
            "prompt": lambda: client.get_prompt(LONG, {}),
            "uri": lambda: client.read_resource("fixture://" + LONG),
        }
        for key, ask in asks.items():
            with pytest.raises(MCPError) as caught:
                await ask()
            error = caught.value.error
            assert len(error.message) < 200 and len(str(error.data)) < 200, key
            assert error.message.endswith(SHOWN if key != "uri" else "(200010 characters)"), key
        short = "no_such_tool"  # a name of ordinary length is repeated whole, as before
        with pytest.raises(MCPError) as caught:
            await client.call_tool(short, {})
        assert caught.value.error.message == f"Unknown tool: {short}"
        assert caught.value.error.data == {"tool": short}


def completing() -> dict[str, Any]:
    made = rtkit.make_spec("none")
    made["capabilities"].update(completions=True)
    return made


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
@pytest.mark.parametrize("ask", ["complete-prompt", "complete-template", "prompt-argument"])
async def test_a_long_unknown_name_is_not_repeated_whole_anywhere(mode: str, ask: str) -> None:
    """completion/complete (an unknown prompt or resource template) and prompts/get (an
    unknown argument's name) too (found by review r9)."""
    async with Client(rtkit.server(completing()), mode=mode) as client:
        argument = {"name": "who", "value": ""}
        with pytest.raises(MCPError) as caught:
            if ask == "complete-prompt":
                ref: Any = types.PromptReference(type="ref/prompt", name=LONG)
                await client.complete(ref, argument)
            elif ask == "complete-template":
                ref = types.ResourceTemplateReference(type="ref/resource", uri="fixture://" + LONG)
                await client.complete(ref, argument)
            else:
                await client.get_prompt("greet", {"who": "me", LONG: "1"})
        error = caught.value.error
        assert len(error.message) < 1_000 and len(str(error.data)) < 1_000
        assert "(200000 characters)" in error.message or "(200010 characters)" in error.message
