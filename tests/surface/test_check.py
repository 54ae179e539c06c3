"""``mcpgen check DIR`` on real generated projects: drift, stubs, orphans, type errors, and
the build's own summary after a field rename."""

from __future__ import annotations

import ast
import json
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from surface_projects import (
    HANDLERS,
    PACKAGE,
    SHOP_SPEC,
    build,
    cli,
    edit,
    implement,
    lines_with,
    mypy_cache,
    shelf,
)

from mcpgen import health
from mcpgen.health import code as health_code
from mcpgen.write.handlers import imported_modules

pytestmark = pytest.mark.timeout(600)
needs_mypy = pytest.mark.skipif(not health.mypy_available(), reason="mypy is not installed")


@pytest.fixture(autouse=True, scope="module")
def _shared_mypy_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with mypy_cache(tmp_path_factory.mktemp("mypy-cache")):
        yield


def check(project: Path, *args: str) -> tuple[int, dict[str, Any]]:
    code, output = cli("check", project, "--format", "json", *args)
    assert code in (0, 1), output
    start = output.index("{")
    return code, json.loads(output[start : output.rindex("}") + 1])


def problems(report: dict[str, Any], kind: str) -> list[tuple[str, int, str]]:
    return [(p["path"], p["line"], p["message"]) for p in report["problems"] if p["check"] == kind]


@needs_mypy
def test_a_healthy_project(tmp_path: Path) -> None:
    _manifest, project = shelf(tmp_path)
    pointer = (project / "pyproject.toml").read_text()
    assert "[tool.mcpgen]\n" in pointer and 'source = "../mcpgen.yaml"' in pointer
    code, report = check(project)
    assert (code, report["ok"], report["problems"]) == (0, True, [])
    assert report["skipped"] == {} and report["manifest"].endswith("mcpgen.yaml")
    code, output = cli("check", project)
    assert code == 0 and "ok (drift, stubs, orphans, types checked)" in output


def test_unwritten_stubs(tmp_path: Path) -> None:
    _manifest, project = shelf(tmp_path, written=False)
    code, report = check(project, "--skip", "types")
    assert code == 1 and report["skipped"] == {"types": "--skip types"}
    found = {
        (path.rsplit("/", 2)[-2:][0], message) for path, _, message in problems(report, "stubs")
    }
    assert found == {
        ("tools", "handle() still raises NotImplementedError: write the handler"),
        ("resources", "read() still raises NotImplementedError: write the handler"),
        ("prompts", "render() still raises NotImplementedError: write the handler"),
    }
    assert len(problems(report, "stubs")) == 4  # two tools
    lines = {path: line for path, line, _ in problems(report, "stubs")}
    handler = f"{HANDLERS}/tools/add_book.py"
    tree = ast.parse((project / handler).read_text())
    assert lines[handler] == next(n.lineno for n in tree.body if getattr(n, "name", "") == "handle")
    # written, even if it still raises NotImplementedError in one branch: not a stub
    implement(
        project / handler, "if not args.title:\n        raise NotImplementedError\n    return 1"
    )
    assert handler not in {p for p, _, _ in problems(check(project, "--skip", "types")[1], "stubs")}


def test_broken_handler_files(tmp_path: Path) -> None:
    _manifest, project = shelf(tmp_path)
    (project / HANDLERS / "tools/add_book.py").write_text("async def handle(args:\n")
    (project / HANDLERS / "tools/count_books.py").write_text("async def run() -> None: ...\n")
    report = check(project, "--skip", "types")[1]
    found = {p.rsplit("/", 1)[-1]: m for p, _, m in problems(report, "stubs")}
    assert found["add_book.py"].startswith("does not parse")
    assert found["count_books.py"] == "defines no handle() function"


def test_drift_through_the_recorded_manifest(tmp_path: Path) -> None:
    manifest, project = shelf(tmp_path)
    assert check(project, "--skip", "types")[0] == 0
    edit(project / "README.md", "# shelf", "# my shelf")
    edit(manifest, "tools:\n", "tools:\n  - name: lend_book\n    description: Lend one.\n")
    code, report = check(project, "--skip", "types")
    drifted = {path for path, _, _ in problems(report, "drift")}
    assert code == 1
    assert {"README.md", "mcp-surface.json", f"{HANDLERS}/tools/lend_book.py"} <= drifted
    assert all("mcpgen build" in m for _, _, m in problems(report, "drift"))
    # the same answer as build --check
    assert cli("build", manifest, "-o", project, "--check")[0] == 1
    build(manifest, project)
    code, report = check(project, "--skip", "types", "--skip", "stubs")
    assert (code, problems(report, "drift")) == (0, [])


