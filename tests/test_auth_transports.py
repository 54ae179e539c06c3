"""Transports, authentication and deployment of generated servers (issue 5): the manifest
sections, their checks, and the generated servers run for real: several uvicorn workers
under concurrent clients, OAuth with keys fetched from a JWKS URL, graceful shutdown."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from support import free_port, wait_for_port

from mcpgen.pipeline import Loaded, load_manifest
from mcpgen.problems import Level
from mcpgen.render import render_project

ROOT = Path(__file__).resolve().parent.parent
CALCULATOR = ROOT / "generated_examples" / "calculator"
SECURE = ROOT / "generated_examples" / "secure"

HEADER = """\
mcpgen: 1
server:
  name: demo
  description: A demo server.
tools:
  - name: ping
    description: Reply.
"""


def load(tmp_path: Path, body: str) -> Loaded:
    path = tmp_path / "m.yaml"
    path.write_text(HEADER + textwrap.dedent(body), encoding="utf-8")
    return load_manifest(path, False)


def messages(loaded: Loaded, level: Level) -> list[tuple[str, str]]:
    return [(p.field, p.message) for p in loaded.problems.sorted() if p.level is level]


# -- the manifest ------------------------------------------------------------------------


def test_secure_example_model() -> None:
    loaded = load_manifest(ROOT / "manifests" / "secure.yaml", True)
    assert loaded.manifest is not None, loaded.problems
    auth, http = loaded.manifest.auth, loaded.manifest.http
    assert auth.type == "oauth" and auth.enabled
    assert auth.scopes_supported == ("docs.read", "docs.write")
    assert auth.algorithms[0] == "RS256" and "HS256" not in auth.algorithms
    assert http.stateless and http.env_prefix == "SECURE_"
    assert (http.rate_limit, http.rate_burst) == (20.0, 40)
    assert http.cors_origins == ("https://app.example.com",)


def test_defaults(tmp_path: Path) -> None:
    manifest = load(tmp_path, "").manifest
    assert manifest is not None
    assert manifest.auth.type == "none" and manifest.auth.env == "DEMO_TOKENS"
    assert manifest.http.host == "127.0.0.1"
    assert manifest.http.retry_interval > 0 and manifest.http.event_store_size > 0
    assert manifest.http.rate_limit == 0


def test_api_key_header_default(tmp_path: Path) -> None:
    manifest = load(tmp_path, "auth: {type: apiKey}\n").manifest
    assert manifest is not None
    assert manifest.auth.header == "X-API-Key"


def test_opaque_tokens_need_only_an_introspection_endpoint(tmp_path: Path) -> None:
    loaded = load(
        tmp_path,
        "auth: {type: oauth, issuer: 'https://i', audience: a, "
        "introspectionUrl: 'https://i/introspect'}\n",
    )
    assert loaded.manifest is not None, loaded.problems
    auth = loaded.manifest.auth
    assert auth.introspection_url == "https://i/introspect" and auth.jwks_url is None
    http = render_project(loaded.manifest).generated["src/demo_mcp/_http.py"]
    assert 'introspection_url: str | None = "https://i/introspect"' in http


@pytest.mark.parametrize(
    ("body", "field", "fragment"),
    [
        (
            "auth: {type: oauth, issuer: 'http://auth.example.com', audience: a, jwksFile: k}\n",
            "auth.issuer",
            "https",
        ),
        ("auth: {type: oauth, audience: a, jwksFile: k}\n", "auth", "issuer"),
        ("auth: {type: oauth, issuer: 'https://i', audience: a}\n", "auth", "introspectionUrl"),
        (
            "auth: {type: oauth, issuer: 'https://i', audience: a, "
            "introspectionUrl: 'http://auth.example.com/introspect'}\n",
            "auth.introspectionUrl",
            "https",
        ),
        ("auth: {type: bearer, env: 'MY-TOKENS'}\n", "auth.env", "environment variable"),
        ("auth: {type: apiKey, header: 'X Key'}\n", "auth.header", "header name"),
    ],
)
def test_auth_errors(tmp_path: Path, body: str, field: str, fragment: str) -> None:
    loaded = load(tmp_path, body)
    assert loaded.manifest is None
    assert any(
        f == field and fragment in m for f, m in messages(loaded, Level.ERROR)
    ), loaded.problems


@pytest.mark.parametrize(
    ("body", "field", "fragment"),
    [
        ("transports: {http: {host: 0.0.0.0}}\n", "transports.http.host", "without authentication"),
        (
            "transports: {http: {host: 0.0.0.0}}\nauth: {type: bearer}\n",
            "transports.http.host",
            "allowedHosts",
        ),
        (
            "auth: {type: bearer, hideUnauthorizedTools: true}\n",
            "auth.hideUnauthorizedTools",
            "oauth",
        ),
        ("auth: {type: bearer, issuer: 'https://x'}\n", "auth.issuer", "only with auth type oauth"),
        (
            "transports: {http: {corsOrigins: ['*']}}\n",
            "transports.http.corsOrigins",
            "any web page",
        ),
    ],
)
def test_auth_warnings(tmp_path: Path, body: str, field: str, fragment: str) -> None:
    loaded = load(tmp_path, body)
    assert loaded.manifest is not None
    assert any(
        f == field and fragment in m for f, m in messages(loaded, Level.WARNING)
    ), loaded.problems


def test_scopes_without_oauth_warn(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        HEADER.replace("    description: Reply.\n", "    description: Reply.\n    scopes: [a]\n")
        + "auth: {type: bearer}\n",
        encoding="utf-8",
    )
    loaded = load_manifest(path, False)
    warning = "scopes are enforced only with auth type oauth (bearer keys grant every scope)"
    assert ("tools[0].scopes", warning) in messages(loaded, Level.WARNING)


@pytest.mark.parametrize(
    "body",
    [
        "transports: {http: {rateLimit: {requestsPerSecond: 0}}}\n",
        "transports: {http: {maxBodySize: 10}}\n",
        "auth: {type: oauth, algorithms: [HS256]}\n",
        "transports: {http: {allowedHosts: example.com}}\n",
    ],
)
def test_schema_rejects(tmp_path: Path, body: str) -> None:
    assert load(tmp_path, body).manifest is None


# -- what is generated -------------------------------------------------------------------


def test_generated_files_and_settings(tmp_path: Path) -> None:
    manifest = load_manifest(ROOT / "manifests" / "secure.yaml", True).manifest
    assert manifest is not None
    files = render_project(manifest).generated
    for name in ("_http.py", "_websocket.py", "asgi.py", "__main__.py"):
        assert f"src/secure_mcp/{name}" in files
    http = files["src/secure_mcp/_http.py"]
    assert 'AUTH_TYPE = "oauth"' in http
    assert '"write_document": ("docs.write",)' in http
    docker = files["Dockerfile"]
    assert 'CMD ["secure"]' in docker and "SECURE_HOST=0.0.0.0" in docker and "USER 10001" in docker
    assert "/healthz" in docker
    pyproject = files["pyproject.toml"]
    assert '"pyjwt[crypto]' in pyproject and '"websockets' in pyproject


def test_no_secret_reaches_generated_code(tmp_path: Path) -> None:
    """Static keys are read from the environment at run time, never written into code."""
    loaded = load(tmp_path, "auth: {type: bearer, env: DEMO_KEYS}\n")
    assert loaded.manifest is not None
    http = render_project(loaded.manifest).generated["src/demo_mcp/_http.py"]
    assert 'AUTH_ENV = "DEMO_KEYS"' in http
    assert "os.environ" in http


# -- generated servers, running ----------------------------------------------------------


@pytest.mark.parametrize("auth", ["bearer", "apiKey"])
def test_static_key_servers_pass_their_own_tests(tmp_path: Path, auth: str) -> None:
    """No shipped example uses static keys: build one of each kind and run its generated
    transport and auth tests (two keys as in a rotation, wrong keys, every transport,
    sessions bound to the key that opened them) and ``mypy --strict`` on them."""
    from click.testing import CliRunner

    from mcpgen.cli import main

    manifest = tmp_path / "m.yaml"
    manifest.write_text(HEADER + f"auth: {{type: {auth}}}\n", encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["build", str(manifest), "-o", str(out)])
    assert result.exit_code == 0, result.output
    env = {**os.environ, "PYTHONPATH": str(out / "src"), "MYPYPATH": str(out / "src")}
    tests = ["tests/test_transport_and_auth.py"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", *tests],
        cwd=out, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "test_a_session_belongs_to_the_caller_that_opened_it PASSED" in done.stdout
    assert "test_wrong_key_is_refused PASSED" in done.stdout
    typed = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "src", *tests],
        cwd=out, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert typed.returncode == 0, typed.stdout[-3000:]


def start(
    example: Path, args: list[str], env: dict[str, str] | None = None, log: Path | None = None
) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    package = example.name + "_mcp"
    process = subprocess.Popen(
        [sys.executable, "-m", package, *args, "--port", str(port)],
        env={**os.environ, "PYTHONPATH": str(example / "src"), **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb") if log else subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for_port(port, process)
    except AssertionError:
        process.kill()
        raise
    return process, port


def stop(process: subprocess.Popen[bytes]) -> int:
    process.terminate()
    try:
        return process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        return process.wait(timeout=10)


def probe(example: Path, script: str, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        env={**os.environ, "PYTHONPATH": str(example / "src"), **(env or {})},
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-4000:]
    return done.stdout


CONCURRENT = """
import json, sys, urllib.request
import anyio
from calculator_mcp.client import CalculatorClient

