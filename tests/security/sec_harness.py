"""What the attacks in ``tests/security`` run against: real generated servers, a local
upstream that records every byte it is sent, raw MCP requests and tokens made here.

Everything here goes through the generated server's public interface only: ``python -m
mcpgen build MANIFEST -o DIR`` to build, ``PYTHONPATH=DIR/src python -m PKG --transport ...
--host 127.0.0.1 --port P [flags]`` to run, its documented environment variables
(``<PREFIX>JWKS_FILE``, ``<PREFIX>_BASE_URL``, the upstream credentials) to configure, and
the wire (HTTP, SSE, WebSocket, stdio) to talk to it. Nothing imports the generated package.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

from mcpgen.runtime.testing import free_port

WORKTREE = Path(__file__).resolve().parents[2]
MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
ISSUER = "https://auth.example.com"
AUDIENCE = "https://mcp.example.com/mcp"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT = "io.modelcontextprotocol/clientInfo"

Json = Any


# -- building ----------------------------------------------------------------------------


@dataclass
class Built:
    """A generated project: where it is and what it is called."""

    root: Path
    package: str
    returncode: int = 0
    output: str = ""

    @property
    def src(self) -> Path:
        return self.root / "src"

    @property
    def readme(self) -> str:
        return (self.root / "README.md").read_text(encoding="utf-8")


def write_files(folder: Path, files: Mapping[str, str]) -> None:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


def build(
    folder: Path,
    manifest: str,
    package: str,
    files: Mapping[str, str] | None = None,
    handlers: Mapping[str, str] | None = None,
    check: bool = True,
) -> Built:
    """``python -m mcpgen build`` of ``manifest`` (plus side ``files``) into ``folder/out``;
    ``handlers`` (tool name -> Python source) are written as the user's handler files."""
    folder.mkdir(parents=True, exist_ok=True)
    write_files(folder, {"mcpgen.yaml": manifest, **(files or {})})
    out = folder / "out"
    done = subprocess.run(
        [sys.executable, "-m", "mcpgen", "build", str(folder / "mcpgen.yaml"), "-o", str(out)],
        env={**os.environ, "PYTHONPATH": str(WORKTREE)},
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    built = Built(out, package, done.returncode, done.stdout + done.stderr)
    if check:
        assert done.returncode == 0, built.output[-4000:]
    if done.returncode == 0:
        for tool, source in (handlers or {}).items():
            path = out / "src" / package / "handlers" / "tools" / f"{tool}.py"
            path.write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")
    return built


# -- running ----------------------------------------------------------------------------


class Server:
    """One generated server process, stderr kept in a file (for the log-leak attacks)."""

    def __init__(
        self,
        built: Built,
        *args: str,
        transport: str = "http",
        env: Mapping[str, str] | None = None,
        log: Path | None = None,
        wait: bool = True,
    ) -> None:
        self.built = built
        self.port = free_port()
        self.transport = transport
        self.log = log or built.root.parent / f"server-{uuid.uuid4().hex[:8]}.log"
        command = [sys.executable, "-m", built.package, "--transport", transport]
        command += ["--host", "127.0.0.1", "--port", str(self.port), *args]
        self._stderr = self.log.open("wb")
        self.process = subprocess.Popen(
            command,
            env={**os.environ, "PYTHONPATH": str(built.src), **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._stderr,
            start_new_session=True,
        )
        if wait:
            self.wait_for_port()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def wait_for_port(self, timeout: float = 60) -> None:
        """Return once the server listens; kill it and fail if it exits or takes too long."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.kill()
                raise AssertionError(
                    f"the server exited with status {self.process.returncode}: {self.stderr()[-3000:]}"
                )
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        self.kill()
        raise AssertionError(f"nothing listened on port {self.port} within {timeout} s")

    def stderr(self) -> str:
        if not self._stderr.closed:
            self._stderr.flush()
        return self.log.read_text(encoding="utf-8", errors="replace")

    def alive(self) -> bool:
        return self.process.poll() is None

    def terminate(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)

    def stop(self, timeout: float = 20) -> int | None:
        self.terminate()
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return None
        finally:
            self._stderr.close()

    def kill(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)
        self._stderr.close()


@dataclass
class ServerPool:
    """Servers started by a module, stopped when it ends."""

    servers: list[Server] = field(default_factory=list)

    def start(self, built: Built, *args: str, **options: Any) -> Server:
        server = Server(built, *args, **options)
        self.servers.append(server)
        return server

    def close(self) -> None:
        for server in self.servers:
            server.stop()


# -- the local upstream ---------------------------------------------------------------------


@dataclass
class Received:
    """One request exactly as it reached the upstream."""

    method: str
    target: str
    version: str
    headers: list[tuple[str, str]]
    body: bytes
    port: int
    aborted: bool = False  # the sender closed the connection before the answer

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]

    @property
    def query(self) -> str:
        return self.target.split("?", 1)[1] if "?" in self.target else ""

    def header(self, name: str) -> str | None:
        found = [v for k, v in self.headers if k.lower() == name.lower()]
        return found[0] if found else None

    def all(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k.lower() == name.lower()]

    @property
    def raw_head(self) -> str:
        lines = [f"{self.method} {self.target} {self.version}"]
        lines += [f"{k}: {v}" for k, v in self.headers]
        return "\r\n".join(lines)


@dataclass
class Reply:
    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""
    delay: float = 0.0  # seconds before answering (the connection is watched meanwhile)

    @classmethod
    def json(cls, data: Json, status: int = 200, delay: float = 0.0) -> Reply:
        return cls(status, [("Content-Type", "application/json")], json.dumps(data).encode(), delay)

    @classmethod
    def redirect(cls, location: str, status: int = 302) -> Reply:
        return cls(status, [("Location", location)], b"")

    @classmethod
    def binary(cls, data: bytes, media: str = "application/octet-stream") -> Reply:
        return cls(200, [("Content-Type", media)], data)

    @classmethod
    def text(cls, data: str, media: str = "text/plain") -> Reply:
        return cls(200, [("Content-Type", media)], data.encode())


ReplyFor = Callable[[Received], Reply]

REASONS = {
    200: "OK",
    201: "Created",
    204: "No Content",
    302: "Found",
    307: "Temporary Redirect",
    404: "Not Found",
    500: "Internal Server Error",
}


class Upstream:
    """A raw asyncio HTTP/1.1 server on 127.0.0.1 (its own thread and event loop) that
    records the request line, headers and body of every request, and answers what the test
    says: ``routes`` maps a path prefix to a Reply (or a function of the request)."""

    def __init__(self) -> None:
        self.received: list[Received] = []
        self.routes: dict[str, Reply | ReplyFor] = {}
        self.default: Reply | ReplyFor = lambda r: Reply.json({"ok": True, "path": r.path})
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        self._ready.wait(10)
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)

        async def start() -> None:
            self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
            self.port = self._server.sockets[0].getsockname()[1]

        self._loop.run_until_complete(start())
        self._ready.set()
        self._loop.run_forever()

    def close(self) -> None:
        async def stop() -> None:
            self._server.close()

        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)

    def reset(self) -> None:
        self.received.clear()
        self.routes.clear()

    def wait_for(self, count: int, timeout: float = 10) -> list[Received]:
        deadline = time.monotonic() + timeout
        while len(self.received) < count and time.monotonic() < deadline:
            time.sleep(0.02)
        return list(self.received)

    def matching(self, text: str) -> list[Received]:
        return [r for r in self.received if text in r.target]

    def _reply(self, request: Received) -> Reply:
        chosen: Reply | ReplyFor = self.default
        best = -1
        for prefix, reply in self.routes.items():
            if request.path.startswith(prefix) and len(prefix) > best:
                chosen, best = reply, len(prefix)
        return chosen(request) if callable(chosen) else chosen

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            writer.close()
            return
        lines = head.decode("latin-1").split("\r\n")
        method, target, version = [*lines[0].split(" ", 2), "", ""][:3]
        headers = []
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                headers.append((name, value.strip()))
        request = Received(method, target, version, headers, b"", self.port)
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError, ValueError):
            request.body = await self._body(reader, request)
        self.received.append(request)
        reply = self._reply(request)
        if reply.delay:
            try:  # a client that goes away meanwhile shows up as EOF
                data = await asyncio.wait_for(reader.read(1), reply.delay)
                if not data:
                    request.aborted = True
                    writer.close()
                    return
            except TimeoutError:
                pass
        status = f"HTTP/1.1 {reply.status} {REASONS.get(reply.status, 'Status')}\r\n"
        out = [status] + [f"{k}: {v}\r\n" for k, v in reply.headers]
        out.append(f"Content-Length: {len(reply.body)}\r\nConnection: close\r\n\r\n")
        try:
            writer.write("".join(out).encode("latin-1") + reply.body)
            await writer.drain()
            writer.close()
        except ConnectionError:
            request.aborted = True

    async def _body(self, reader: asyncio.StreamReader, request: Received) -> bytes:
        length = request.header("content-length")
        if length is not None:
            return await reader.readexactly(int(length))
        if (request.header("transfer-encoding") or "").lower() == "chunked":
            chunks = []
            while True:
                size = int((await reader.readline()).strip().split(b";")[0], 16)
                if size == 0:
                    await reader.readline()
                    return b"".join(chunks)
                chunks.append(await reader.readexactly(size))
                await reader.readline()
        return b""


# -- tokens ----------------------------------------------------------------------------------


class Tokens:
    """An RSA signing key made here, its JWKS file, and JWTs minted with it."""

    def __init__(self, folder: Path) -> None:
        from cryptography.hazmat.primitives.asymmetric import rsa
        from jwt.algorithms import RSAAlgorithm

        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        jwk = json.loads(RSAAlgorithm.to_jwk(self.key.public_key()))
        jwk.update(kid="k1", alg="RS256", use="sig")
        self.jwks = folder / "jwks.json"
        self.jwks.write_text(json.dumps({"keys": [jwk]}), encoding="utf-8")

    def token(self, scopes: Iterable[str] = (), subject: str = "alice", **claims: Any) -> str:
        import jwt

        now = int(time.time())
        data: dict[str, Any] = {
            "iss": ISSUER,
            "aud": AUDIENCE,
            "sub": subject,
            "iat": now,
            "exp": now + 600,
            "scope": " ".join(scopes),
        }
        data.update(claims)
        data = {k: v for k, v in data.items() if v is not None}
        return str(jwt.encode(data, self.key, algorithm="RS256", headers={"kid": "k1"}))

    def bearer(self, scopes: Iterable[str] = (), **claims: Any) -> dict[str, str]:
        return {"Authorization": "Bearer " + self.token(scopes, **claims)}


# -- speaking MCP over HTTP ----------------------------------------------------------------


@dataclass
class Answer:
    """An HTTP answer and the JSON-RPC messages it carried (JSON or an SSE stream)."""

    status: int
    headers: httpx2.Headers
    text: str
    messages: list[Json]

    def reply(self, request_id: Json) -> Json | None:
        for message in self.messages:
            if (
                isinstance(message, dict)
                and message.get("id") == request_id
                and ("result" in message or "error" in message)
            ):
                return message
        return None

    @property
    def only(self) -> Json:
        """The response (the last message with a result or an error)."""
        found = [
            m for m in self.messages if isinstance(m, dict) and ("result" in m or "error" in m)
        ]
        assert found, (self.status, self.text[:2000])
        return found[-1]


def parse_body(content_type: str, text: str) -> list[Json]:
    if "text/event-stream" in content_type:
        messages = []
        for event in text.replace("\r\n", "\n").split("\n\n"):
            data = "\n".join(
                line[5:].lstrip(" ") for line in event.split("\n") if line.startswith("data:")
            )
            if data.strip():
                with contextlib.suppress(ValueError):
                    messages.append(json.loads(data))
        return messages
    if text.strip():
        try:
            value = json.loads(text)
        except ValueError:
            return []
        return value if isinstance(value, list) else [value]
    return []


def modern_params(params: Json | None = None, **meta: Any) -> Json:
    """``params`` with the 2026-07-28 ``_meta`` envelope every request carries."""
    params = dict(params or {})
    params["_meta"] = {
        META_VERSION: MODERN,
        META_CAPABILITIES: {},
        META_CLIENT: {"name": "attacker", "version": "0"},
        **params.get("_meta", {}),
        **meta,
    }
    return params


NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


class Mcp:
    """Raw JSON-RPC over streamable HTTP, either era; keeps a session id once given one."""

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str] | None = None,
        era: str = "modern",
        timeout: float = 20,
        path: str = "/mcp",
        http: httpx2.Client | None = None,
    ) -> None:
        self.endpoint = url + path
        self.headers = dict(headers or {})
        self.era = era
        self.session: str | None = None
        self.next_id = 1
        self.http = http or httpx2.Client(timeout=timeout)
        self._own_http = http is None

    def close(self) -> None:
        if self._own_http:
            self.http.close()

    def __enter__(self) -> Mcp:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request_headers(self, body: Json, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        headers = {"Accept": ACCEPT, "Content-Type": "application/json", **self.headers}
        if self.era == "modern" and isinstance(body, dict) and "method" in body:
            headers["MCP-Protocol-Version"] = MODERN
            headers["Mcp-Method"] = body["method"]
            key = NAMED.get(body["method"])
            value = (body.get("params") or {}).get(key) if key else None
            if isinstance(value, str):
                from mcp.shared.inbound import encode_header_value

                headers["Mcp-Name"] = encode_header_value(value)
        elif self.era == "handshake":
            headers["MCP-Protocol-Version"] = HANDSHAKE
        if self.session:
            headers["Mcp-Session-Id"] = self.session
        headers.update(extra or {})
        return headers

    def message(self, method: str, params: Json | None = None, request_id: Json = "auto") -> Json:
        if request_id == "auto":
            request_id = self.next_id
            self.next_id += 1
        if self.era == "modern" and method not in ("initialize",):
            params = modern_params(params)
        body: dict[str, Json] = {"jsonrpc": "2.0", "method": method}
        if request_id is not None:
            body["id"] = request_id
        if params is not None:
            body["params"] = params
        return body

    def post(
        self,
        body: Json,
        headers: Mapping[str, str] | None = None,
        raw: bytes | None = None,
    ) -> Answer:
        response = self.http.post(
            self.endpoint,
            content=raw if raw is not None else json.dumps(body).encode(),
            headers=self.request_headers(body, headers),
        )
        text = response.text
        return Answer(
            response.status_code,
            response.headers,
            text,
            parse_body(response.headers.get("content-type", ""), text),
        )

    def send(self, method: str, params: Json | None = None, **options: Any) -> Answer:
        return self.post(self.message(method, params), **options)

    def rpc(self, method: str, params: Json | None = None, **options: Any) -> Json:
        """The JSON-RPC response to one request (asserting there was one)."""
        answer = self.send(method, params, **options)
        return answer.only

    def initialize(self) -> Answer:
        """The handshake era's initialize + initialized; keeps the session id."""
        self.era = "handshake"
        answer = self.post(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": HANDSHAKE,
                    "capabilities": {},
                    "clientInfo": {"name": "attacker", "version": "0"},
                },
            }
        )
        self.session = answer.headers.get("mcp-session-id")
        if answer.status == 200:
            self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def call(self, tool: str, arguments: Json | None = None, **options: Any) -> Json:
        return self.rpc("tools/call", {"name": tool, "arguments": arguments or {}}, **options)