def test_the_drift_hint_pastes_into_a_shell(tmp_path: Path) -> None:
    (tmp_path / "my shelf's").mkdir()
    manifest, project = shelf(tmp_path / "my shelf's")
    edit(manifest, "tools:\n", "tools:\n  - name: lend_book\n    description: Lend one.\n")
    _, report = check(project, "--skip", "types")
    hint = problems(report, "drift")[0][2].split("(run: ", 1)[1].removesuffix(")")
    words = shlex.split(hint)
    assert words[:2] == ["mcpgen", "build"] and words[3] == "-o" and len(words) == 5
    assert Path(words[2]).resolve() == manifest.resolve() and Path(words[4]) == project


def test_drift_of_a_bare_openapi_project(tmp_path: Path) -> None:
    spec = tmp_path / "shop.yaml"
    spec.write_text(SHOP_SPEC.read_text())
    project = tmp_path / "out"
    build(spec, project, "--name", "store")
    code, report = check(project, "--skip", "types")
    assert (code, report["problems"]) == (0, [])
    assert report["manifest"].endswith("shop.yaml")


def test_bad_input(tmp_path: Path) -> None:
    code, output = cli("check", tmp_path)
    assert code == 2 and "not a project mcpgen generated" in output
    manifest, project = shelf(tmp_path, written=False)
    code, output = cli("check", project, "--manifest", tmp_path / "nope.yaml")
    assert code == 2 and "nope.yaml: file not found" in output
    other = tmp_path / "other.yaml"
    other.write_text("mcpgen: 1\nserver: {name: other}\ntools:\n  - {name: x, description: y}\n")
    code, output = cli("check", project, "--manifest", other)
    assert code == 2 and "not this project's manifest" in output
    manifest.rename(tmp_path / "moved.yaml")
    code, output = cli("check", project)
    assert code == 2 and "../mcpgen.yaml" in output and "pass --manifest" in output
    code, report = check(project, "--manifest", str(tmp_path / "moved.yaml"), "--skip", "types")
    # the headers and the recorded source name the manifest: a moved one is drift
    assert code == 1 and "pyproject.toml" in {p for p, _, _ in problems(report, "drift")}


def test_without_a_recorded_manifest_drift_is_skipped(tmp_path: Path) -> None:
    _manifest, project = shelf(tmp_path)
    edit(project / "pyproject.toml", "[tool.mcpgen]", "[tool.other]")
    code, report = check(project, "--skip", "types")
    assert code == 0 and "no [tool.mcpgen] source" in report["skipped"]["drift"]
    # the handler files come from _spec.json then: the same verdicts
    (project / HANDLERS / "tools/old_tool.py").write_text("x = 1\n")
    assert [p for p, _, _ in problems(check(project, "--skip", "types")[1], "orphans")] == [
        f"{HANDLERS}/tools/old_tool.py"
    ]


def test_orphans_helpers_and_overrides(tmp_path: Path) -> None:
    manifest, project = shelf(tmp_path)
    tools = project / HANDLERS / "tools"
    (tools / "_common.py").write_text(
        "from .. import shared\n\ndef clean(s: str) -> str:\n    return s\n"
    )
    (project / HANDLERS / "shared.py").write_text("VALUE = 1\n")
    (project / HANDLERS / "util").mkdir()
    (project / HANDLERS / "util/__init__.py").write_text("")
    (project / HANDLERS / "util/text.py").write_text("X = 1\n")
    edit(tools / "add_book.py", "from __future__ import annotations\n",
         "from __future__ import annotations\n\nfrom shelf_mcp.handlers.util.text import X\n\n"
         "from ._common import clean\n")  # fmt: skip
    (tools / "old_tool.py").write_text("from . import _legacy\n")
    (tools / "_legacy.py").write_text("")
    report = check(project, "--skip", "types")[1]
    assert sorted(p for p, _, _ in problems(report, "orphans")) == [
        f"{HANDLERS}/tools/_legacy.py",  # imported by an orphan only
        f"{HANDLERS}/tools/old_tool.py",
    ]
    output = build(manifest, project)
    assert sorted(lines_with(output, "orphaned")) == [
        f"orphaned (kept, no longer in the manifest): {HANDLERS}/tools/_legacy.py",
        f"orphaned (kept, no longer in the manifest): {HANDLERS}/tools/old_tool.py",
    ]


