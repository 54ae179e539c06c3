"""OpenAPI end to end: build a server from tests/fixtures/openapi-e2e/shop.yaml, run a real
upstream on 127.0.0.1, and call every operation through the generated server and its
typed client: JSON, form and text bodies/responses, auth from the environment, upstream
errors as tool errors, and invalid arguments that never reach the upstream."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import running

from mcpgen.cli import main
from mcpgen.runtime.testing import free_port

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "openapi-e2e"

PROBE = r"""
import anyio, json, sys
from shop_mcp.client import ShopClient, ToolCallError

async def main():
    async with ShopClient.stdio(env=dict(__import__("os").environ), mode=sys.argv[1]) as shop:
        created = await shop.create_item(name="lamp", price=12.5, tags=["home"])
        assert created.id == 1 and created.name == "lamp", created
        await shop.create_item(name="mug", price=3)
        listed = await shop.list_items(limit=5, tag=["home"])
        assert [i.name for i in listed.result] == ["lamp"], listed
        got = await shop.get_item(item_id=1)
        assert got.price == 12.5
        try:
            await shop.get_item(item_id=99)
            raise AssertionError("expected a tool error")
        except ToolCallError as exc:
            assert "HTTP 404" in exc.message and "no item 99" in exc.message, exc.message
        label = await shop.item_label(item_id=1, x_locale="fr")
        assert label[0].text == "ITEM 1 [fr]", label
        themed = await shop.item_label(item_id=1, theme="dark")  # a cookie parameter
        assert themed[0].text == "ITEM 1 [en] (dark)", themed
        thanks = await shop.send_feedback(message="great", stars=5)  # an optional body, flat
        assert thanks.received == "great" and thanks.stars == 5, thanks
        try:
            await shop.client.call_tool("create_item", {"name": "", "price": -1})
        except Exception:
            pass
        bad = await shop.client.call_tool("create_item", {"name": "x", "price": "free"})
        assert bad.is_error and "Invalid arguments" in bad.content[0].text, bad
        assert (await shop.delete_item(item_id=2)) is not None
    print("ok")

