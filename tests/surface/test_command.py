"""``mcpgen diff``: sources (files, folders, manifests, git:REF:PATH), formats, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from mcpgen.cli import main
from mcpgen.render.lock import dumps
from mcpgen.surface.sources import SourceError, load

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[2]
NOTES = (ROOT / "manifests" / "notes.yaml").read_text(encoding="utf-8")

Json = Any


def tool(name: str, **extra: Json) -> dict[str, Json]:
    return {
        "name": name,
        "inputSchema": {"type": "object", "properties": {}},
        "scopes": [],
        **extra,
    }


def lock(*tools: dict[str, Json]) -> dict[str, Json]:
    return {"mcpSurface": 1, "server": {"name": "s", "version": "1"}, "tools": list(tools)}


def write(path: Path, data: Json) -> Path:
    path.write_text(dumps(data) if isinstance(data, dict) else data, encoding="utf-8")
    return path


def run(*args: str | Path, cwd: Path | None = None) -> Result:
    runner = CliRunner()
    old = Path.cwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        return runner.invoke(main, ["diff", *map(str, args)])
    finally:
        os.chdir(old)


@pytest.fixture
def pair(tmp_path: Path) -> dict[str, Path]:
    """Locks with nothing, a docs, a compatible and a breaking change against ``base``."""
    base = lock(tool("a", description="x"), tool("b"))
    return {
        "base": write(tmp_path / "base.json", base),
        "same": write(tmp_path / "same.json", json.loads(json.dumps(base))),
        "docs": write(tmp_path / "docs.json", lock(tool("a", description="y"), tool("b"))),
        "compatible": write(
            tmp_path / "compatible.json", lock(tool("a", description="x"), tool("b"), tool("c"))
        ),
        "breaking": write(tmp_path / "breaking.json", lock(tool("a", description="x"))),
    }


@pytest.mark.parametrize(
    ("target", "fail_on", "code"),
    [
        ("same", None, 0),
        ("docs", None, 0),
        ("compatible", None, 0),
        ("breaking", None, 1),
        ("breaking", "none", 0),
        ("compatible", "compatible", 1),
        ("docs", "compatible", 0),
        ("docs", "docs", 1),
        ("same", "docs", 0),
        ("breaking", "docs", 1),
    ],
)
def test_exit_codes(pair: dict[str, Path], target: str, fail_on: str | None, code: int) -> None:
    extra = ["--fail-on", fail_on] if fail_on else []
    result = run(pair["base"], pair[target], *extra)
    assert result.exit_code == code, result.output


def test_bad_input_exits_2_with_one_line(tmp_path: Path, pair: dict[str, Path]) -> None:
    cases = {
        "missing": tmp_path / "nope.json",
        "broken json": write(tmp_path / "broken.json", '{"mcpSurface": 1, "tools": ['),
        "future version": write(tmp_path / "v2.json", {"mcpSurface": 2, "tools": []}),
        "bad shape": write(tmp_path / "shape.json", {"mcpSurface": 1, "tools": [{"title": 1}]}),
        "twice": write(tmp_path / "twice.json", lock(tool("a"), tool("a"))),
        "bad manifest": write(tmp_path / "m.yaml", "mcpgen: 1\nserver: {}\ntools: 3\n"),
        "empty folder": tmp_path / "empty",
    }
    (tmp_path / "empty").mkdir()
    for name, path in cases.items():
        result = run(pair["base"], path)
        assert result.exit_code == 2, (name, result.output)
        assert result.stdout == "", name
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), (name, result.stderr)
        assert lines[0].count("error:") == 1, (name, result.stderr)  # not "error: m:1:1: error:"
    assert "mcpSurface 2 is not supported" in run(pair["base"], cases["future version"]).stderr
    assert run(pair["base"], pair["base"], "--format", "yaml").exit_code == 2  # click usage


def test_json_format(pair: dict[str, Path]) -> None:
    result = run(pair["base"], pair["breaking"], "--format", "json", "--fail-on", "none")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["changes"] == [
        {
            "level": "breaking",
            "item": "tool:b",
            "path": "",
            "change": "removed",
            "why": "clients that use this tool get an error",
        }
    ]
    summary = data["summary"]
    assert (summary["breaking"], summary["compatible"], summary["docs"]) == (1, 0, 0)
    assert summary["tokensAfter"] < summary["tokensBefore"]


def test_json_is_sorted_deterministically(tmp_path: Path) -> None:
    old = lock(tool("b", description="x"), tool("a", title="t"), tool("z"))
    new = lock(
        tool("a", title="u"),
        tool("b", description="y"),
        {**tool("c"), "inputSchema": {"type": "object"}},
    )
    first = run(
        write(tmp_path / "o.json", old), write(tmp_path / "n.json", new), "--format", "json"
    )
    second = run(tmp_path / "o.json", tmp_path / "n.json", "--format", "json")
    assert first.stdout == second.stdout
    changes = [(c["level"], c["item"], c["path"]) for c in json.loads(first.stdout)["changes"]]
    assert changes == [
        ("breaking", "tool:z", ""),
        ("compatible", "tool:c", ""),
        ("docs", "tool:a", "/title"),
        ("docs", "tool:b", "/description"),
    ]


def test_markdown_format(pair: dict[str, Path]) -> None:
    result = run(pair["base"], pair["breaking"], "--format", "markdown")
    assert result.exit_code == 1
    text = result.stdout
    assert text.startswith("### MCP surface: 1 breaking, 0 compatible, 0 docs")
    assert "#### Breaking (1)" in text
    assert "| Item | Path | Change | Why |" in text
    assert "| `tool:b` |  | removed |" in text
    assert "tools/list" in text and "tokens" in text and "estimated" in text


def test_markdown_escapes_table_cells(tmp_path: Path) -> None:
    old = lock(tool("a", description="x"))
    new = lock(tool("a", description="y"), tool("pipe|name"))
    result = run(
        write(tmp_path / "o.json", old), write(tmp_path / "n.json", new), "--format", "markdown"
    )
    assert "`tool:pipe\\|name`" in result.stdout
    assert "<details><summary>Docs (1)</summary>" in result.stdout


def test_text_format(pair: dict[str, Path]) -> None:
    result = run(pair["base"], pair["compatible"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].startswith("0 breaking, 1 compatible, 0 docs; tools/list ")
    assert "compatible (1)" in lines
    assert any(line.strip().startswith("tool:c: added") for line in lines)
    assert "\x1b[" not in result.stdout  # no colour when not a terminal
    assert run(pair["base"], pair["same"]).stdout.splitlines()[-1] == "no changes"


def test_project_folder_reads_its_lock(tmp_path: Path, pair: dict[str, Path]) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "mcp-surface.json").write_text(pair["breaking"].read_text())
    result = run(pair["base"], project, "--format", "json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["changes"][0]["item"] == "tool:b"


def test_two_manifests_on_disk(tmp_path: Path) -> None:
    old = write(tmp_path / "old.yaml", NOTES)
    changed = (
        NOTES.replace("title: {type: string, minLength: 1, maxLength: 200}",
                      "title: {type: string, minLength: 1, maxLength: 100}")
        .replace("  - name: export_notes\n", "  - name: export_all_notes\n")
        .replace("Fetch one note by id.", "Fetch one note\n      by id.")
        .replace("description: Delete a note for good.", "description: Delete a note forever.")
    )  # fmt: skip
    assert changed.count("maxLength: 100") == 1 and "export_all_notes" in changed
    new = write(tmp_path / "new.yaml", changed)
    result = run(old, new, "--format", "json")
    assert result.exit_code == 1, result.output
    found = [(c["level"], c["item"], c["path"]) for c in json.loads(result.stdout)["changes"]]
    assert found == [
        ("breaking", "tool:create_note", "/inputSchema/properties/title/maxLength"),
        ("breaking", "tool:export_notes", ""),  # renamed: the same (empty) schemas
        ("docs", "tool:delete_note", "/description"),
    ]


def test_manifest_against_its_own_lock(tmp_path: Path) -> None:
    manifest = write(tmp_path / "mcpgen.yaml", NOTES)
    locked = load(str(manifest))
    write(tmp_path / "mcp-surface.json", locked)
    assert run(manifest, tmp_path, "--fail-on", "docs").exit_code == 0
    assert load("mcp-surface.json", cwd=tmp_path) == json.loads(dumps(locked))


def test_openapi_document(tmp_path: Path) -> None:
    spec = ROOT / "manifests" / "openapi" / "shop.yaml"
    text = spec.read_text(encoding="utf-8")
    write(tmp_path / "a.yaml", text)
    lock_a = load(str(tmp_path / "a.yaml"))
    assert lock_a["tools"], "the spec's operations are tools"
    assert run(tmp_path / "a.yaml", spec).exit_code == 0


@pytest.mark.parametrize("mode", ["search", "code"])
def test_an_operation_declared_as_a_tool_is_one_item(tmp_path: Path, mode: str) -> None:
    """Search or code mode: the operation delete_item replaced by a declared tool of the same
    name and schema is one item that moved (call_operation / execute no longer reach it),
    not an operation removed and a tool added."""
    (tmp_path / "openapi").mkdir()
    (tmp_path / "openapi" / "shop.yaml").write_bytes(
        (ROOT / "manifests/openapi/shop.yaml").read_bytes()
    )
    wrapped = (
        "mcpgen: 1\nserver: {name: shop, version: 2.0.0}\n"
        f"openapi:\n  source: openapi/shop.yaml\n  mode: {mode}\n"
        "  rules: [{operationId: itemLabel, as: resourceTemplate}]\n"
        "  exclude:\n    - {operationId: sendFeedback}\n"
    )
    declared = wrapped + (
        "    - {operationId: deleteItem}\n"
        "tools:\n  - name: delete_item\n    description: DELETE /items/{itemId}\n"
        "    annotations: {idempotentHint: true}\n"
        "    input:\n      type: object\n      additionalProperties: false\n"
        "      properties: {itemId: {type: integer}}\n      required: [itemId]\n"
    )
    old, new = write(tmp_path / "old.yaml", wrapped), write(tmp_path / "new.yaml", declared)
    assert [t["name"] for t in load(str(old))["operations"]].count("delete_item") == 1
    result = run(old, new, "--format", "json")
    assert result.exit_code == 1, result.output
    found = [(c["level"], c["item"], c["path"]) for c in json.loads(result.stdout)["changes"]]
    assert found == [("breaking", "operation:delete_item", "")], result.stdout


def git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull,
    }  # fmt: skip
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout


def test_the_build_names_mcpgen_diff_git_only_in_a_repository(tmp_path: Path) -> None:
    """Outside a git repository ``mcpgen diff git:HEAD:...`` exits 2: no hint to run it."""
    manifest, out = tmp_path / "mcpgen.yaml", str(tmp_path / "out")
    summaries = []
    for text in (NOTES, NOTES.replace("maxLength: 200", "maxLength: 10"), NOTES):
        if len(summaries) == 2:
            git(tmp_path, "init", "-q")  # the last build runs in a repository
        write(manifest, text)
        result = CliRunner().invoke(main, ["build", str(manifest), "-o", out])
        assert result.exit_code == 0, result.output
        summaries.append([line for line in result.output.splitlines() if "surface:" in line])
    assert summaries[0] == [] and len(summaries[1]) == len(summaries[2]) == 1, summaries
    assert "git:HEAD" not in summaries[1][0] and "git:HEAD:mcp-surface.json" in summaries[2][0]


def test_git_ref_path(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "server").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    write(repo / "server" / "mcp-surface.json", lock(tool("a"), tool("b")))
    manifest = NOTES.replace(
        "\ncompletions:",
        "  - {uri: notes://readme, name: readme, mimeType: text/plain, file: readme.txt}\n"
        "\ncompletions:",
    )
    assert "readme.txt" in manifest
    write(repo / "server" / "mcpgen.yaml", manifest)
    write(repo / "server" / "readme.txt", "hello")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "one")
    # the working tree moves on
    write(repo / "server" / "mcp-surface.json", lock(tool("a")))
    write(repo / "server" / "mcpgen.yaml", manifest.replace("maxLength: 200", "maxLength: 10"))

    # a surface file at a revision, against the working tree
    result = run(
        "git:HEAD:server/mcp-surface.json", "server/mcp-surface.json", "--format", "json", cwd=repo
    )
    assert result.exit_code == 1, result.output
    assert [c["item"] for c in json.loads(result.stdout)["changes"]] == ["tool:b"]
    # PATH is relative to the current folder, like any file argument
    result = run("git:main:mcp-surface.json", "mcp-surface.json", cwd=repo / "server")
    assert result.exit_code == 1, result.output

    # a manifest at a revision: its static file is read from the working tree's folder
    result = run("git:HEAD:server/mcpgen.yaml", "server/mcpgen.yaml", "--format", "json", cwd=repo)
    assert result.exit_code == 1, result.output
    found = [(c["level"], c["item"], c["path"]) for c in json.loads(result.stdout)["changes"]]
    assert found == [("breaking", "tool:create_note", "/inputSchema/properties/title/maxLength")]
    assert run("git:HEAD:server/mcpgen.yaml", "server", cwd=repo).exit_code == 1

    # bad references: one line, exit 2
    for spec in ("git:nope:server/mcpgen.yaml", "git:HEAD:server/missing.yaml", "git:HEAD",
                 "git::x"):  # fmt: skip
        result = run(spec, "server/mcp-surface.json", cwd=repo)
        assert result.exit_code == 2, (spec, result.output)
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    outside = run("git:HEAD:server/mcp-surface.json", "server/mcp-surface.json", cwd=tmp_path)
    assert outside.exit_code == 2 and "git" in outside.stderr
    # a REF that git would take for an option (--output=FILE writes FILE) is refused
    written = tmp_path / "written"
    result = run(f"git:--output={written}:server/mcp-surface.json", "server", cwd=repo)
    assert result.exit_code == 2 and "expected git:REF:PATH" in result.stderr, result.output
    assert not list(tmp_path.glob("written*"))


def test_source_errors_are_one_line(tmp_path: Path) -> None:
    bad = write(tmp_path / "m.yaml", "mcpgen: 1\nserver: {name: x}\ntools:\n  - {name: 1}\n  - 2\n")
    with pytest.raises(SourceError) as caught:
        load(str(bad))
    assert "\n" not in str(caught.value) and "m.yaml" in str(caught.value)


def test_markdown_fits_in_one_comment() -> None:
    from mcpgen.surface import report
    from mcpgen.surface.diff import diff, summary

    def many(limit: int) -> dict[str, Json]:
        return lock(
            *(
                tool(f"tool_number_{i:04}", inputSchema={"type": "object", "properties": {
                    f"argument_number_{i:04}": {"type": "string", "maxLength": limit}}})
                for i in range(1500)
            )
        )  # fmt: skip

    old, new = many(100), many(50)
    changes = diff(old, new)
    assert len(changes) == 1500
    text = report.markdown(changes, summary(changes, old, new))
    assert len(text) <= report.MARKDOWN_LIMIT
    assert "#### Breaking (1500)" in text and "more (`mcpgen diff --format json`" in text


def test_markdown_merges_rows_that_many_items_share() -> None:
    from mcpgen.surface import report
    from mcpgen.surface.diff import diff, summary

    def with_limit(limit: int) -> dict[str, Json]:
        schema = {"type": "object", "properties": {"n": {"type": "string", "maxLength": limit}}}
        return lock(*(tool(f"t{i}", inputSchema=schema) for i in range(5)))

    old, new = with_limit(10), with_limit(5)
    changes = diff(old, new)
    assert len(changes) == 5
    text = report.markdown(changes, summary(changes, old, new))
    rows = [line for line in text.splitlines() if line.startswith("| `tool:")]
    assert rows == [
        "| `tool:t0`, `tool:t1`, `tool:t2` and 2 more | `/inputSchema/properties/n/maxLength` "
        "| maxLength 10 -> 5 (tightened) | the input now accepts less: calls that were valid "
        "may be refused |"
    ]
    assert "#### Breaking (5)" in text


def test_two_manifests_load_side_by_side_as_they_would_one_after_the_other(
    tmp_path: Path,
) -> None:
    """``load_both`` loads OLD in a forked process when neither is a lock: the same surfaces
    as loading each here, and a bad OLD is the same one-line error."""
    from mcpgen.surface.sources import load_both

    manifests = ROOT / "manifests"
    old, new = str(manifests / "calculator.yaml"), str(manifests / "notes.yaml")
    assert load_both(old, new) == (load(old), load(new))
    broken = write(tmp_path / "m.yaml", "mcpgen: 1\nserver: {}\ntools: 3\n")
    with pytest.raises(SourceError) as side_by_side:
        load_both(str(broken), new)
    with pytest.raises(SourceError) as alone:
        load(str(broken))
    assert str(side_by_side.value) == str(alone.value)


def test_a_property_that_becomes_schema_false_is_breaking(tmp_path: Path) -> None:
    """``mcpgen diff`` on two manifests: an input property that takes no value any more (JSON
    Schema ``false``) breaks callers; the reverse change is compatible."""
    text = "mcpgen: 1\nserver: {name: s, description: d}\ntools:\n  - name: t\n"
    text += "    description: d\n    input:\n      type: object\n      properties:\n"
    old = write(tmp_path / "old.yaml", text + "        a: {type: string}\n")
    new = write(tmp_path / "new.yaml", text + "        a: false\n")
    result = run(old, new, "--format", "json")
    assert result.exit_code == 1, result.output
    [change] = json.loads(result.stdout)["changes"]
    assert (change["level"], change["path"]) == ("breaking", "/inputSchema/properties/a")
    assert change["change"] == "no value is accepted any more (schema false)"
    back = run(new, old, "--format", "json", "--fail-on", "compatible")
    assert back.exit_code == 1, back.output
    [change] = json.loads(back.stdout)["changes"]
    assert (change["level"], change["path"]) == ("compatible", "/inputSchema/properties/a")
