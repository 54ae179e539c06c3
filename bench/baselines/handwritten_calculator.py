"""Baseline: the calculator's ``add`` tool written by hand on the SDK's ``MCPServer``.

Same tool name, title, description, annotations, input schema (``numbers``: array of
numbers, at least 2, no extra properties) and structured output (``{"sum": number}``) as
``generated_examples/calculator``; same async handler body. Run it the way the generated
server runs:

    python bench/baselines/handwritten_calculator.py                                  # stdio
    python bench/baselines/handwritten_calculator.py --transport http --port 8001 [--stateless]

``create_app`` is an app factory for ``uvicorn --factory`` (stateless streamable HTTP),
used by bench/throughput.py for the multi-worker runs.
"""

import argparse
import logging
import sys
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

Number = Annotated[float, Field(description="A finite decimal number.")]


class AddOutput(BaseModel):
    model_config = ConfigDict(protected_namespaces=())
    sum: Number


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
        host=args.host,
    )
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level.lower())


if __name__ == "__main__":
    main()
