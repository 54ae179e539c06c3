"""Floor for stdio: a bare JSON-RPC echo, no MCP library.

Reads one JSON-RPC line from stdin, writes one result line to stdout. ``tools/call`` is
answered with the calculator's ``add`` result shape (the sum of ``arguments.numbers``);
``initialize`` and ``tools/list`` get canned answers so the SDK client can drive it too;
notifications are dropped. This is the cost of the pipe, JSON and one Python process.
"""

from __future__ import annotations

import json
import sys

NUMBER = {"type": "number", "description": "A finite decimal number."}
ADD_TOOL = {
    "name": "add",
    "description": "Add two or more numbers and return their sum.",
    "inputSchema": {
        "type": "object",
        "properties": {"numbers": {"type": "array", "items": NUMBER, "minItems": 2}},
        "required": ["numbers"],
    },
    "outputSchema": {"type": "object", "properties": {"sum": NUMBER}, "required": ["sum"]},
}


def answer(message: dict) -> dict:
    method = message.get("method")
    params = message.get("params") or {}
    if method == "tools/call":
        total = float(sum(params["arguments"]["numbers"]))
        return {
            "content": [{"type": "text", "text": json.dumps({"sum": total})}],
            "structuredContent": {"sum": total},
            "isError": False,
        }
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-11-25"),
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "echo", "version": "0"},
        }
    if method == "tools/list":
        return {"tools": [ADD_TOOL]}
    return {}


def main() -> None:
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        line = stdin.readline()
        if not line:
            return
        if not line.strip():
            continue
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": answer(message)}
        stdout.write(json.dumps(reply).encode() + b"\n")
        stdout.flush()


if __name__ == "__main__":
    main()