URL = f"http://127.0.0.1:{sys.argv[1]}"
CLIENTS, CALLS = 12, 10
results = {"ok": 0, "errors": []}

async def one_client(index: int) -> None:
    mode = "legacy" if index % 2 else "2026-07-28"
    try:
        async with CalculatorClient.http(URL + "/mcp", mode=mode) as client:
            for call in range(CALLS):
                answer = await client.add(numbers=[index, call, 0.5])
                assert answer.sum == index + call + 0.5, answer
                results["ok"] += 1
    except Exception as exc:
        results["errors"].append(repr(exc))

async def main() -> None:
    async with anyio.create_task_group() as tg:
        for index in range(CLIENTS):
            tg.start_soon(one_client, index)

anyio.run(main)
pids = set()
for _ in range(40):
    with urllib.request.urlopen(URL + "/healthz", timeout=10) as response:
        pids.add(json.load(response)["pid"])
results["pids"] = len(pids)
print(json.dumps(results))
"""


def test_stateless_http_with_two_workers_under_concurrent_clients() -> None:
    """Stateless HTTP scales out: any worker answers any request (settings reach the
    workers through the environment)."""
    process, port = start(CALCULATOR, ["--transport", "http", "--stateless", "--workers", "2"])
    try:
        results = json.loads(probe(CALCULATOR, CONCURRENT, str(port)).strip().splitlines()[-1])
    finally:
        stop(process)
    assert results["errors"] == []
    assert results["ok"] == 12 * 10
    assert 1 <= results["pids"] <= 2


def test_workers_need_stateless_http() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "calculator_mcp",
            "--transport",
            "http",
            "--no-stateless",
            "--workers",
            "2",
        ],
        env={**os.environ, "PYTHONPATH": str(CALCULATOR / "src")},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "stateless" in done.stderr


def test_http_server_shuts_down_gracefully(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    process, port = start(
        CALCULATOR,
        ["--transport", "http", "--shutdown-timeout", "3", "--log-format", "json"],
        log=log,
    )
    probe(
        CALCULATOR,
        "import anyio, sys\n"
        "from calculator_mcp.client import CalculatorClient\n"
        "async def main():\n"
        "    async with CalculatorClient.http(f'http://127.0.0.1:{sys.argv[1]}/mcp') as c:\n"
        "        await c.add(numbers=[1, 2])\n"
        "anyio.run(main)\n",
        str(port),
    )
    started = time.monotonic()
    status = stop(process)
    assert time.monotonic() - started < 15
    assert status in (0, -signal.SIGTERM)  # uvicorn re-raises the signal after shutting down
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    assert any(line["message"] == "Application shutdown complete." for line in lines), lines
    assert any(
        line.get("logger") == "uvicorn.access" and line.get("status") == 200 for line in lines
    )


class _Jwks(BaseHTTPRequestHandler):
    document = b"{}"
    fetches = 0

    def do_GET(self) -> None:
        type(self).fetches += 1
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(self.document)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def jwks_server() -> Iterator[tuple[str, Any]]:
    """An authorization server's JWKS endpoint on this machine, with a key made here."""
    from cryptography.hazmat.primitives.asymmetric import rsa
    from jwt.algorithms import RSAAlgorithm

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = json.loads(RSAAlgorithm.to_jwk(key.public_key()))
    jwk.update(kid="k1", alg="RS256", use="sig")
    _Jwks.document = json.dumps({"keys": [jwk]}).encode()
    _Jwks.fetches = 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Jwks)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/jwks.json", key
    finally:
        server.shutdown()
        server.server_close()