def tool_text(response: Json) -> str:
    """Everything a tools/call response says, as text (result content or error message)."""
    if "error" in response:
        return json.dumps(response["error"])
    result = response.get("result") or {}
    parts = [c.get("text", "") for c in result.get("content", []) if isinstance(c, dict)]
    return "\n".join(parts)


def refused(response: Json) -> bool:
    """A JSON-RPC error, or a tool error (``isError``)."""
    return "error" in response or bool((response.get("result") or {}).get("isError"))


# -- raw sockets ---------------------------------------------------------------------------


def raw_http(port: int, data: bytes, timeout: float = 10) -> bytes:
    """Send bytes to 127.0.0.1:port and read until the server closes (or timeout)."""
    chunks = []
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                break
            if not chunk:
                break
            chunks.append(chunk)
            if b"\r\n\r\n" in b"".join(chunks) and _complete(b"".join(chunks)):
                break
    return b"".join(chunks)


def _complete(data: bytes) -> bool:
    head, _, body = data.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value.strip())
    return False


def status_of(data: bytes) -> int:
    line = data.split(b"\r\n", 1)[0].split(b" ")
    return int(line[1]) if len(line) > 1 and line[1].isdigit() else 0


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


@dataclass
class Watch:
    """Polls a condition (for servers' asynchronous effects)."""

    timeout: float = 10.0

    def until(self, condition: Callable[[], bool]) -> bool:
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if condition():
                return True
            time.sleep(0.05)
        return condition()