def test_an_active_override_is_not_an_orphan(tmp_path: Path) -> None:
    (tmp_path / "shop.yaml").write_text(SHOP_SPEC.read_text())
    manifest = tmp_path / "mcpgen.yaml"
    manifest.write_text("mcpgen: 1\nserver: {name: shop}\nopenapi: {source: shop.yaml}\n")
    project = tmp_path / "project"
    build(manifest, project)
    tools = project / "src/shop_mcp/handlers/tools"
    (tools / "get_item.py").write_text(
        "from typing import Any\n\nfrom ._auth import TOKEN\n\n\n"
        "async def handle(arguments: dict[str, Any], ctx: Any) -> str:\n    return TOKEN\n"
    )
    (tools / "_auth.py").write_text('TOKEN = "t"\n')
    output = build(manifest, project)
    assert "orphaned" not in output
    report = check(project, "--skip", "types")[1]
    assert report["ok"], report
    # a tool of the manifest's own changes server.py: the override, always given ctx, fits
    manifest.write_text(manifest.read_text() + "tools:\n  - {name: ping, description: Ping.}\n")
    output = build(manifest, project)
    assert "new stub: src/shop_mcp/handlers/tools/ping.py" in output
    assert not lines_with(output, "warning"), output
    # the operation leaves the spec: its override is an orphan now, and so is its helper
    spec = tmp_path / "shop.yaml"
    spec.write_text(spec.read_text().replace("operationId: getItem", "operationId: fetchItem"))
    output = build(manifest, project)
    assert sorted(lines_with(output, "orphaned")) == [
        "orphaned (kept, no longer in the manifest): src/shop_mcp/handlers/tools/_auth.py",
        "orphaned (kept, no longer in the manifest): src/shop_mcp/handlers/tools/get_item.py",
    ]


@needs_mypy
def test_a_field_rename_breaks_the_handler_and_check_says_so(tmp_path: Path) -> None:
    manifest, project = shelf(tmp_path)
    handler = f"{HANDLERS}/tools/add_book.py"
    line = next(
        i
        for i, text in enumerate((project / handler).read_text().splitlines(), 1)
        if "return" in text
    )
    # title -> name in the input and the output
    edit(
        manifest,
        "        title: {type: string}\n        pages",
        "        name: {type: string}\n        pages",
    )
    edit(manifest, "required: [title]", "required: [name]")
    edit(manifest, "        title: {type: string}\n      required: [id, title]",
         "        name: {type: string}\n      required: [id, name]")  # fmt: skip
    output = build(manifest, project)
    assert (
        f"changed: tool 'add_book' input schema changed (added name; removed title; required "
        f"fields changed); {handler} may no longer type-check: run mcpgen check {project}"
    ) in lines_with(output, "changed:")
    assert lines_with(output, "no longer type-checks") == [
        f"{handler}:{line}: does not pass name, now required by AddBookOutput: it no longer "
        "type-checks",
        f"{handler}:{line}: reads args.title, which AddBookInput no longer has: it no longer "
        "type-checks",
    ]
    assert lines_with(output, "the value is dropped") == [
        f"{handler}:{line}: passes title=, which AddBookOutput no longer has: the value is dropped"
    ]
    assert lines_with(output, "^  surface:")[0].startswith("surface: 2 breaking")
    # --check is about generated files: up to date; mcpgen check sees the handler
    code, text = cli("build", manifest, "-o", project, "--check")
    assert code == 0 and "up to date" in text
    code, report = check(project)
    found = problems(report, "types")
    assert code == 1 and {p for p, _, _ in found} == {handler}
    assert {(n, m.rsplit("[", 1)[-1]) for _, n, m in found} == {
        (line, "attr-defined]"), (line, "call-arg]"),
    }  # fmt: skip
    assert not problems(report, "drift") and not problems(report, "stubs")


def test_types_skipped_without_mypy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(health, "mypy_available", lambda: False)
    _manifest, project = shelf(tmp_path)
    code, report = check(project)
    assert code == 0 and report["skipped"]["types"].startswith("mypy is not installed")
    code, output = cli("check", project)
    assert (
        "types skipped: mypy is not installed" in output
        and "ok (drift, stubs, orphans checked)" in output
    )


@pytest.mark.parametrize(
    ("body", "stub"),
    [
        ("raise NotImplementedError", True),
        ("raise NotImplementedError('later')", True),
        ('"""Docs."""\n    pass\n    raise NotImplementedError', True),
        ("return 1", False),
        ("if x:\n        raise NotImplementedError\n    return 2", False),
        ("raise ValueError", False),
        ("raise", False),
    ],
)
def test_unimplemented(body: str, stub: bool) -> None:
    tree = ast.parse(f"async def handle(x):\n    {body}\n")
    function = health_code.entry_point(tree, "handle")
    assert function is not None and health_code.unimplemented(function) is stub


