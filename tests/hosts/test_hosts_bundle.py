"""``mcpgen bundle``: an MCP Bundle of every example passes the official ``mcpb validate``
(npm @anthropic-ai/mcpb) and ``mcpb info`` reads it; its server.json validates against the
MCP Registry's published schema; the bundle holds what the server needs to run."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import anyio
import pytest
from hostkit import EXAMPLE_NAMES, EXAMPLES, copy_example, mcpgen

from mcpgen.hosts import registry
from mcpgen.hosts.bundle import build_bundle
from mcpgen.hosts.project import describe

pytestmark = pytest.mark.timeout(300)


def unpack(bundle: Path, dest: Path) -> Path:
    with zipfile.ZipFile(bundle) as zf:
        zf.extractall(dest)
    return dest


def validate(mcpb: list[str], manifest_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*mcpb, "validate", str(manifest_dir / "manifest.json")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_every_example_bundles_and_passes_mcpb_validate(
    example: str, tmp_path: Path, mcpb: list[str]
) -> None:
    target = tmp_path / f"{example}.mcpb"
    done = mcpgen("bundle", str(EXAMPLES / example), "-o", str(target))
    assert done.returncode == 0, done.stderr
    unpacked = unpack(target, tmp_path / "unpacked")
    checked = validate(mcpb, unpacked)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "Manifest schema validation passes!" in checked.stdout
    info = subprocess.run(
        [*mcpb, "info", str(target)], capture_output=True, text=True, timeout=120, check=False
    )
    assert info.returncode == 0, info.stdout + info.stderr
    assert f"File: {example}.mcpb" in info.stdout and "Size:" in info.stdout

    project = describe(EXAMPLES / example)
    manifest = json.loads((unpacked / "manifest.json").read_text())
    assert manifest["name"] == project.name and manifest["version"] == project.version
    assert [t["name"] for t in manifest["tools"]] == [t["name"] for t in project.tools]
    assert [p["name"] for p in manifest["prompts"]] == [p["name"] for p in project.prompts]
    server = manifest["server"]
    assert server["type"] == "uv" and manifest["manifest_version"] == "0.4"
    assert server["mcp_config"]["command"] == "uv"
    assert (unpacked / server["entry_point"]).is_file()
    # the package source and its dependency list travel in the bundle
    assert (unpacked / "src" / project.package / "_spec.json").is_file()
    assert "package = false" in (unpacked / "pyproject.toml").read_text()
    assert not list(unpacked.rglob("__pycache__"))

    document = json.loads((tmp_path / "server.json").read_text())
    assert registry.problems(document) == []
    assert document["packages"][0]["identifier"] == project.distribution


def test_mcpb_validate_is_not_a_rubber_stamp(tmp_path: Path, mcpb: list[str]) -> None:
    project = describe(EXAMPLES / "calculator")
    build_bundle(project, tmp_path / "c.mcpb")
    unpacked = unpack(tmp_path / "c.mcpb", tmp_path / "u")
    manifest = json.loads((unpacked / "manifest.json").read_text())
    del manifest["author"]
    (unpacked / "manifest.json").write_text(json.dumps(manifest))
    checked = validate(mcpb, unpacked)
    assert checked.returncode != 0 and "author" in checked.stdout


def test_user_config_covers_the_needed_variables(tmp_path: Path) -> None:
    project = describe(EXAMPLES / "shop")
    built = build_bundle(project, tmp_path / "shop.mcpb")
    config = built.manifest["server"]["mcp_config"]
    assert config["env"] == {"SHOP_API_APIKEY": "${user_config.shop_api_apikey}"}
    assert config["args"][-2:] == ["--transport", "stdio"]
    assert built.manifest["user_config"] == {
        "shop_api_apikey": {
            "type": "string",
            "title": "SHOP_API_APIKEY",
            "description": "API key (apiKey)",
            "required": False,
            "sensitive": True,
        }
    }
    prompt = built.manifest["prompts"][0]
    assert prompt["name"] == "restock" and "${arguments." in prompt["text"]


def test_variables_from_the_environment_list(tmp_path: Path) -> None:
    root = copy_example("calculator", tmp_path, venv_script=False)
    spec_path = root / "src" / "calculator_mcp" / "_spec.json"
    spec = json.loads(spec_path.read_text())
    spec["environment"] = [
        {"name": "CALC_TOKEN", "description": "API token", "secret": True, "required": True,
         "default": None},
        {"name": "CALC_REGION", "description": "Region", "secret": False, "required": True,
         "default": "eu"},
        {"name": "CALCULATOR_PORT", "description": "Port", "secret": False, "required": False,
         "default": "8000", "transports": ["http"]},
        {"name": "CALCULATOR_TOKENS", "description": "Inbound keys", "secret": True,
         "required": True, "default": None, "transports": ["http", "sse", "websocket"]},
    ]  # fmt: skip
    spec_path.write_text(json.dumps(spec))
    project = describe(root)
    assert [v.name for v in project.needed_env()] == ["CALC_TOKEN", "CALC_REGION"]
    built = build_bundle(project, tmp_path / "c.mcpb")
    options = built.manifest["user_config"]
    assert options["calc_token"]["sensitive"] is True and options["calc_token"]["required"]
    assert options["calc_region"]["default"] == "eu" and "sensitive" not in options["calc_region"]
    document = registry.server_json(project, "io.github.example/calc")
    variables = document["packages"][0]["environmentVariables"]
    assert [(v["name"], v["isSecret"], v["isRequired"]) for v in variables] == [
        ("CALC_TOKEN", True, True),
        ("CALC_REGION", False, True),
    ]


def test_bundles_are_deterministic(tmp_path: Path) -> None:
    project = describe(EXAMPLES / "travel")
    one = build_bundle(project, tmp_path / "a.mcpb")
    two = build_bundle(project, tmp_path / "b.mcpb")
    assert (
        one.sha256 == two.sha256 == hashlib.sha256((tmp_path / "a.mcpb").read_bytes()).hexdigest()
    )


def test_a_bundle_that_cannot_be_written_is_exit_2_and_leaves_nothing_half_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from mcpgen.cli import main

    def bundle(output: Path) -> Any:
        return CliRunner().invoke(main, ["bundle", str(EXAMPLES / "calculator"), "-o", str(output)])

    (tmp_path / "a-file").write_text("x")
    result = bundle(tmp_path / "a-file" / "x.mcpb")
    assert result.exit_code == 2, result.output
    assert "error: cannot write: " in result.output and "internal error" not in result.output
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "server.json").mkdir()  # where server.json is written beside it
    result = bundle(tmp_path / "out" / "x.mcpb")
    assert result.exit_code == 2 and "is not a server.json mcpgen wrote" in result.output
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["server.json"]  # no x.mcpb

    def full(*args: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(zipfile.ZipFile, "writestr", full)
    result = bundle(tmp_path / "full" / "x.mcpb")
    assert result.exit_code == 2 and "No space left" in result.output, result.output
    assert list((tmp_path / "full").iterdir()) == []  # no x.mcpb.tmp


def test_a_file_that_is_not_our_bundle_is_not_overwritten(tmp_path: Path) -> None:
    """``-o notes.mcpb`` over the user's file: refused, located, the file as it was; a
    bundle mcpgen wrote there is replaced."""
    project = EXAMPLES / "calculator"
    for content in (b"my notes", zip_of({"server/main.py": b"print('someone else')"})):
        target = tmp_path / "x.mcpb"
        target.write_bytes(content)
        done = mcpgen("bundle", str(project), "-o", str(target))
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert done.stderr == (
            f"error: {target}: exists and is not a bundle mcpgen wrote; move it away or give "
            "another -o (left untouched)\n"
        )
        assert target.read_bytes() == content and sorted(tmp_path.iterdir()) == [target]
        target.unlink()
    assert mcpgen("bundle", str(project), "-o", str(target)).returncode == 0
    before = target.read_bytes()
    again = mcpgen("bundle", str(project), "-o", str(target))
    assert again.returncode == 0 and target.read_bytes() == before


def test_a_server_json_mcpgen_did_not_write_is_not_overwritten(tmp_path: Path) -> None:
    """server.json beside the bundle over the user's file (or another project's): refused,
    located, nothing written (no bundle either); one mcpgen wrote for this project is
    replaced even after its name was changed; ``--server-json`` writes elsewhere."""
    project, target, existing = (
        EXAMPLES / "calculator",
        tmp_path / "x.mcpb",
        tmp_path / "server.json",
    )
    pypi = {"registryType": "pypi", "identifier": describe(project).distribution}
    other = {**pypi, "identifier": "someone-else"}
    foreign = [
        "my notes",
        json.dumps({"$schema": registry.SCHEMA_URL, "name": "a/b", "packages": [other]}),
        json.dumps({"name": "a/b", "packages": [pypi]}),  # no registry $schema
    ]
    for content in foreign:
        existing.write_text(content)
        done = mcpgen("bundle", str(project), "-o", str(target))
        assert done.returncode == 2 and done.stderr == (
            f"error: {existing}: exists and is not a server.json mcpgen wrote for this project; "
            "move it away or give --server-json PATH (nothing written)\n"
        ), done.stderr
        assert existing.read_text() == content and list(tmp_path.iterdir()) == [existing]
    elsewhere = tmp_path / "registry.json"
    done = mcpgen("bundle", str(project), "-o", str(target), "--server-json", str(elsewhere))
    assert done.returncode == 0 and existing.read_text() == foreign[-1], done.stderr
    document = json.loads(elsewhere.read_text())
    existing.write_text(json.dumps({**document, "name": "io.github.me/calc"}))
    assert mcpgen("bundle", str(project), "-o", str(target)).returncode == 0
    assert json.loads(existing.read_text()) == document


def zip_of(files: dict[str, bytes]) -> bytes:
    import io

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buffer.getvalue()


def test_a_bundle_inside_the_project_is_not_packed_into_the_next(tmp_path: Path) -> None:
    project = copy_example("calculator", tmp_path)
    inner = project / "src" / "old.mcpb"
    assert mcpgen("bundle", str(project), "-o", str(inner)).returncode == 0
    done = mcpgen("bundle", str(project), "-o", str(tmp_path / "new.mcpb"))
    assert done.returncode == 0, done.stderr
    with zipfile.ZipFile(tmp_path / "new.mcpb") as zf:
        assert not [n for n in zf.namelist() if n.endswith(".mcpb")]
    assert "left out of the bundle: src/old.mcpb (a bundle: not packed into another)" in (
        done.stderr
    )


def test_server_json_with_an_mcpb_release_validates(tmp_path: Path) -> None:
    url = "https://github.com/example/shop/releases/download/v2.0.0/shop-2.0.0.mcpb"
    target = tmp_path / "shop.mcpb"
    done = mcpgen(
        "bundle", str(EXAMPLES / "shop"), "-o", str(target), "--registry-name",
        "io.github.example/shop", "--mcpb-url", url, "--repository",
        "https://github.com/example/shop",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    document = json.loads((tmp_path / "server.json").read_text())
    assert registry.problems(document) == []
    assert document["$schema"] == registry.SCHEMA_URL
    assert document["repository"] == {"url": "https://github.com/example/shop", "source": "github"}
    pypi, bundle = document["packages"]
    assert pypi["registryType"] == "pypi" and pypi["runtimeHint"] == "uvx"
    assert bundle == {
        "registryType": "mcpb",
        "identifier": url,
        "version": "2.0.0",
        "fileSha256": hashlib.sha256(target.read_bytes()).hexdigest(),
        "transport": {"type": "stdio"},
        "environmentVariables": pypi["environmentVariables"],
    }
    target.unlink()
    bad = mcpgen("bundle", str(EXAMPLES / "shop"), "-o", str(target), "--registry-name", "shop")
    assert bad.returncode == 2 and "reverse-DNS" in bad.stderr
    assert not target.exists()  # refused before the bundle was written


def test_server_json_goes_into_a_folder_that_does_not_exist_yet(tmp_path: Path) -> None:
    target, registry_file = tmp_path / "shop.mcpb", tmp_path / "registry" / "server.json"
    done = mcpgen(
        "bundle", str(EXAMPLES / "shop"), "-o", str(target), "--server-json", str(registry_file)
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(registry_file.read_text())["packages"] and target.is_file()


def test_the_schema_rejects_what_the_registry_rejects() -> None:
    project = describe(EXAMPLES / "calculator")
    document: dict[str, Any] = registry.server_json(project)
    assert registry.problems(document) == []
    for broken in (
        {**document, "description": "x" * 101},
        {**document, "name": "no-slash"},
        {k: v for k, v in document.items() if k != "version"},
        {**document, "packages": [{**document["packages"][0], "version": "latest"}]},
    ):
        assert registry.problems(broken), broken


async def _tools_over_stdio(argv: list[str], cwd: Path) -> list[str]:
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    # a host passes little of its environment; this machine's TLS setup must reach uv
    keep = ("SSL_CERT_FILE", "SSL_CERT_DIR", "UV_CACHE_DIR", "UV_INDEX_URL", "UV_NATIVE_TLS")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    params = StdioServerParameters(command=argv[0], args=argv[1:], cwd=cwd, env=env)
    async with Client(params, mode="legacy", read_timeout_seconds=240) as client:
        return sorted(t.name for t in (await client.list_tools()).tools)


def _substitute(config: dict[str, Any], dirname: Path) -> list[str]:
    return [a.replace("${__dirname}", str(dirname)) for a in [config["command"], *config["args"]]]


@pytest.mark.slow
def test_a_uv_bundle_runs_where_the_host_unpacks_it(tmp_path: Path) -> None:
    uv = shutil.which("uv") or shutil.which("uv", path=str(Path(sys.executable).parent))
    if uv is None:
        pytest.skip("uv is not installed")
    built = build_bundle(describe(EXAMPLES / "calculator"), tmp_path / "c.mcpb")
    unpacked = unpack(built.path, tmp_path / "installed")
    argv = _substitute(built.manifest["server"]["mcp_config"], unpacked)
    argv[0] = uv
    names = anyio.run(_tools_over_stdio, argv, tmp_path)
    assert names == ["add", "convert_units", "divide", "random_fact", "weather_current"]


@pytest.mark.slow
def test_a_vendored_python_bundle_runs_on_its_own_libraries(tmp_path: Path) -> None:
    built = build_bundle(describe(EXAMPLES / "calculator"), tmp_path / "c.mcpb", "python")
    assert built.manifest["server"]["type"] == "python"
    assert built.manifest["compatibility"]["platforms"] == ["linux"]
    unpacked = unpack(built.path, tmp_path / "installed")
    assert (unpacked / "server" / "lib" / "mcp").is_dir()
    argv = _substitute(built.manifest["server"]["mcp_config"], unpacked)
    # -S: no site-packages, so the server can only import what the bundle carries
    argv = [sys.executable, "-S", *argv[1:]]
    names = anyio.run(_tools_over_stdio, argv, tmp_path)
    assert names == ["add", "convert_units", "divide", "random_fact", "weather_current"]


def test_a_bundle_and_server_json_written_into_src_are_not_packed_next_time(
    tmp_path: Path,
) -> None:
    project = copy_example("calculator", tmp_path)
    target = project / "src" / "calc.zip"  # not named .mcpb: its own output all the same
    for _ in range(2):
        assert mcpgen("bundle", str(project), "-o", str(target)).returncode == 0
    with zipfile.ZipFile(target) as zf:
        assert not {"src/calc.zip", "src/server.json"} & set(zf.namelist())


def test_a_project_with_stub_handlers_is_refused_unless_allow_stubs(tmp_path: Path) -> None:
    """A bundle goes to users: a handler still raising NotImplementedError is refused,
    located as ``mcpgen check`` locates it, nothing written; ``--allow-stubs`` packs it
    with the same lines as warnings."""
    project = copy_example("calculator", tmp_path, venv_script=False)
    add = project / "src/calculator_mcp/handlers/tools/add.py"
    add.write_text(
        "from ...models import AddInput, AddOutput\n\n\n"
        "async def handle(args: AddInput) -> AddOutput:\n    raise NotImplementedError\n"
    )
    target = tmp_path / "out" / "calc.mcpb"
    done = mcpgen("bundle", str(project), "-o", str(target))
    where = f"{add}:4: "
    assert done.returncode == 2, done.stderr
    assert f"{where}error: stubs: handle() still raises NotImplementedError" in done.stderr
    assert "--allow-stubs" in done.stderr and not (tmp_path / "out").exists()
    done = mcpgen("bundle", str(project), "-o", str(target), "--allow-stubs")
    assert done.returncode == 0, done.stderr
    assert f"{where}warning: stubs: handle() still raises" in done.stderr and target.is_file()
