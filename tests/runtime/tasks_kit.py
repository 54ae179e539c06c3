"""A server with task tools for tests/runtime/test_tasks*.py (docs/tasks.md), built with
``mcpgen.runtime`` alone, and a raw JSON-RPC client over HTTP for both protocol eras.

Tools: ``report`` (task optional: ``steps`` progress steps of ``delay`` seconds, then a
text; ``fail`` = ``tool`` raises ToolError, ``protocol`` raises MCPError -32010),
``export`` (task required: sleeps ``seconds``, records its start and cancellation in
``EVENTS``), ``pick`` (task optional: asks a colour by elicitation) and ``quick`` (plain).
"""

from __future__ import annotations

import copy
import json
from functools import partial
from typing import Any

import anyio
import httpx2
import rtkit
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from mcpgen.runtime import Context, ToolError
from mcpgen.runtime.http_app import create_app
from mcpgen.runtime.server import Handlers, build_server
from mcpgen.runtime.tools import Arguments, plain

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
EXTENSION = "io.modelcontextprotocol/tasks"
RELATED = "io.modelcontextprotocol/related-task"
ALICE, BOB = rtkit.STATIC_KEYS  # two callers (two static keys: two identities)
REPORT = {
    "type": "object",
    "properties": {
        "steps": {"type": "integer", "minimum": 0},
        "delay": {"type": "number", "minimum": 0},
        "fail": {"type": "string", "enum": ["none", "tool", "protocol"]},
    },
    "required": ["steps"],
}
SLEEP = {"type": "object", "properties": {"seconds": {"type": "number"}}}
OPEN = {"type": "object", "properties": {}}
EVENTS: list[str] = []


def _tool(name: str, schema: dict[str, Any], task: str | None) -> dict[str, Any]:
    definition: dict[str, Any] = {"name": name, "description": name, "inputSchema": schema}
    entry: dict[str, Any] = {"definition": definition, "ident": name}
    if task:
        definition["execution"] = {"taskSupport": task}
        entry["task"] = task
    return entry


def make_spec() -> dict[str, Any]:
    spec = rtkit.make_spec("bearer")
    spec["tools"] = [
        _tool("report", REPORT, "optional"),
        _tool("export", SLEEP, "required"),
        _tool("pick", OPEN, "optional"),
        _tool("quick", OPEN, None),
    ]
    spec["resources"], spec["prompts"] = [], []
    return copy.deepcopy(spec)


HANDLERS = Handlers()


@HANDLERS.tool("report")
async def report(arguments: Arguments, ctx: Context) -> Any:
    args = plain(arguments)
    steps = int(args["steps"])
    for step in range(steps):
        await ctx.progress(step + 1, steps, f"step {step + 1} of {steps}")
        await anyio.sleep(float(args.get("delay", 0)))
    if args.get("fail") == "tool":
        raise ToolError("the report could not be built")
    if args.get("fail") == "protocol":
        raise MCPError(-32010, "the upstream refused the report")
    return f"report of {steps} steps"


@HANDLERS.tool("export")
async def export(arguments: Arguments, ctx: Context) -> Any:
    EVENTS.append("export started")
    try:
        await anyio.sleep(float(plain(arguments).get("seconds", 0)))
    except BaseException:
        EVENTS.append("export cancelled")
        raise
    return "exported"


class Colour(BaseModel):
    colour: str


@HANDLERS.tool("pick")
async def pick(arguments: Arguments, ctx: Context) -> Any:
    answer = await ctx.elicit("Which colour?", Colour)
    return f"picked {answer.colour if answer else 'nothing'}"


@HANDLERS.tool("quick")
async def quick(arguments: Arguments, ctx: Context) -> Any:
    return "quick"


def app(spec: dict[str, Any] | None = None, **changes: Any) -> Any:
    spec = spec or make_spec()
    settings = rtkit.settings(spec, "http", json_response=True, **changes)
    return create_app(spec, partial(build_server, spec, HANDLERS), settings, rtkit.environ(spec))


class Rpc:
    """Raw JSON-RPC over HTTP as one caller (``key``) in one era (a handshake-era session,
    or stateless 2026-07-28 requests that declare the extension unless ``declare`` is off)."""

    def __init__(self, http: httpx2.AsyncClient, key: str, era: str = LEGACY) -> None:
        self.http, self.key, self.era = http, key, era
        self.session: str | None = None
        self.declare = True
        self.ids = 0

    async def open(self) -> dict[str, Any]:
        params = {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "tests", "version": "0"},
        }
        answer = await self.send("initialize", params)
        await self.send("notifications/initialized", None, notify=True)
        return answer

    def headers(self, method: str, params: Any) -> dict[str, str]:
        headers = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "Authorization": f"Bearer {self.key}",
        }
        if self.era == MODERN:
            headers.update({"MCP-Protocol-Version": MODERN, "Mcp-Method": method})
            if method == "tools/call":
                headers["Mcp-Name"] = params["name"]
            elif method.startswith("tasks/") and "taskId" in params:  # routing (extension)
                headers["Mcp-Name"] = params["taskId"]
        elif self.session:
            headers.update({"Mcp-Session-Id": self.session, "MCP-Protocol-Version": LEGACY})
        return headers

    async def send(self, method: str, params: Any, *, notify: bool = False) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            params = dict(params)
            if self.era == MODERN:
                caps = {"extensions": {EXTENSION: {}}} if self.declare else {}
                params["_meta"] = {
                    "io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientCapabilities": caps,
                    "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "0"},
                    **params.get("_meta", {}),
                }
            message["params"] = params
        if not notify:
            self.ids += 1
            message["id"] = self.ids
        response = await self.http.post(
            "/mcp", content=json.dumps(message), headers=self.headers(method, params)
        )
        if "mcp-session-id" in response.headers:
            self.session = response.headers["mcp-session-id"]
        if notify:
            return {}
        # 2026-07-28 answers some errors with an HTTP status too (-32601: 404)
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            for line in response.text.splitlines():
                if line.startswith("data:") and '"id"' in line:
                    found: dict[str, Any] = json.loads(line[5:])
                    return found
        assert response.headers.get("content-type", "").startswith("application/json"), (
            response.status_code,
            response.text[:300],
        )
        answer: dict[str, Any] = response.json()
        return answer

    async def call(self, name: str, arguments: dict[str, Any], **params: Any) -> dict[str, Any]:
        return await self.send("tools/call", {"name": name, "arguments": arguments, **params})

    async def task(self, name: str, arguments: dict[str, Any], ttl: int | None = None) -> str:
        """Start a task (either era); its id."""
        extra: dict[str, Any] = {}
        if self.era != MODERN:
            extra["task"] = {} if ttl is None else {"ttl": ttl}
        answer = await self.call(name, arguments, **extra)
        result = answer["result"]
        task_id: str = result["taskId"] if self.era == MODERN else result["task"]["taskId"]
        return task_id

    async def get(self, task_id: str) -> dict[str, Any]:
        return await self.send("tasks/get", {"taskId": task_id})

    async def until(self, task_id: str, *statuses: str, timeout: float = 10) -> dict[str, Any]:
        """tasks/get until the task's status is one of ``statuses``: that result."""
        with anyio.fail_after(timeout):
            while True:
                answer = await self.get(task_id)
                if answer.get("result", {}).get("status") in statuses:
                    return answer["result"]  # type: ignore[no-any-return]
                await anyio.sleep(0.05)
