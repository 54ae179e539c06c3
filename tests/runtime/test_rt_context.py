"""What a handler's ``Context`` can do, over every transport and in both eras: progress,
log messages, elicitation (an enum and defaults in the schema), sampling and roots, and
mixed content results. In the handshake era the questions travel on the connection's back
channel, which stateless HTTP does not have (the handler then gets a ToolError that says
so); in 2026-07-28 they come back as ``input_required`` results on every transport."""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest
from rtconnect import TRANSPORTS, Mode, cells, connect

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.timeout(60),
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

NO_BACK_CHANNEL = {"http-stateless", "http-json"}  # in the handshake era
NO_NOTIFICATIONS = {"http-json"}  # a JSON answer carries the result alone


class Client:
    """The callbacks of a client that answers every question, and what it was told."""

    def __init__(self) -> None:
        self.schema: dict[str, Any] | None = None
        self.progress: list[float] = []
        self.logs: list[Any] = []

    async def elicit(self, context: Any, params: Any) -> types.ElicitResult:
        self.schema = params.requested_schema
        return types.ElicitResult(action="accept", content={"color": "blue", "size": "L"})

    async def sample(self, context: Any, params: Any) -> types.CreateMessageResult:
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(text="hi there"), model="fake"
        )

    async def roots(self, context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri="file:///work/project")])

    async def log(self, params: Any) -> None:
        self.logs.append(params.data)

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress.append(progress)

    def options(self, mode: Mode) -> dict[str, Any]:
        return {
            "elicitation_callback": self.elicit,
            "sampling_callback": self.sample,
            "list_roots_callback": self.roots,
            "logging_callback": self.log,
            "log_level": None if mode == "legacy" else "debug",
        }


def answered(transport: str, mode: Mode) -> bool:
    return mode != "legacy" or transport not in NO_BACK_CHANNEL


CELLS = [t for t in TRANSPORTS if t != "stdio"]


@cells(CELLS, answered)
async def test_a_handler_asks_the_user_the_model_and_the_client(transport: str, mode: Mode) -> None:
    seen = Client()
    async with connect(transport, mode, **seen.options(mode)) as client:
        result = await client.call_tool("interview", {}, progress_callback=seen.on_progress)
    assert not result.is_error, result
    assert result.structured_content == {
        "color": "blue",
        "size": "L",
        "model_said": "hi there",
        "roots": ["file:///work/project"],
    }
    assert seen.schema is not None
    color = seen.schema["properties"]["color"]
    assert color["enum"] == ["red", "green", "blue"] and color["default"] == "green"
    assert seen.schema["properties"]["size"]["default"] == "M"


@cells(CELLS, lambda t, m: answered(t, m) and t not in NO_NOTIFICATIONS)
async def test_progress_and_log_messages_reach_the_client(transport: str, mode: Mode) -> None:
    seen = Client()
    async with connect(transport, mode, **seen.options(mode)) as client:
        await client.call_tool("interview", {}, progress_callback=seen.on_progress)
    assert 3 in seen.progress, seen.progress
    assert "got an answer" in seen.logs, seen.logs


@cells(sorted(NO_BACK_CHANNEL))
async def test_asking_without_a_back_channel_is_a_tool_error(transport: str, mode: Mode) -> None:
    seen = Client()
    async with connect(transport, mode, **seen.options(mode)) as client:
        result = await client.call_tool("interview", {})
    if mode != "legacy":
        assert not result.is_error  # 2026-07-28 asks with input_required results
        return
    assert result.is_error
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    assert "cannot carry (stateless HTTP in the handshake era)" in text.text


@cells(["memory", "http", "websocket"])
async def test_declining_is_the_handlers_to_answer(transport: str, mode: Mode) -> None:
    async def decline(context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="decline")

    seen = Client()
    options = {**seen.options(mode), "elicitation_callback": decline}
    async with connect(transport, mode, **options) as client:
        result = await client.call_tool("interview", {})
    assert result.is_error and "the user declined" in str(result.content)


@cells(CELLS)
async def test_mixed_content_results(transport: str, mode: Mode) -> None:
    async with connect(transport, mode) as client:
        result = await client.call_tool("gallery", {})
    assert [c.type for c in result.content] == ["text", "image", "resource", "resource_link"]
    image = result.content[1]
    assert isinstance(image, types.ImageContent) and image.mime_type == "image/png"


async def test_2026_answers_are_checked_before_what_is_still_missing_is_asked() -> None:
    """On 2026-07-28 an answer that is none is -32602 even while another question is still
    unanswered; an answer sent as null counts as unanswered (asked again)."""
    from types import SimpleNamespace

    from mcp.shared.exceptions import MCPError

    from mcpgen.runtime.context import Context, InputRequired, elicitation, roots

    def context(responses: dict[str, Any]) -> Context:
        request = SimpleNamespace(protocol_version="2026-07-28")
        params = SimpleNamespace(request_state=None, input_responses=responses)
        return Context(request, params)  # type: ignore[arg-type]

    asked = {"a": elicitation("?", {"type": "object"}), "b": roots()}
    with pytest.raises(MCPError) as refused:
        await context({"a": {"action": "maybe"}}).ask(asked)
    assert refused.value.error.data == {"inputResponse": "a"}
    with pytest.raises(InputRequired) as missing:
        await context({"a": None, "b": {"roots": []}}).ask(asked)
    assert list(missing.value.requests) == ["a"]