OAUTH_PROBE = """
import json, sys, time
import anyio, jwt
from mcp.shared.exceptions import MCPError
from secure_mcp.client import SecureClient, ToolCallError
from secure_mcp._websocket import websocket_client

port, key_file = sys.argv[1], sys.argv[2]
from cryptography.hazmat.primitives.serialization import load_pem_private_key
key = load_pem_private_key(open(key_file, "rb").read(), None)

def token(scopes, **changes):
    now = int(time.time())
    claims = {"iss": "https://auth.example.com", "aud": "https://mcp.example.com/mcp",
              "sub": "alice", "iat": now, "exp": now + 600, "scope": " ".join(scopes)}
    claims.update(changes)
    return jwt.encode(claims, key, algorithm="RS256", headers={"kid": "k1"})

async def main():
    out = {}
    reader = {"Authorization": "Bearer " + token(["docs.read"])}
    async with SecureClient.http(f"http://127.0.0.1:{port}/mcp", headers=reader) as c:
        me = await c.whoami()
        out["whoami"] = [me.authenticated, me.subject, me.scopes]
        out["titles"] = (await c.list_documents()).titles
        try:
            await c.write_document(title="x", text="y")
            out["write"] = "allowed"
        except (MCPError, ToolCallError) as exc:
            out["write"] = str(exc)
    writer = {"Authorization": "Bearer " + token(["docs.read", "docs.write"])}
    async with SecureClient.http(f"http://127.0.0.1:{port}/mcp", headers=writer) as c:
        out["written"] = (await c.write_document(title="x", text="hello")).size
    try:
        expired = {"Authorization": "Bearer " + token(["docs.read"], exp=int(time.time()) - 600)}
        async with SecureClient.http(f"http://127.0.0.1:{port}/mcp", headers=expired) as c:
            await c.list_documents()
        out["expired"] = "allowed"
    except BaseException as exc:
        out["expired"] = "refused"
    print(json.dumps(out))

anyio.run(main)
"""


