"""``project.describe``: what a generated project folder tells a host (pyproject, _spec.json,
the environment list or what older projects let derive, the surface lock)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostkit import EXAMPLE_NAMES, EXAMPLES, copy_example

from mcpgen.hosts.project import EnvVar, ProjectError, describe

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_every_example_is_described(example: str) -> None:
    project = describe(EXAMPLES / example)
    spec = json.loads((EXAMPLES / example / "src" / project.package / "_spec.json").read_text())
    assert project.name == spec["server"]["name"]
    assert (EXAMPLES / example / "src" / project.package / "__main__.py").is_file()
    hidden = set(spec["hidden"]["tools"])  # disabled until the server enables them
    assert [t["name"] for t in project.tools] == [
        t["name"] for t in spec["tools"] if t["name"] not in hidden
    ]
    hidden = set(spec["hidden"]["prompts"])
    assert [p["name"] for p in project.prompts] == [
        p["definition"]["name"] for p in spec["prompts"] if p["definition"]["name"] not in hidden
    ]
    assert project.surface is False and project.environment_source == "derived"


def test_calculator_facts() -> None:
    project = describe(EXAMPLES / "calculator")
    assert (project.distribution, project.version, project.script, project.package) == (
        "calculator-mcp", "0.1.0", "calculator", "calculator_mcp",
    )  # fmt: skip
    assert project.title == "Calculator" and project.environment == []


def test_an_older_openapi_project_derives_its_upstream_variables() -> None:
    project = describe(EXAMPLES / "shop")
    by_name = {v.name: v for v in project.environment}
    assert by_name["SHOP_APIKEY"] == EnvVar("SHOP_APIKEY", "API key (apiKey)", secret=True)
    assert by_name["SHOP_BASE_URL"].default == "http://127.0.0.1:9/api"
    assert not by_name["SHOP_BASE_URL"].needed and not by_name["SHOP_TIMEOUT"].secret
    assert [v.name for v in project.needed_env()] == ["SHOP_APIKEY"]


def test_the_surface_lock_is_what_clients_see(tmp_path: Path) -> None:
    root = copy_example("calculator", tmp_path, venv_script=False)
    lock = {
        "mcpSurface": 1,
        "server": {"name": "calculator", "version": "0.1.0"},
        "capabilities": {"tools": {"listChanged": False}},
        "tools": [
            {"name": "search_operations", "inputSchema": {"type": "object"}, "scopes": [],
             "size": {"bytes": 10, "tokens": 3}},
        ],
        "prompts": [{"name": "p", "arguments": [], "scopes": ["a"], "size": {"bytes": 1, "tokens": 1}}],
        "resources": [{"uri": "x://y", "name": "y", "scopes": []}],
        "totals": {"toolsListBytes": 10, "toolsListTokens": 3},
    }  # fmt: skip
    (root / "mcp-surface.json").write_text(json.dumps(lock))
    project = describe(root)
    assert project.surface is True
    assert project.tools == [{"name": "search_operations", "inputSchema": {"type": "object"}}]
    assert project.prompts == [{"name": "p", "arguments": []}]
    assert project.resources == [{"uri": "x://y", "name": "y"}]


def test_hidden_and_meta_tools_without_a_lock(tmp_path: Path) -> None:
    root = copy_example("calculator", tmp_path, venv_script=False)
    spec_path = root / "src" / "calculator_mcp" / "_spec.json"
    spec = json.loads(spec_path.read_text())
    spec["hidden"]["tools"] = ["divide"]
    spec_path.write_text(json.dumps(spec))
    assert "divide" not in [t["name"] for t in describe(root).tools]
    spec["meta_tools"] = [{"name": "call_operation", "inputSchema": {"type": "object"}}]
    spec_path.write_text(json.dumps(spec))
    assert [t["name"] for t in describe(root).tools] == ["call_operation"]


def test_not_a_project(tmp_path: Path) -> None:
    with pytest.raises(ProjectError, match=r"no pyproject\.toml"):
        describe(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    with pytest.raises(ProjectError, match=r"no \[project\.scripts\]"):
        describe(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n[project.scripts]\nx = "x:m"\n'
    )
    with pytest.raises(ProjectError, match=r"_spec\.json"):
        describe(tmp_path)
    (tmp_path / "src" / "x").mkdir(parents=True)
    (tmp_path / "src" / "x" / "_spec.json").write_text("{broken")
    with pytest.raises(ProjectError, match="cannot read"):
        describe(tmp_path)