anyio.run(main)
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("shop") / "out"
    result = CliRunner().invoke(main, ["build", str(FIXTURES / "shop.yaml"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture
def upstream() -> Iterator[str]:
    port = free_port()
    with running([sys.executable, str(FIXTURES / "upstream.py"), str(port)], port):
        yield f"http://127.0.0.1:{port}"


def probe(
    project: Path, upstream: str, mode: str, key: str | None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(project / "src"), "SHOP_API_BASE_URL": upstream + "/api"}
    env.pop("SHOP_API_APIKEY", None)
    if key is not None:
        env["SHOP_API_APIKEY"] = key
    return subprocess.run(
        [sys.executable, "-c", PROBE, mode], env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_every_operation_through_the_typed_client(project: Path, upstream: str, mode: str) -> None:
    done = probe(project, upstream, mode, "secret-key")
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr[-4000:]
    seen = json.loads(urllib.request.urlopen(upstream + "/seen").read())
    assert not any("price" in line for line in seen)
    # The invalid create (price: "free") never reached the upstream: two creates only.
    assert sum(1 for line in seen if line.startswith("POST /api/items")) == 2, seen


def test_missing_credentials_name_the_variable(project: Path, upstream: str) -> None:
    script = (
        "import anyio, os\n"
        "from shop_mcp.client import ShopClient, ToolCallError\n"
        "async def main():\n"
        "    async with ShopClient.stdio(env=dict(os.environ)) as shop:\n"
        "        try:\n"
        "            await shop.get_item(item_id=1)\n"
        "        except ToolCallError as exc:\n"
        "            print(exc.message)\n"
        "anyio.run(main)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(project / "src"), "SHOP_API_BASE_URL": upstream + "/api"}
    env.pop("SHOP_API_APIKEY", None)
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert "missing credentials" in done.stdout and "SHOP_API_APIKEY" in done.stdout, done.stderr[
        -3000:
    ]


def test_wrong_key_is_an_upstream_error(project: Path, upstream: str) -> None:
    done = probe(project, upstream, "legacy", "wrong")
    assert done.returncode != 0
    assert "HTTP 401" in done.stderr


def test_generated_project_checks(project: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(project / "src"), "MCP_TEST_TRANSPORTS": "memory,stdio"}
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=project, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert tests.returncode == 0, tests.stdout[-3000:]


META_PROBE = r"""
import anyio, json, os, sys
from shop_mcp.client import ShopClient

async def main():
    async with ShopClient.stdio(env=dict(os.environ), mode=sys.argv[1]) as shop:
        tools = (await shop.client.list_tools()).tools
        assert [t.name for t in tools] == [
            "search_operations", "describe_operation", "call_operation"
        ], tools
        found = await shop.client.call_tool("search_operations", {"query": "item"})
        names = [o["name"] for o in found.structured_content["operations"]]
        assert "create_item" in names, names
        described = await shop.client.call_tool("describe_operation", {"name": "create_item"})
        assert described.structured_content["inputSchema"]["required"] == ["name", "price"]
        created = await shop.create_item(name="lamp", price=2)   # typed, via call_operation
        assert created.name == "lamp", created
        bad = await shop.client.call_tool(
            "call_operation", {"name": "create_item", "arguments": {"name": "x"}}
        )
        assert bad.is_error and "price" in bad.content[0].text, bad
    print("ok")

anyio.run(main)
"""


def test_meta_tool_mode(tmp_path: Path, upstream: str) -> None:
    (tmp_path / "shop.yaml").write_text((FIXTURES / "shop.yaml").read_text())
    manifest = tmp_path / "mcpgen.yaml"
    manifest.write_text(
        "mcpgen: 1\nserver: {name: shop}\nopenapi: {source: shop.yaml, metaTools: true}\n"
    )
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["build", str(manifest), "-o", str(out)])
    assert result.exit_code == 0, result.output
    env = {
        **os.environ,
        "PYTHONPATH": str(out / "src"),
        "SHOP_API_BASE_URL": upstream + "/api",
        "SHOP_API_APIKEY": "secret-key",
    }
    for mode in ("legacy", "2026-07-28"):
        done = subprocess.run(
            [sys.executable, "-c", META_PROBE, mode],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0 and "ok" in done.stdout, done.stderr[-4000:]


OVERRIDE = """
from typing import Any

from ..._runtime import Context, ToolReturn


async def handle(arguments: dict[str, Any], ctx: Context) -> ToolReturn:
    return {"id": arguments["itemId"], "name": "from the override", "price": 0}
"""

OVERRIDE_PROBE = r"""
import anyio
from mcp.client import Client
from shop_mcp.server import create_server

async def main():
    async with Client(create_server(), mode="legacy") as client:
        result = await client.call_tool("get_item", {"itemId": 7})
        assert result.structured_content["name"] == "from the override", result
    print("ok")

anyio.run(main)
"""


def test_an_override_replaces_the_http_call_and_survives_rebuilds(tmp_path: Path) -> None:
    out = tmp_path / "out"
    spec = str(FIXTURES / "shop.yaml")
    assert CliRunner().invoke(main, ["build", spec, "-o", str(out)]).exit_code == 0
    override = out / "src" / "shop_mcp" / "handlers" / "tools" / "get_item.py"
    override.parent.mkdir(parents=True, exist_ok=True)
    (override.parent / "__init__.py").write_text("")
    override.write_text(OVERRIDE)
    assert CliRunner().invoke(main, ["build", spec, "-o", str(out)]).exit_code == 0
    assert override.read_text() == OVERRIDE
    assert CliRunner().invoke(main, ["build", spec, "-o", str(out), "--check"]).exit_code == 0
    env = {**os.environ, "PYTHONPATH": str(out / "src"), "SHOP_API_BASE_URL": "http://127.0.0.1:9"}
    done = subprocess.run(
        [sys.executable, "-c", OVERRIDE_PROBE], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr[-3000:]


FILES_PROBE = r"""
import anyio, base64, os
from files_mcp.client import FilesClient

async def main():
    async with FilesClient.stdio(env=dict(os.environ)) as files:
        stored = await files.upload_document(title="notes", content="hello world")
        assert stored.title == "notes" and stored.size == 11, stored
        png = b"\x89PNG\r\n\x1a\nfake"
        put = await files.put_blob(name="logo", body=base64.b64encode(png).decode())
        assert put.bytes == len(png), put
        got = await files.get_blob(name="logo")
        assert got[0].type == "image" and base64.b64decode(got[0].data) == png, got
    print("ok")

anyio.run(main)
"""


def test_multipart_binary_and_oauth2_client_credentials(tmp_path: Path, upstream: str) -> None:
    out = tmp_path / "out"
    spec = str(FIXTURES / "files.yaml")
    assert CliRunner().invoke(main, ["build", spec, "-o", str(out)]).exit_code == 0
    env = {
        **os.environ,
        "PYTHONPATH": str(out / "src"),
        "FILES_API_BASE_URL": upstream + "/api",
        "FILES_API_OAUTH_CLIENT_ID": "app",
        "FILES_API_OAUTH_CLIENT_SECRET": "s3cret",
    }
    done = subprocess.run(
        [sys.executable, "-c", FILES_PROBE], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr[-4000:]
    tokens = json.loads(urllib.request.urlopen(upstream + "/tokens").read())
    assert len(tokens) == 1, "the token is fetched once and cached"