def test_oauth_with_keys_from_a_jwks_url(jwks_server: tuple[str, Any], tmp_path: Path) -> None:
    from cryptography.hazmat.primitives import serialization

    url, key = jwks_server
    key_file = tmp_path / "key.pem"
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    process, port = start(SECURE, ["--transport", "http"], env={"SECURE_JWKS_URL": url})
    try:
        out = json.loads(probe(SECURE, OAUTH_PROBE, str(port), str(key_file)).splitlines()[-1])
    finally:
        stop(process)
    assert out["whoami"] == [True, "alice", ["docs.read"]]
    assert "welcome" in out["titles"]
    assert "docs.write" in out["write"]
    assert out["written"] == 5
    assert out["expired"] == "refused"
    assert _Jwks.fetches == 1  # cached


class _Introspect(BaseHTTPRequestHandler):
    """An authorization server's token introspection endpoint (RFC 7662)."""

    tokens: ClassVar[dict[str, dict[str, Any]]] = {}
    hits: ClassVar[dict[str, int]] = {}
    credentials = "Basic " + base64.b64encode(b"rs:s3cret").decode()

    def do_POST(self) -> None:
        from urllib.parse import parse_qs

        length = int(self.headers.get("Content-Length", "0"))
        form = parse_qs(self.rfile.read(length).decode())
        token = form.get("token", [""])[0]
        _Introspect.hits[token] = _Introspect.hits.get(token, 0) + 1
        if self.headers.get("Authorization") != self.credentials:
            status, body = 401, {"error": "invalid_client"}
        elif token == "broken":
            status, body = 500, {"error": "server_error"}
        else:
            status, body = 200, self.tokens.get(token, {"active": False})
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