def iter_sse(response: httpx2.Response) -> Iterator[Json]:
    """JSON-RPC messages from a streaming SSE response, as they arrive."""
    data: list[str] = []
    for line in response.iter_lines():
        if line.startswith("data:"):
            data.append(line[5:].lstrip(" "))
        elif not line and data:
            with contextlib.suppress(ValueError):
                yield json.loads("\n".join(data))
            data = []


class LegacySse:
    """The legacy HTTP+SSE transport (2024-11-05): GET /sse opens the stream whose first
    event names the POST endpoint; answers come back on the stream."""

    def __init__(self, url: str, headers: Mapping[str, str] | None = None) -> None:
        self.url = url
        self.headers = dict(headers or {})
        self.http = httpx2.Client(timeout=httpx2.Timeout(20, read=None))
        self.inbox: list[Json] = []
        self.endpoint: str | None = None
        self.status = 0
        self._opened = threading.Event()
        self._thread = threading.Thread(target=self._listen, daemon=True)
        self._thread.start()
        self._opened.wait(10)
        self.next_id = 1

    def _listen(self) -> None:
        try:
            with self.http.stream("GET", self.url + "/sse", headers=self.headers) as response:
                self.status = response.status_code
                if response.status_code != 200:
                    self._opened.set()
                    return
                event = ""
                for line in response.iter_lines():
                    if line.startswith("event:"):
                        event = line[6:].strip()
                    elif line.startswith("data:"):
                        data = line[5:].strip()
                        if event == "endpoint":
                            self.endpoint = data
                            self._opened.set()
                        else:
                            with contextlib.suppress(ValueError):
                                self.inbox.append(json.loads(data))
        except httpx2.HTTPError:
            pass
        finally:
            self._opened.set()

    def post(self, body: Json) -> int:
        assert self.endpoint, "no endpoint event"
        response = self.http.post(
            self.url + self.endpoint,
            content=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", **self.headers},
        )
        return response.status_code

    def rpc(self, method: str, params: Json | None = None, timeout: float = 10) -> Json:
        request_id = self.next_id
        self.next_id += 1
        self.post({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}})
        Watch(timeout).until(lambda: any(m.get("id") == request_id for m in self.inbox))
        replies = [m for m in self.inbox if m.get("id") == request_id]
        assert replies, f"no answer to {method} on the SSE stream"
        return replies[0]

    def initialize(self) -> Json:
        answer = self.rpc(
            "initialize",
            {
                "protocolVersion": "2024-11-05",
                "capabilities": {},
                "clientInfo": {"name": "attacker", "version": "0"},
            },
        )
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def close(self) -> None:
        self.http.close()


