"""One replica for the multi-process tests and bench/replicas.py: an SDK lowlevel Server on
streamable HTTP whose listen streams, rate limit and requestState keys come from
mcpgen.runtime.shared.

    python tests/runtime/replica_app.py --port 8001 --name a [--redis-url URL] [--secret S]

Tools: ``whoami`` (the replica's name), ``touch`` (publishes ResourceUpdated(uri) or
ToolsListChanged), ``limited`` (token bucket ``bucket`` at ``rate``/``burst``, keyed by the
caller's address; an error result when refused), ``paint`` (two rounds: asks a colour
through ``input_required``, answers on the round that carries it). ``GET /healthz`` returns
the shared-state status.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
import uvicorn
from mcp.server import Server
from mcp.server.request_state import RequestStateBoundary
from mcp.server.subscriptions import ListenHandler, ResourceUpdated, ToolsListChanged
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from mcpgen.runtime.shared import SharedState, request_state_security, shared_state

OBJECT = {"type": "object", "additionalProperties": True}
TOOLS = [
    types.Tool(name="whoami", input_schema=OBJECT),
    types.Tool(name="touch", input_schema=OBJECT),
    types.Tool(name="limited", input_schema=OBJECT),
    types.Tool(name="paint", input_schema=OBJECT),
]
ASK = types.ElicitRequest(
    params=types.ElicitRequestFormParams(
        message="Which colour?",
        requested_schema={"type": "object", "properties": {"colour": {"type": "string"}}},
    )
)


def text(value: str, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=value)], is_error=error)


def build(name: str, shared: SharedState, secret: str | None) -> Any:
    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=TOOLS)

    async def call_tool(
        ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        args = params.arguments or {}
        if params.name == "whoami":
            return text(name)
        if params.name == "touch":
            uri = args.get("uri")
            await shared.bus.publish(ResourceUpdated(uri=uri) if uri else ToolsListChanged())
            return text(f"published on {name}")
        if params.name == "limited":
            request = ctx.request
            caller = request.client.host if request is not None and request.client else "?"
            allowed, wait = await shared.limiter.allow(
                f"{args.get('bucket', 'b')}:{caller}",
                float(args.get("rate", 1.0)),
                float(args.get("burst", 1.0)),
            )
            return text(f"ok on {name}") if allowed else text(f"limited: retry {wait:.3f}", True)
        if params.name == "paint":
            answer = (params.input_responses or {}).get("colour")
            if answer is None:
                return types.InputRequiredResult(
                    input_requests={"colour": ASK}, request_state=f"asked by {name}"
                )
            colour = (
                answer.content.get("colour") if isinstance(answer, types.ElicitResult) else None
            )
            return text(f"{params.request_state}, answered on {name}: {colour}")
        return text(f"no tool {params.name}", True)

    @asynccontextmanager
    async def lifespan(server: Any) -> AsyncIterator[dict[str, Any]]:
        async with shared:
            yield {}

    server: Server[Any] = Server(
        "replica",
        lifespan=lifespan,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_subscriptions_listen=ListenHandler(shared.bus),
    )
    server.middleware.append(
        RequestStateBoundary(request_state_security(secret), default_audience="replica")
    )

    async def healthz(request: Request) -> JSONResponse:
        return JSONResponse({"name": name, **shared.status()})

    return server.streamable_http_app(
        stateless_http=True,
        host="127.0.0.1",
        custom_starlette_routes=[Route("/healthz", healthz)],
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--name", default="replica")
    parser.add_argument("--redis-url")
    parser.add_argument("--secret")
    parser.add_argument("--prefix", default="replicas")
    options = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    shared = shared_state(
        options.redis_url, prefix=options.prefix, secret=options.secret, retry_interval=0.2
    )
    app = build(options.name, shared, options.secret)
    uvicorn.run(app, host="127.0.0.1", port=options.port, log_level="warning")


if __name__ == "__main__":
    main()