INTROSPECTION_PROBE = """
import json, sys
import anyio, httpx2
from secure_mcp.client import SecureClient

url = f"http://127.0.0.1:{sys.argv[1]}/mcp"
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}

async def main():
    out = {}
    for _ in range(2):  # the second session's token check comes from the cache
        async with SecureClient.http(url, headers={"Authorization": "Bearer reader"}) as c:
            me = await c.whoami()
            out["whoami"] = [me.authenticated, me.subject, me.scopes]
    async with SecureClient.http(url, headers={"Authorization": "Bearer writer"}) as c:
        out["written"] = (await c.write_document(title="x", text="hello")).size
    async with httpx2.AsyncClient(timeout=30) as http:
        for token in sys.argv[2:]:
            response = await http.post(url, json=INIT, headers={
                "Authorization": f"Bearer {token}", "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream"})
            out[token] = [response.status_code, response.headers.get("www-authenticate", "")]
    print(json.dumps(out))

anyio.run(main)
"""


def test_oauth_with_opaque_tokens_and_introspection(tmp_path: Path) -> None:
    """Opaque tokens are checked at an introspection endpoint (RFC 7662) with the server's
    client credentials: active and for this audience, else 401; the endpoint failing is
    503; an active answer is cached."""
    now = int(time.time())
    good = {"active": True, "iss": "https://auth.example.com", "client_id": "app1",
            "aud": ["https://mcp.example.com/mcp"], "exp": now + 600, "sub": "alice"}  # fmt: skip
    _Introspect.tokens = {
        "reader": {**good, "scope": "docs.read"},
        "writer": {**good, "scope": "docs.read docs.write", "sub": "bob"},
        "inactive": {"active": False},
        "no-audience": {k: v for k, v in good.items() if k != "aud"},
        "other-audience": {**good, "aud": "https://other.example/mcp"},
        "other-issuer": {**good, "iss": "https://evil.example"},
        "expired": {**good, "exp": now - 600},
    }
    _Introspect.hits = {}
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Introspect)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = {
        "SECURE_INTROSPECTION_URL": f"http://127.0.0.1:{server.server_address[1]}/introspect",
        "SECURE_INTROSPECTION_CLIENT_ID": "rs",
        "SECURE_INTROSPECTION_CLIENT_SECRET": "s3cret",
    }
    refused = ["inactive", "no-audience", "other-audience", "other-issuer", "expired", "unknown"]
    try:
        process, port = start(SECURE, ["--transport", "http"], env=env)
        try:
            lines = probe(SECURE, INTROSPECTION_PROBE, str(port), *refused, "broken")
        finally:
            stop(process)
    finally:
        server.shutdown()
        server.server_close()
    out = json.loads(lines.splitlines()[-1])
    assert out["whoami"] == [True, "alice", ["docs.read"]]
    assert out["written"] == 5
    for token in refused:
        status, challenge = out[token]
        assert status == 401 and 'error="invalid_token"' in challenge, (token, out[token])
    assert out["broken"][0] == 503
    assert _Introspect.hits["reader"] == 1  # two sessions, one question
    assert _Introspect.hits["inactive"] == 1


def test_introspection_without_a_secret_is_a_config_error(tmp_path: Path) -> None:
    script = (
        "from secure_mcp import _http\n"
        "s = _http.Settings(transport='http', introspection_url='http://127.0.0.1:9/i')\n"
        "try:\n"
        "    _http.create_app(s, environ={'SECURE_INTROSPECTION_CLIENT_ID': 'rs'})\n"
        "except _http.ConfigError as exc:\n"
        "    print('config error:', exc)\n"
    )
    assert "INTROSPECTION_CLIENT_SECRET" in probe(SECURE, script)