class Ws:
    """A WebSocket MCP connection (subprotocol ``mcp``, one message per text frame)."""

    def __init__(self, port: int, headers: Mapping[str, str] | None = None) -> None:
        from websockets.sync.client import connect

        self._connection = connect(
            f"ws://127.0.0.1:{port}/ws",
            additional_headers=dict(headers or {}),
            subprotocols=["mcp"],  # type: ignore[list-item]
            open_timeout=10,
        )
        self.ws = self._connection.__enter__()
        self.next_id = 1
        self.inbox: list[Json] = []

    def send(self, message: Json | str) -> None:
        self.ws.send(message if isinstance(message, str) else json.dumps(message))

    def receive(self, timeout: float = 10) -> Json:
        message = json.loads(self.ws.recv(timeout=timeout))
        self.inbox.append(message)
        return message

    def rpc(self, method: str, params: Json | None = None, timeout: float = 10) -> Json:
        request_id = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            message = self.receive(max(0.1, deadline - time.monotonic()))
            if message.get("id") == request_id:
                return message
        raise AssertionError(f"no answer to {method}")

    def initialize(self) -> Json:
        answer = self.rpc(
            "initialize",
            {
                "protocolVersion": HANDSHAKE,
                "capabilities": {},
                "clientInfo": {"name": "attacker", "version": "0"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def close(self) -> None:
        self._connection.__exit__(None, None, None)
