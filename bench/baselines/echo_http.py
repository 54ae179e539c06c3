"""Floor for HTTP: a bare Starlette/uvicorn JSON-RPC echo endpoint at POST /mcp, no MCP.

Answers like ``echo_stdio.py`` (same result shapes), one JSON response per POST;
notifications get 202. ``create_app`` is the ``uvicorn --factory`` entry.

    python bench/baselines/echo_http.py --port 8002
"""

from __future__ import annotations

import argparse
import os
import sys

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from echo_stdio import answer


async def endpoint(request: Request) -> Response:
    message = await request.json()
    if "id" not in message:
        return Response(status_code=202)
    return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": answer(message)})


def create_app() -> Starlette:
    return Starlette(routes=[Route("/mcp", endpoint, methods=["POST"])])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8002)
    parser.add_argument("--log-level", default="warning")
    args = parser.parse_args(argv)
    import uvicorn

    uvicorn.run(create_app(), host=args.host, port=args.port, log_level=args.log_level.lower())


if __name__ == "__main__":
    main()
