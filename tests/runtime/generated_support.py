"""Replicas of a *generated* server for tests/runtime/test_replicas_generated.py and
bench/replicas.py: ``build_relay`` runs ``python -m mcpgen build`` on a small manifest (tools
that name their replica, raise list_changed, ask a question over two rounds and keep
per-user values; a prompt whose completion handler reads and writes them) and writes its handlers; ``start`` runs ``python -m relay_mcp --transport
http ...`` processes on loopback ports with ``PYTHONPATH=<out>/src``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
from relay_handlers import sources
from replica_support import ROOT, Replica

from mcpgen.runtime.testing import free_port

PACKAGE = "relay_mcp"
SECRET = "relay-state-secret-" + "0123456789abcdef" * 2
MANIFEST = """\
mcpgen: 1
server:
  name: relay
  version: 0.1.0
  description: Replicas of one generated server, for the shared-state tests.
capabilities:
  tools: {{listChanged: true}}
transports:
  http:
    rateLimit: {{requestsPerSecond: {rate}, burst: {burst}}}
auth:
  type: bearer
deploy: {{kubernetes: false}}  # replicas planned: the package carries the Redis backend
tools:
  - {{name: whoami, description: The replica's name., context: true, input: {{type: object}}}}
  - {{name: touch, description: Raise tools list_changed., context: true, input: {{type: object}}}}
  - {{name: paint, description: Ask a colour over two rounds., context: true, input: {{type: object}}}}
  - name: remember
    description: Keep a value for the caller.
    context: true
    input: {{type: object, properties: {{value: {{type: string}}}}, required: [value]}}
  - {{name: recall, description: The caller's value., context: true, input: {{type: object}}}}
prompts:
  - name: greet
    description: Greet in a colour.
    arguments: [{{name: colour}}]
    messages: [{{role: user, text: "Greet me in {{{{ colour }}}}."}}]
completions:  # the caller's value (ctx.store), then what it typed becomes its value
  - {{prompt: greet, argument: colour, handler: true, context: true}}
"""
VERSION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "0"},
}


def build_relay(directory: Path, *, rate: float = 0.01, burst: int = 20) -> Path:
    """The generated project (its folder); handlers written over the stubs."""
    source = directory / "relay.yaml"
    source.write_text(MANIFEST.format(rate=rate, burst=burst))
    out = directory / "relay"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-m", "mcpgen", "build", str(source), "-o", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for path, text in sources().items():
        (out / "src" / PACKAGE / "handlers" / f"{path}.py").write_text(text)
    return out


@dataclass
class Plan:
    """One replica to start: its name and its flags (``--stateless`` or not, ...)."""

    name: str
    flags: Sequence[str] = ("--stateless",)
    env: dict[str, str] | None = None


@contextmanager
def start(
    out: Path,
    plans: Sequence[Plan],
    directory: Path,
    *,
    redis_url: str | None,
    tokens: Sequence[str],
    secret: str | None = SECRET,
    timeout: float = 60.0,
) -> Iterator[list[Replica]]:
    """The replicas, started side by side, each answering ``/healthz`` (and connected to
    Redis when it has one); stopped with SIGTERM at the end."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("RELAY_")}
    base.update(PYTHONPATH=str(out / "src"), RELAY_TOKENS=",".join(tokens))
    if secret:
        base["RELAY_STATE_SECRET"] = secret
    started: list[Replica] = []
    try:
        for plan in plans:
            port = free_port()
            log = directory / f"relay-{plan.name}.log"
            command = [sys.executable, "-m", PACKAGE, "--transport", "http", "--port", str(port)]
            command += list(plan.flags)
            if redis_url:
                command += ["--redis-url", redis_url]
            env = dict(base, RELAY_REPLICA=plan.name, **(plan.env or {}))
            with log.open("wb") as sink:
                process = subprocess.Popen(command, env=env, stdout=sink, stderr=sink)
            started.append(Replica(plan.name, port, process, log))
        deadline = time.monotonic() + timeout
        for replica in started:
            while not _ready(replica, bool(redis_url)):
                if replica.process.poll() is not None:
                    raise AssertionError(f"replica {replica.name} exited:\n{replica.log_text()}")
                if time.monotonic() > deadline:
                    raise AssertionError(f"replica {replica.name} did not start in {timeout} s")
                time.sleep(0.1)
        yield started
    finally:
        for replica in started:
            replica.process.terminate()
        for replica in started:
            try:
                replica.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                replica.process.kill()
                replica.process.wait(timeout=10)


def _ready(replica: Replica, redis: bool) -> bool:
    try:
        health = replica.health()
    except (httpx2.HTTPError, ValueError):
        return False
    shared = health.get("sharedState")
    return not redis or (isinstance(shared, dict) and shared.get("connected") is True)


def call_request(
    i: int, tool: str, arguments: dict[str, Any], token: str, **params: Any
) -> tuple[bytes, dict[str, str]]:
    """One stateless 2026-07-28 ``tools/call`` (body and headers), as any replica takes it."""
    body = {
        "jsonrpc": "2.0",
        "id": i,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": META, **params},
    }
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "authorization": f"Bearer {token}",
        "mcp-protocol-version": VERSION,
        "mcp-method": "tools/call",
        "mcp-name": tool,
    }
    return json.dumps(body).encode(), headers


def answer_of(response: httpx2.Response) -> dict[str, Any]:
    """The JSON-RPC answer in a response (a JSON body, or the SSE event that carries it)."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for line in response.text.splitlines():
            if line.startswith("data:") and '"id"' in line:
                message: dict[str, Any] = json.loads(line[5:])
                return message
        raise AssertionError(f"no answer in the stream: {response.text[:500]}")
    answer: dict[str, Any] = response.json()
    return answer


def text_of(answer: dict[str, Any]) -> str:
    assert "result" in answer, answer
    content = answer["result"]["content"]
    return str(content[0]["text"])