def test_imported_modules(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(
        "import os.path\nfrom . import a, b as c\nfrom ..x import y\nfrom .z.w import *\n"
        "def f():\n    from pkg.handlers import late\n"
    )
    found = imported_modules(path, ("pkg", "handlers", "tools", "m"))
    assert {
        ("os", "path"), ("pkg", "handlers", "tools", "a"), ("pkg", "handlers", "tools", "b"),
        ("pkg", "handlers", "x", "y"), ("pkg", "handlers", "tools", "z", "w"),
        ("pkg", "handlers", "late"), ("pkg", "handlers"),
    } <= found  # fmt: skip
    assert ("pkg", "handlers", "tools", "c") not in found
    path.write_text("def (:")
    assert imported_modules(path, ("pkg", "m")) == set()


def test_a_flipped_context_is_warned_by_every_build_until_the_handler_fits(
    tmp_path: Path,
) -> None:
    """The warning came only from the build that rewrote ``server.py``: the next build, the
    handler still unchanged and every call still failing, said nothing."""
    manifest, project = shelf(tmp_path)
    edit(manifest, "How many books there are.\n", "How many books there are.\n    context: true\n")
    first = lines_with(build(manifest, project), "warning")
    assert len(first) == 1 and "handle() takes no ctx" in first[0], first
    assert lines_with(build(manifest, project), "warning") == first
    handler = project / HANDLERS / "tools/count_books.py"
    text = handler.read_text()
    handler.write_text(
        text.replace("(args: CountBooksInput)", "(args: CountBooksInput, ctx: object)")
    )
    assert "ctx: object" in handler.read_text() and not lines_with(
        build(manifest, project), "warning"
    )


@needs_mypy
def test_a_flipped_context_is_found_by_build_and_check(tmp_path: Path) -> None:
    """``context: true`` given to a tool and a resource whose handlers are written: the
    server now passes ``ctx`` to handlers that take none (every call would fail)."""
    manifest, project = shelf(tmp_path)
    edit(manifest, "How many books there are.\n", "How many books there are.\n    context: true\n")
    edit(manifest, "mimeType: text/plain\n", "mimeType: text/plain\n    context: true\n")
    lines = manifest.read_text().splitlines()
    at = [i for i, text in enumerate(lines, 1) if text == "    context: true"]
    output = build(manifest, project)
    assert lines_with(output, "warning") == [
        f"{manifest}:{at[0]}:14: warning: tools[1].context: {HANDLERS}/tools/count_books.py: "
        "handle() takes no ctx, but tools[1].context is true: add a ctx: Context parameter "
        "(every call fails until then)",
        f"{manifest}:{at[1]}:14: warning: resources[0].context: {HANDLERS}/resources/book.py: "
        "read() takes no ctx, but resources[0].context is true: add a ctx: Context parameter "
        "(every call fails until then)",
    ]
    code, report = check(project)
    found = problems(report, "types")
    server = f"src/{PACKAGE}/server.py"
    assert code == 1 and {p for p, _, _ in found} == {server}, found
    assert len(found) == 2, found  # the tool's call, the resource's
    assert all(m.endswith("[call-arg] " + health.CALLS) for _, _, m in found), found
    # a new stub takes ctx; context: false again, it requires what the server no longer passes
    (project / HANDLERS / "tools/count_books.py").unlink()
    (project / HANDLERS / "resources/book.py").unlink()
    assert not lines_with(build(manifest, project), "warning")
    edit(manifest, "    context: true\n", "", 2)
    output = build(manifest, project)
    lines = manifest.read_text().splitlines()
    tool, resource = (
        lines.index(f"  - {entry}") + 1
        for entry in ("name: count_books", 'uriTemplate: "shelf://book/{id}"')
    )
    assert lines_with(output, "warning") == [
        f"{manifest}:{tool}:5: warning: tools[1].context: {HANDLERS}/tools/count_books.py: "
        "handle() requires ctx, but tools[1].context is false: remove its ctx parameter "
        "(every call fails until then)",
        f"{manifest}:{resource}:5: warning: resources[0].context: {HANDLERS}/resources/book.py: "
        "read() requires ctx, but resources[0].context is false: remove its ctx parameter "
        "(every call fails until then)",
    ]
