"""Transports, authentication and deployment of generated servers (issue 5): the manifest
sections, their checks and what the build writes for them, and generated servers run for
real where a process is the point: several uvicorn workers under concurrent clients, a
graceful shutdown, static-key servers passing their own generated tests.

How the runtime authenticates (static keys, JWTs from a JWKS file or URL, introspected
opaque tokens) and what each transport refuses is tested on ``mcpgen.runtime`` directly,
in tests/runtime (test_rt_auth.py, test_rt_auth_remote.py, test_rt_sessions.py).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from support import wait_for_port

from mcpgen.pipeline import Loaded, load_manifest
from mcpgen.problems import Level
from mcpgen.render import render_project
from mcpgen.runtime.testing import free_port

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
    spec = json.loads(render_project(loaded.manifest).generated["src/demo_mcp/_spec.json"])
    assert spec["auth"]["introspectionUrl"] == "https://i/introspect"
    assert "jwksUrl" not in spec["auth"]
    variables = {v["name"]: v for v in spec["environment"]}
    assert variables["DEMO_INTROSPECTION_CLIENT_SECRET"]["secret"] is True
    assert variables["DEMO_INTROSPECTION_CLIENT_ID"]["secret"] is False


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
        (  # its labels name the tools discovery hides, to anyone who reaches the port
            "auth: {type: oauth, issuer: 'https://i', audience: a, jwksFile: k.json,"
            " hideUnauthorizedTools: true}\nobservability: {metrics: public}\n",
            "observability.metrics",
            "hideUnauthorizedTools",
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
    for name in (
        "_runtime/http_app.py",
        "_runtime/websocket.py",
        "_runtime/asgi.py",
        "__main__.py",
    ):
        assert f"src/secure_mcp/{name}" in files
    spec = json.loads(files["src/secure_mcp/_spec.json"])
    assert spec["auth"]["type"] == "oauth" and spec["auth"]["hideUnauthorized"] is True
    scopes = {t["definition"]["name"]: t.get("scopes") for t in spec["tools"]}
    assert scopes["write_document"] == ["docs.write"] and scopes["whoami"] is None
    assert spec["settings"]["env_prefix"] == "SECURE_" and spec["settings"]["stateless"]
    docker = files["Dockerfile"]
    assert 'CMD ["secure"]' in docker and "SECURE_HOST=0.0.0.0" in docker and "USER 10001" in docker
    assert "/healthz" in docker
    pyproject = files["pyproject.toml"]
    assert '"pyjwt[crypto]' in pyproject and '"websockets' in pyproject


def test_no_secret_reaches_generated_code(tmp_path: Path) -> None:
    """Static keys are read from the environment at run time, never written into code:
    the build knows the variable's name only, and lists it as a required secret."""
    loaded = load(tmp_path, "auth: {type: bearer, env: DEMO_KEYS}\n")
    assert loaded.manifest is not None
    files = render_project(loaded.manifest).generated
    spec = json.loads(files["src/demo_mcp/_spec.json"])
    assert spec["auth"]["env"] == "DEMO_KEYS"
    [variable] = [v for v in spec["environment"] if v["name"] == "DEMO_KEYS"]
    assert variable["secret"] and variable["required"] and variable["default"] is None
    assert not any("DEMO_KEYS=" in text for name, text in files.items() if name.endswith(".py"))


# -- generated servers, running ----------------------------------------------------------


PING = """\
from __future__ import annotations

from ... import ToolReturn
from ...models import PingInput


async def handle(args: PingInput) -> ToolReturn:
    return "pong"
"""


@pytest.mark.slow
@pytest.mark.parametrize("auth", ["bearer", "apiKey"])
def test_static_key_servers_pass_their_own_tests(tmp_path: Path, auth: str) -> None:
    """No shipped example uses static keys: build one of each kind and run its generated
    tests (every transport, the test servers started with two keys as in a rotation) and
    ``mypy --strict`` on them."""
    from click.testing import CliRunner

    from mcpgen.cli import main

    manifest = tmp_path / "m.yaml"
    manifest.write_text(HEADER + f"auth: {{type: {auth}}}\n", encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["build", str(manifest), "-o", str(out)])
    assert result.exit_code == 0, result.output
    (out / "src" / "demo_mcp" / "handlers" / "tools" / "ping.py").write_text(PING, "utf-8")
    env = {**os.environ, "PYTHONPATH": str(out / "src"), "MYPYPATH": str(out / "src")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--stubs=fail", "tests"],
        cwd=out, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "failed" not in done.stdout, done.stdout[-2000:]
    typed = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "src", "tests"],
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
import json, sys
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
print(json.dumps(results))
"""


@pytest.mark.slow
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


@pytest.mark.slow
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
