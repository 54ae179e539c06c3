"""Baseline: the calculator's ``add`` tool written by hand on the SDK's ``MCPServer``.

Same tool name, title, description, annotations, input schema (``numbers``: array of
numbers, at least 2, no extra properties) and structured output (``{"sum": number}``) as
``generated_examples/calculator``; same async handler body. Run it the way the generated
server runs:

    python bench/baselines/handwritten_calculator.py                                  # stdio
    python bench/baselines/handwritten_calculator.py --transport http --port 8001 [--stateless]
    python bench/baselines/handwritten_calculator.py --transport http --event-store 1000

``--event-store N`` keeps the last N events in memory so streams can resume
(``Last-Event-ID``), as the generated server does by default over stateful HTTP: the same
work, for a like-for-like comparison (``calls.py --handwritten-arg``).

``create_app`` is an app factory for ``uvicorn --factory`` (stateless streamable HTTP),
used by bench/throughput.py for the multi-worker runs.
"""

import argparse
import logging
import sys
import uuid
from collections import OrderedDict
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.streamable_http import EventCallback, EventMessage, EventStore
from mcp_types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

Number = Annotated[float, Field(description="A finite decimal number.")]


class AddOutput(BaseModel):
    model_config = ConfigDict(protected_namespaces=())
    sum: Number


class MemoryEventStore(EventStore):
    """The last ``size`` events of every stream, for resumption."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.events: OrderedDict = OrderedDict()

    async def store_event(self, stream_id, message):  # type: ignore[no-untyped-def]
        event_id = uuid.uuid4().hex
        self.events[event_id] = (stream_id, message)
        if len(self.events) > self.size:
            self.events.popitem(last=False)
        return event_id

    async def replay_events_after(self, last_event_id, send_callback: EventCallback):  # type: ignore[no-untyped-def]
        if last_event_id not in self.events:
            return None
        stream_id = self.events[last_event_id][0]
        after = False
        for event_id, (stream, message) in list(self.events.items()):
            if after and stream == stream_id and message is not None:
                await send_callback(EventMessage(message, event_id))
            after = after or event_id == last_event_id
        return stream_id


def build_server() -> MCPServer:
    server = MCPServer(
        "calculator",
        title="Calculator",
        description="Exact arithmetic and unit conversion for language models.",
        instructions="Use these tools instead of doing arithmetic in your head.",
    )

    @server.tool(
        name="add",
        title="Add numbers",
        description="Add two or more numbers and return their sum.",
        annotations=ToolAnnotations(readOnlyHint=True, idempotentHint=True, openWorldHint=False),
    )
    async def add(
        numbers: Annotated[list[Number], Field(min_length=2, description="The numbers to add.")],
    ) -> AddOutput:
        return AddOutput(sum=sum(numbers))

    return server


def create_app():  # type: ignore[no-untyped-def]
    """uvicorn --factory entry: stateless streamable HTTP at /mcp."""
    return build_server().streamable_http_app(stateless_http=True, host="127.0.0.1")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--path", default="/mcp")
    parser.add_argument("--stateless", action="store_true")
    parser.add_argument("--json-response", action="store_true")
    parser.add_argument(
        "--event-store",
        type=int,
        default=0,
        metavar="N",
        help="keep N events for resumable streams (stateful HTTP; default 0: none)",
    )
    parser.add_argument("--log-level", default="INFO")
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=args.log_level.upper())
    server = build_server()
    if args.transport == "stdio":
        server.run("stdio")
        return
    import uvicorn

    app = server.streamable_http_app(
        streamable_http_path=args.path,
        stateless_http=args.stateless,
        json_response=args.json_response,
        event_store=MemoryEventStore(args.event_store) if args.event_store > 0 else None,
        host=args.host,
    )
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level.lower())


if __name__ == "__main__":
    main()
