"""``project.describe``: what a generated project folder tells a host (pyproject, _spec.json,
the environment list, the surface lock)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostkit import EXAMPLE_NAMES, EXAMPLES, copy_example

from mcpgen.host_entry import EnvVar, ProjectError
from mcpgen.hosts.project import describe

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_every_example_is_described(example: str) -> None:
    project = describe(EXAMPLES / example)
    spec = json.loads((EXAMPLES / example / "src" / project.package / "_spec.json").read_text())
    lock = json.loads((EXAMPLES / example / "mcp-surface.json").read_text())
    assert project.name == spec["server"]["name"]
    assert (EXAMPLES / example / "src" / project.package / "__main__.py").is_file()
    # what clients see is the lock's, disabled entries left out (enabled later by the server)
    listed = [t["name"] for t in lock["tools"] if t.get("enabled", True)]
    assert [t["name"] for t in project.tools] == listed
    declared = {t["definition"]["name"]: t for t in spec["tools"]}
    assert all(declared[name].get("enabled", True) for name in listed if name in declared)
    prompts = [p["name"] for p in lock.get("prompts", []) if p.get("enabled", True)]
    assert [p["name"] for p in project.prompts] == prompts
    assert [v.name for v in project.environment] == [e["name"] for e in spec["environment"]]


def test_calculator_facts() -> None:
    project = describe(EXAMPLES / "calculator")
    assert (project.distribution, project.version, project.script, project.package) == (
        "calculator-mcp", "0.1.0", "calculator", "calculator_mcp",
    )  # fmt: skip
    assert project.title == "Calculator"
    # only settings of the network transports, none of which a host must set
    assert project.environment and project.needed_env("stdio") == []
    assert all(v.transports for v in project.environment)


def test_a_wrapped_api_names_its_variables() -> None:
    project = describe(EXAMPLES / "shop")
    by_name = {v.name: v for v in project.environment}
    assert by_name["SHOP_API_APIKEY"] == EnvVar(
        "SHOP_API_APIKEY", "API key (apiKey)", secret=True, credential=True
    )
    assert by_name["SHOP_API_BASE_URL"].default == "http://127.0.0.1:9/api"
    assert [v.name for v in project.needed_env()] == ["SHOP_API_APIKEY"]


def test_the_surface_lock_is_what_clients_see(tmp_path: Path) -> None:
    root = copy_example("calculator", tmp_path, venv_script=False)
    lock = {
        "mcpSurface": 1,
        "server": {"name": "calculator", "version": "0.1.0"},
        "capabilities": {"tools": {"listChanged": False}},
        "tools": [
            {"name": "search_operations", "inputSchema": {"type": "object"}, "scopes": [],
             "size": {"bytes": 10, "tokens": 3}},
            {"name": "off", "inputSchema": {"type": "object"}, "scopes": [], "enabled": False,
             "size": {"bytes": 10, "tokens": 3}},
        ],
        "prompts": [{"name": "p", "arguments": [], "scopes": ["a"], "size": {"bytes": 1, "tokens": 1}}],
        "totals": {"toolsListBytes": 10, "toolsListTokens": 3},
    }  # fmt: skip
    (root / "mcp-surface.json").write_text(json.dumps(lock))
    project = describe(root)
    # the lock's own keys are gone, a disabled tool is not listed
    assert project.tools == [{"name": "search_operations", "inputSchema": {"type": "object"}}]
    assert project.prompts == [{"name": "p", "arguments": []}]


def test_disabled_and_mode_tools_without_a_lock(tmp_path: Path) -> None:
    root = copy_example("calculator", tmp_path, venv_script=False)
    (root / "mcp-surface.json").unlink()
    spec_path = root / "src" / "calculator_mcp" / "_spec.json"
    spec = json.loads(spec_path.read_text())
    names = [t["definition"]["name"] for t in spec["tools"]]
    assert "divide" in names and [t["name"] for t in describe(root).tools] == names
    for entry in spec["tools"]:
        if entry["definition"]["name"] == "divide":
            entry["enabled"] = False
        if entry["definition"]["name"] == "add":
            entry["http"] = {"method": "GET", "path": "/add"}  # as if imported
    spec["mode"] = "code"
    spec_path.write_text(json.dumps(spec))
    # a code-mode build carries the modes' own tools (the calculator, built plain, does not)
    runtime_modes = Path(__file__).resolve().parents[2] / "mcpgen" / "runtime" / "modes.json"
    (spec_path.parent / "_runtime" / "modes.json").write_text(runtime_modes.read_text())
    listed = [t["name"] for t in describe(root).tools]
    modes = json.loads((spec_path.parent / "_runtime" / "modes.json").read_text())
    own = [t["name"] for t in modes["code"]]
    assert listed == [n for n in names if n not in ("divide", "add")] + own


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
    # spec format 1 had no environment list: what a host must set is unknown
    (tmp_path / "src" / "x" / "_spec.json").write_text('{"server": {"name": "x"}}')
    with pytest.raises(ProjectError, match=r"_spec\.json: no environment list.*rebuild it"):
        describe(tmp_path)
