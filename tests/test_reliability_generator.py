"""Reliability and safety of ``mcpgen build`` itself (issue 9):

* no path escapes: whatever tool, resource and prompt names say, and whatever links the
  output folder holds, nothing is written, replaced or deleted outside OUT; static
  ``file:`` content and ``openapi.source`` stay inside the manifest's folder;
* no lost data: across a long run of random manifest changes, every handler file a user
  edited is byte-identical after every rebuild (also when its tool left the manifest);
  ``--check`` right after a build is clean; a failing build leaves OUT as it was;
* bad input is exit 2 with a located message, never a traceback or an internal error.

The edit sequence runs MCPGEN_EDIT_STEPS steps (default 30) from MCPGEN_EDIT_SEED.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import black
import pytest
import yaml
from click.testing import CliRunner

from mcpgen import write as writer
from mcpgen.cli import main
from mcpgen.pipeline import load_manifest

ROOT = Path(__file__).resolve().parent.parent
CALCULATOR = ROOT / "manifests" / "calculator.yaml"
PKG = "src/calculator_mcp"
STEPS = int(os.environ.get("MCPGEN_EDIT_STEPS", "30"))
SEED = int(os.environ.get("MCPGEN_EDIT_SEED", "9"))
HOSTILE = [
    "quote \" and ' both",
    "triple \"\"\" and ''' quotes",
    "back\\slash \\n \\u2028 \\",
    "new\nline\r\ncarriage",
    "{{ jinja }} {% if x %}{% endif %} {# c #}",
    "ünïcödé ✓ 日本 \U0001f600",
    "__import__('os').system('echo pwned')",
    "</script><!-- -->",
]


_FORMAT = functools.lru_cache(maxsize=None)(black.format_str)


@pytest.fixture(autouse=True)
def fast_black(monkeypatch: pytest.MonkeyPatch) -> None:
    """black is deterministic: memoize it (for this module) so that repeated builds only
    format what changed. Only speed changes: the bytes written are black's own."""
    monkeypatch.setattr(black, "format_str", _FORMAT)


def build(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["build", *args], env={"CI": "1"})
    assert "Traceback" not in result.output, result.output
    assert "internal error" not in result.output, result.output
    assert result.exit_code in (0, 1, 2), result.output
    return result.exit_code, result.output


def validate(path: Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["validate", str(path)], env={"CI": "1"})
    return result.exit_code, result.output


def snapshot(root: Path) -> dict[str, str]:
    """Every entry under ``root`` (links not followed): files by content hash, folders, and
    links by target. Equal snapshots: nothing was written, replaced, created or deleted."""
    found: dict[str, str] = {}
    if not root.exists() and not root.is_symlink():
        return found
    for folder, dirs, files in os.walk(root, followlinks=False):
        base = Path(folder)
        for name in dirs + files:
            path = base / name
            relative = path.relative_to(root).as_posix()
            if "__pycache__" in relative:
                continue
            if path.is_symlink():
                found[relative] = "link:" + os.readlink(path)
            elif path.is_dir():
                found[relative] = "dir"
            else:
                found[relative] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def write_manifest(path: Path, data: dict[str, Any]) -> None:
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), "utf-8")


@pytest.fixture
def calculator() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(CALCULATOR.read_text("utf-8"))
    return data


# -- no path escapes: names ---------------------------------------------------------------

ESCAPING_NAMES = [
    "../../../../tmp/evil",
    "/etc/cron.d/evil",
    "..",
    "a/../../b",
    "~/.ssh/authorized_keys",
    "C:\\Windows\\evil",
    "%2e%2e%2fpct",
    "\u202egnp.exe",
]


def test_hostile_names_never_leave_the_output_folder(tmp_path: Path) -> None:
    """Tool, resource, prompt and completion names that look like paths: the build either
    refuses them or turns them into plain Python names; nothing lands outside OUT."""
    sandbox = tmp_path / "sandbox"
    sandbox.mkdir()
    (sandbox / "keep.txt").write_text("keep\n")
    folder = sandbox / "project"
    folder.mkdir()
    data = {
        "mcpgen": 1,
        "server": {"name": "escape"},
        "tools": [
            {"name": "..", "description": "dots"},
            {"name": "...y", "description": "dots"},
            {"name": "a.b-c", "description": "dots"},
        ],
        "resources": [
            {"uriTemplate": f"esc://r{i}/{{id}}", "name": name, "description": "r"}
            for i, name in enumerate(ESCAPING_NAMES)
        ]
        + [{"uri": "esc://fixed", "name": "/abs/fixed", "description": "handler-backed"}],
        "prompts": [
            {"name": name, "description": "p", "handler": True, "arguments": [{"name": "a"}]}
            for name in ESCAPING_NAMES
        ],
        "completions": [
            {"prompt": ESCAPING_NAMES[0], "argument": "a", "handler": True},
            {"resource": "esc://r1/{id}", "argument": "id", "handler": True},
        ],
    }
    source = folder / "escape.yaml"
    write_manifest(source, data)
    before = snapshot(sandbox)
    out = folder / "out"
    code, output = build(str(source), "-o", str(out))
    assert code == 0, output
    after = snapshot(sandbox)
    new = {k for k in after if k not in before}
    assert all(k.startswith("project/out") for k in new), sorted(new)
    assert {k: v for k, v in after.items() if k in before} == before
    for path in out.rglob("*"):
        assert path.resolve().is_relative_to(out.resolve()), path
    handlers = sorted(p.relative_to(out).as_posix() for p in out.rglob("handlers/**/*.py"))
    for relative in handlers:
        stem = Path(relative).stem
        assert stem.isidentifier() and stem.isascii(), relative
    assert "src/escape_mcp/handlers/tools/x.py" in handlers  # ".." -> x
    assert "src/escape_mcp/handlers/resources/tmp_evil.py" in handlers
    assert "src/escape_mcp/handlers/prompts/etc_cron_d_evil.py" in handlers


@pytest.mark.parametrize(
    "field, value",
    [
        (("tools", 0, "name"), "../evil"),
        (("tools", 0, "name"), "/abs"),
        (("tools", 0, "name"), "a/b"),
        (("tools", 0, "name"), "a\\b"),
        (("tools", 0, "name"), "x\x00y"),
        (("server", "package"), "../evil"),
        (("server", "package"), "/abs"),
        (("server", "package"), "a/b"),
        (("server", "package"), "a.b"),
        (("server", "package"), ""),
        (("server", "name"), "../evil"),
        (("server", "name"), "/abs"),
        (("server", "distribution"), "../evil"),
    ],
)
def test_path_like_names_the_schema_forbids_are_exit_2(
    tmp_path: Path, calculator: dict[str, Any], field: tuple[Any, ...], value: str
) -> None:
    node = calculator
    for part in field[:-1]:
        node = node[part]
    node[field[-1]] = value
    source = tmp_path / "m.yaml"
    write_manifest(source, calculator)
    before = snapshot(tmp_path)
    code, output = build(str(source), "-o", str(tmp_path / "out"))
    assert code == 2, output
    assert f"{source}:" in output, output  # located
    assert snapshot(tmp_path) == before


# -- no path escapes: links in the output folder ------------------------------------------


@pytest.fixture
def built(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(manifest, OUT built from it, an outside folder no build may touch)."""
    source = tmp_path / "project" / "calc.yaml"
    source.parent.mkdir()
    shutil.copy(CALCULATOR, source)
    out = tmp_path / "project" / "out"
    assert build(str(source), "-o", str(out))[0] == 0
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    return source, out, outside


def changed(source: Path) -> None:
    """A manifest change that rewrites generated files and adds a handler stub."""
    text = source.read_text("utf-8")
    text = text.replace("Add two or more numbers", "Add several numbers")
    text += (
        "\n  - name: negate\n    description: Negate a number.\n"
        "    input: {type: object, properties: {x: {type: number}}, required: [x]}\n"
    )
    source.write_text(text, "utf-8")


@pytest.mark.parametrize(
    "link", ["src", f"{PKG}", f"{PKG}/handlers", f"{PKG}/handlers/tools", "tests"]
)
def test_a_linked_subfolder_is_never_written_through(
    built: tuple[Path, Path, Path], link: str
) -> None:
    source, out, outside = built
    target = outside / "moved"
    shutil.move(out / link, target)  # the real content now lives outside; OUT links to it
    (out / link).symlink_to(target, target_is_directory=True)
    changed(source)
    before_outside, before_out = snapshot(outside), snapshot(out)
    for flags in ([], ["--check"], ["--diff"]):
        code, output = build(str(source), "-o", str(out), *flags)
        assert code in (1, 2), output  # drift (check/diff) or refused: never a write
        assert snapshot(outside) == before_outside, flags
        assert snapshot(out) == before_out, flags
    code, output = build(str(source), "-o", str(out))
    assert code == 2 and "refusing to write through a link" in output, output


def test_a_dangling_link_where_a_folder_goes_is_refused(built: tuple[Path, Path, Path]) -> None:
    source, out, outside = built
    shutil.rmtree(out / "tests")
    (out / "tests").symlink_to(outside / "not-yet")
    changed(source)
    before = snapshot(out)
    code, output = build(str(source), "-o", str(out))
    assert code == 2, output
    assert not (outside / "not-yet").exists()
    assert snapshot(out) == before


def test_linked_files_are_replaced_never_written_through(built: tuple[Path, Path, Path]) -> None:
    """A generated file, or a missing stub, that is a link to a file outside: the build
    replaces the link itself (or refuses); the outside file keeps its bytes."""
    source, out, outside = built
    victim = outside / "victim.py"
    victim.write_text("# precious\n")
    server = out / PKG / "server.py"
    server.unlink()
    server.symlink_to(victim)
    stub = out / PKG / "handlers/tools/negate.py"
    stub.symlink_to(outside / "planted.py")  # dangling: the stub the build will add
    changed(source)
    code, output = build(str(source), "-o", str(out))
    assert code in (0, 2), output
    assert victim.read_text() == "# precious\n"
    assert not (outside / "planted.py").exists()
    assert sorted(p.name for p in outside.iterdir()) == ["victim.py"]
    if code == 0:
        assert not server.is_symlink() and "Generated by mcpgen" in server.read_text()


def test_the_obsolete_sweep_never_deletes_through_a_link(built: tuple[Path, Path, Path]) -> None:
    """Files an earlier build generated are deleted when no longer produced; a linked
    folder holding such files (outside OUT) is not swept."""
    source, out, outside = built
    old = outside / "old_generated.py"
    old.write_text("# Generated by mcpgen 0.0.1 — do not edit\n")
    (out / "src" / "linked").symlink_to(outside, target_is_directory=True)
    (out / "tests" / "linked_file.py").symlink_to(old)
    changed(source)
    code, output = build(str(source), "-o", str(out))
    assert code in (0, 2), output
    assert old.read_text().startswith("# Generated by mcpgen")


# -- no path escapes: files the manifest reads ---------------------------------------------


@pytest.fixture
def reading(tmp_path: Path) -> Path:
    """A manifest folder next to a secret, with links pointing out of the folder."""
    (tmp_path / "secret.txt").write_text("secret\n")
    (tmp_path / "secret-dir").mkdir()
    (tmp_path / "secret-dir" / "s.txt").write_text("secret\n")
    (tmp_path / "openapi.yaml").write_text(
        "openapi: 3.0.0\ninfo: {title: x, version: '1'}\npaths: {}\n"
    )
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "ok.txt").write_text("fine\n")
    (folder / "link.txt").symlink_to(tmp_path / "secret.txt")
    (folder / "linkdir").symlink_to(tmp_path / "secret-dir", target_is_directory=True)
    (folder / "spec-link.yaml").symlink_to(tmp_path / "openapi.yaml")
    return folder


OUTSIDE_FILES = [
    "../secret.txt",
    "sub/../../secret.txt",
    str(Path("/etc/hostname")),
    "link.txt",
    "linkdir/s.txt",
    "./linkdir/../link.txt",
]


@pytest.mark.parametrize("relative", OUTSIDE_FILES)
@pytest.mark.parametrize("where", ["resource", "prompt image"])
def test_static_files_outside_the_manifest_folder_are_rejected(
    reading: Path, relative: str, where: str
) -> None:
    data: dict[str, Any] = {"mcpgen": 1, "server": {"name": "files"}}
    if where == "resource":
        data["resources"] = [
            {"uri": "f://ok", "name": "ok", "file": "ok.txt", "description": "fine"},
            {"uri": "f://x", "name": "x", "file": relative, "description": "escapes"},
        ]
    else:
        data["prompts"] = [
            {
                "name": "p",
                "description": "p",
                "messages": [
                    {"role": "user", "image": {"mimeType": "image/png", "file": relative}}
                ],
            }
        ]
    source = reading / "m.yaml"
    write_manifest(source, data)
    loaded = load_manifest(source)
    assert loaded.manifest is None
    messages = [p.format() for p in loaded.problems.errors]
    assert any("file" in m for m in messages), messages
    out = reading / "out"
    code, output = build(str(source), "-o", str(out))
    assert code == 2 and "secret" not in output.replace(relative, ""), output
    assert not out.exists()


@pytest.mark.parametrize("spec", ["../openapi.yaml", "spec-link.yaml", "/etc/passwd"])
def test_openapi_source_outside_the_manifest_folder_is_rejected(reading: Path, spec: str) -> None:
    source = reading / "m.yaml"
    write_manifest(source, {"mcpgen": 1, "server": {"name": "api"}, "openapi": {"source": spec}})
    code, output = validate(source)
    assert code == 2, output
    assert "must stay inside the manifest's folder" in output


# -- bad input is exit 2, never an internal error -------------------------------------------


def test_a_manifest_that_is_a_symlink_loop_is_exit_2(tmp_path: Path) -> None:
    loop = tmp_path / "loop.yaml"
    loop.symlink_to(loop)
    code, output = validate(loop)
    assert code == 2, output
    assert "internal error" not in output


@pytest.mark.parametrize("spec", ["a\x00b.yaml", "loop.yaml"])
def test_an_unusable_openapi_source_is_exit_2(tmp_path: Path, spec: str) -> None:
    (tmp_path / "loop.yaml").symlink_to(tmp_path / "loop.yaml")
    source = tmp_path / "m.yaml"
    write_manifest(source, {"mcpgen": 1, "server": {"name": "api"}, "openapi": {"source": spec}})
    code, output = validate(source)
    assert code == 2, output
    assert "internal error" not in output


def test_a_folder_where_a_generated_file_goes_is_exit_2(built: tuple[Path, Path, Path]) -> None:
    source, out, _ = built
    (out / "README.md").unlink()
    (out / "README.md").mkdir()
    before = snapshot(out)
    result = CliRunner().invoke(main, ["build", str(source), "-o", str(out)], env={"CI": "1"})
    assert result.exit_code == 2, result.output
    assert "internal error" not in result.output
    assert snapshot(out) == before


@pytest.mark.parametrize("flags", [[], ["--check"], ["--diff"]])
def test_an_unreadable_file_in_out_is_exit_2_naming_it(
    built: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch, flags: list[str]
) -> None:
    """A generated file the user cannot read (chmod 000; faked: tests may run as root)."""
    source, out, _ = built
    real = Path.open  # (what ``read_text`` opens with too)

    def denied(self: Path, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if self.name == "README.md" and self.parent == out and mode == "r":
            raise PermissionError(13, "Permission denied")
        return real(self, mode, *args, **kwargs)

    monkeypatch.setattr(Path, "open", denied)
    before = snapshot(out)
    result = CliRunner().invoke(main, ["build", str(source), "-o", str(out), *flags])
    assert result.exit_code == 2, result.output
    assert "README.md: cannot read: Permission denied" in result.output
    assert snapshot(out) == before


def test_a_users_own_runtime_folder_in_out_is_kept(tmp_path: Path) -> None:
    """Building into a folder of the user's: only this build's package has mcpgen's
    ``_runtime/`` and ``_search.json``; another package's are the user's code."""
    out = tmp_path / "out"
    mine = out / "src" / "mylib"
    (mine / "_runtime").mkdir(parents=True)
    (mine / "_runtime" / "core.py").write_text("def core() -> int:\n    return 42\n")
    (mine / "_search.json").write_text("{}\n")
    source = shutil.copy(CALCULATOR, out)  # (-o . at the root of the user's repository)
    assert build(str(source), "-o", str(out))[0] == 0
    assert (mine / "_runtime" / "core.py").read_text().endswith("return 42\n")
    assert (mine / "_search.json").read_text() == "{}\n"


@pytest.mark.parametrize("target", ["home", "others"])
def test_a_first_build_into_a_folder_of_other_files_is_exit_2(
    target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``-o ~`` (even holding the manifest), or ``-o ~/Documents`` (files of the user's, no
    project, not the manifest's folder): nothing written, the folder named."""
    home = tmp_path / "home"
    out = home if target == "home" else home / "Documents"
    out.mkdir(parents=True)
    (out / "letter.txt").write_text("Dear ...\n")
    source = shutil.copy(CALCULATOR, home)
    monkeypatch.setenv("HOME", str(home))
    before = snapshot(tmp_path)
    code, output = build(str(source), "-o", str(out))
    assert code == 2 and snapshot(tmp_path) == before, output
    kind = "the home folder" if target == "home" else "a folder of other files (letter.txt)"
    assert output.startswith(f"{out}: error: -o is {kind}"), output
    assert f"e.g. -o {out / 'calculator'}\n" in output
    assert build(str(source), "-o", str(out / "calculator"))[0] == 0


def test_a_folder_holding_the_home_folder_is_refused_even_holding_the_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``-o ~/..`` (``/home``) with the manifest in ~: not the repository root ``-o .``
    is, but the other users' folders, nothing written."""
    home = tmp_path / "home" / "ann"
    home.mkdir(parents=True)
    (tmp_path / "home" / "bob").mkdir()
    source = shutil.copy(CALCULATOR, home)
    monkeypatch.setenv("HOME", str(home))
    before = snapshot(tmp_path)
    out = home / ".."
    code, output = build(str(source), "-o", str(out))
    assert code == 2 and output.startswith(f"{out}: error: -o is a folder holding the home folder")
    assert snapshot(tmp_path) == before
    repository = shutil.copy(CALCULATOR, tmp_path)  # -o . holding it, HOME inside: fine
    assert build(str(repository), "-o", str(tmp_path))[0] == 0


@pytest.mark.parametrize("target", ["home", "others"])
def test_a_dot_dot_out_of_a_missing_folder_is_refused_like_the_folder(
    target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``-o ~/nope/..`` (nope missing) is ``-o ~``: refused as that, nothing made (not a
    failed write that leaves ``nope`` behind)."""
    home = tmp_path / "home"
    folder = home if target == "home" else home / "Documents"
    folder.mkdir(parents=True)
    (folder / "letter.txt").write_text("Dear ...\n")
    source = shutil.copy(CALCULATOR, tmp_path)
    monkeypatch.setenv("HOME", str(home))
    before = snapshot(tmp_path)
    out = folder / "nope" / ".."
    code, output = build(str(source), "-o", str(out))
    kind = "the home folder" if target == "home" else "a folder of other files (letter.txt)"
    assert code == 2 and output.startswith(f"{out}: error: -o is {kind}"), output
    assert snapshot(tmp_path) == before


def test_a_dot_dot_out_of_a_missing_folder_builds_the_folder(tmp_path: Path) -> None:
    """``-o empty/nope/..`` is ``empty``: built there, ``nope`` not left behind (the write
    failed: a staging folder renamed onto ``nope/..``, and ``nope`` stayed)."""
    source = shutil.copy(CALCULATOR, tmp_path)
    (tmp_path / "empty").mkdir()
    code, output = build(str(source), "-o", str(tmp_path / "empty" / "nope" / ".."))
    assert code == 0, output
    assert sorted(p.name for p in (tmp_path / "empty").iterdir() if p.is_dir()) == ["src", "tests"]


@pytest.mark.parametrize("out", ["afile/x", "afile/..", "dangling", "loop", "loop/x"])
def test_an_output_under_a_file_or_a_broken_link_is_refused_up_front(
    out: str, tmp_path: Path
) -> None:
    """Exit 2 naming the file or link, nothing written (a link loop was an internal error,
    a dangling link a failed write)."""
    source = shutil.copy(CALCULATOR, tmp_path)
    (tmp_path / "afile").write_text("x\n")
    (tmp_path / "dangling").symlink_to(tmp_path / "missing" / "target")
    (tmp_path / "loop").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop")
    before = snapshot(tmp_path)
    code, output = build(str(source), "-o", str(tmp_path / out))
    named = tmp_path / out.split("/")[0]
    why = "exists and is not a folder" if out.startswith("afile") else "a link to nothing"
    assert code == 2 and output.startswith(f"{named}: {why}"), output
    assert snapshot(tmp_path) == before


def test_the_filesystem_root_is_never_a_first_build_s_folder(tmp_path: Path) -> None:
    """(Not built for real: tests may run as root.) Once a build made a folder, it is its."""
    assert writer.unsafe_root(Path("/"), CALCULATOR) == "the filesystem root"
    assert writer.unsafe_root(Path(tmp_path), tmp_path / "m.yaml") is None  # empty
    (tmp_path / "notes.txt").write_text("x")
    assert writer.unsafe_root(tmp_path, CALCULATOR) is not None
    assert writer.unsafe_root(tmp_path, tmp_path / "m.yaml") is None  # -o . holding it
    (tmp_path / "mcp-surface.json").write_text("{}")
    assert writer.unsafe_root(tmp_path, CALCULATOR) is None


def test_a_lone_surrogate_in_a_json_manifest_is_exit_2(tmp_path: Path) -> None:
    source = tmp_path / "m.json"
    source.write_text('{"mcpgen": 1, "server": {"name": "a", "description": "x\\ud800"}}')
    code, output = validate(source)
    assert code == 2, output
    assert "internal error" not in output


# -- a failing build leaves OUT as it was ---------------------------------------------------


def test_a_write_that_fails_while_staging_leaves_out_unchanged(
    built: tuple[Path, Path, Path],
) -> None:
    """tests/ replaced by a plain file: staging tests/*.py fails after README.md, pyproject
    and src/ were staged; every staged file is removed and OUT is as it was."""
    source, out, _ = built
    shutil.rmtree(out / "tests")
    (out / "tests").write_text("not a folder\n")
    changed(source)
    before = snapshot(out)
    code, output = build(str(source), "-o", str(out))
    assert code == 2 and "cannot write" in output, output
    assert snapshot(out) == before


def test_a_rename_that_fails_leaves_no_staged_files_behind(
    built: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    source, out, _ = built
    changed(source)
    real = os.replace
    calls = []

    def flaky(src: Any, dst: Any) -> None:
        calls.append(dst)
        if len(calls) == 2:
            raise OSError(5, "Input/output error")
        real(src, dst)

    monkeypatch.setattr(writer.os, "replace", flaky)
    code, output = build(str(source), "-o", str(out))
    assert code == 2, output
    leftovers = [
        p for p in out.rglob(".*") if p.is_file() and p.name not in (".gitignore", ".dockerignore")
    ]
    assert not leftovers, leftovers


def test_ctrl_c_while_files_are_swapped_in_finishes_the_swap(
    built: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGINT between two renames: the build stops ("interrupted", exit 130) with every file
    in place as an uninterrupted build leaves them; not half old and half new."""
    source, out, _ = built
    changed(source)
    whole = out.parent / "whole"
    shutil.copytree(out, whole)
    assert build(str(source), "-o", str(whole))[0] == 0
    real = os.replace
    calls = []

    def interrupted(src: Any, dst: Any) -> None:
        calls.append(dst)
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGINT)
        real(src, dst)

    monkeypatch.setattr(writer.os, "replace", interrupted)
    result = CliRunner().invoke(main, ["build", str(source), "-o", str(out)], env={"CI": "1"})
    assert result.exit_code == 130 and "interrupted" in result.output, result.output
    assert len(calls) > 2 and snapshot(out) == snapshot(whole)


# Runs the CLI with SIGTERM sent to itself between the second and third file swapped in.
_SIGTERM_IN_SWAP = """
import os, signal, sys
real, calls = os.replace, []

def replace(src, dst):
    calls.append(dst)
    if len(calls) == 2:
        os.kill(os.getpid(), signal.SIGTERM)
    real(src, dst)

os.replace = replace
from mcpgen.cli import run
run()
"""


def test_sigterm_while_files_are_swapped_in_finishes_the_swap(
    built: tuple[Path, Path, Path],
) -> None:
    """``timeout`` or a cancelled CI job sends SIGTERM: like Ctrl-C, the build stops after
    the last file is swapped in (exit 130), not half old and half new with staged files
    left in OUT."""
    source, out, _ = built
    changed(source)
    whole = out.parent / "whole"
    shutil.copytree(out, whole)
    assert build(str(source), "-o", str(whole))[0] == 0
    done = subprocess.run(
        [sys.executable, "-c", _SIGTERM_IN_SWAP, "build", str(source), "-o", str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert done.returncode == 130 and "interrupted" in done.stderr, done.stderr
    assert snapshot(out) == snapshot(whole)


def test_the_build_after_a_kill_9_in_the_swap_repairs_it_and_says_so(
    built: tuple[Path, Path, Path],
) -> None:
    """``kill -9`` between two files swapped in leaves OUT half old, half new, with staged
    files beside their targets: the next build removes them, says so, and leaves OUT as an
    uninterrupted build does, the user's handler edits kept (it was silent)."""
    source, out, _ = built
    handler = out / PKG / "handlers/tools/add.py"
    handler.write_text(handler.read_text() + "# mine\n")
    changed(source)
    whole = out.parent / "whole"
    shutil.copytree(out, whole)
    assert build(str(source), "-o", str(whole))[0] == 0
    killed = _SIGTERM_IN_SWAP.replace("os.kill(os.getpid(), signal.SIGTERM)", "os._exit(137)")
    done = subprocess.run(
        [sys.executable, "-c", killed, "build", str(source), "-o", str(out)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert done.returncode == 137 and snapshot(out) != snapshot(whole)
    code, output = build(str(source), "-o", str(out))
    assert code == 0 and "an earlier build was interrupted while writing it" in output, output
    assert snapshot(out) == snapshot(whole) and handler.read_text().endswith("# mine\n")


# Makes the import of mcpgen.cli raise KeyboardInterrupt: Ctrl-C before the CLI's own handler.
_CTRL_C_ON_IMPORT = """
import sys

class CtrlC:
    def find_spec(self, name, path=None, target=None):
        if name == "mcpgen.cli":
            raise KeyboardInterrupt

sys.meta_path.insert(0, CtrlC())
"""


@pytest.mark.parametrize(
    "entry",
    [
        "import runpy; runpy.run_module('mcpgen', run_name='__main__')",  # python -m mcpgen
        "from mcpgen.__main__ import main; main()",  # the console script
    ],
)
def test_ctrl_c_while_the_cli_imports_is_one_line_and_130(entry: str, tmp_path: Path) -> None:
    """Ctrl-C while ``mcpgen.cli`` is still importing: "interrupted", exit 130, no traceback,
    from both entry points (``python -m mcpgen`` and the ``mcpgen`` console script)."""
    argv = ["mcpgen", "build", str(CALCULATOR), "-o", str(tmp_path / "out")]
    code = f"{_CTRL_C_ON_IMPORT}\nsys.argv = {argv!r}\n{entry}\n"
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (130, "interrupted\n"), done.stderr
    assert not (tmp_path / "out").exists()


# -- no lost data across a long run of manifest changes -------------------------------------

TYPES = [
    {"type": "string"},
    {"type": "number"},
    {"type": "integer", "minimum": 0},
    {"type": "boolean"},
    {"type": "array", "items": {"type": "string"}},
    {"type": "string", "enum": ["a", "b"]},
    {"$ref": "#/$defs/Number"},
]


class Editor:
    """Random, valid manifest changes (and now and then a broken one)."""

    def __init__(self, data: dict[str, Any], rng: random.Random) -> None:
        self.data = data
        self.rng = rng
        self.count = 0

    def fresh(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def schema(self) -> dict[str, Any]:
        names = self.rng.sample(["q", "limit", "from", "class", "my-field", "x", "y"], 3)
        properties = {n: copy.deepcopy(self.rng.choice(TYPES)) for n in names}
        return {"type": "object", "properties": properties, "required": names[:1]}

    def tools(self) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = self.data.setdefault("tools", [])
        return tools

    def step(self) -> str:
        kinds = ["add_tool", "describe", "add_resource", "add_prompt", "add_template"]
        if len(self.tools()) > 1:
            kinds += ["remove_tool", "rename_tool", "change_input", "change_output"] * 2
        kind = self.rng.choice(kinds)
        tools = self.tools()
        tool = self.rng.choice(tools) if tools else None
        if kind == "add_tool":
            tools.append(
                {"name": self.fresh("tool_"), "description": "new", "input": self.schema()}
            )
        elif kind == "remove_tool":
            tools.remove(tool)
        elif kind == "rename_tool":
            assert tool is not None
            tool["name"] = self.fresh(tool["name"].split("_r")[0] + "_r")
        elif kind == "change_input":
            assert tool is not None
            tool["input"] = self.schema()
        elif kind == "change_output":
            assert tool is not None
            if "output" in tool:
                del tool["output"]
            else:
                tool["output"] = {
                    "type": "object",
                    "properties": {"value": {"type": "number"}},
                    "required": ["value"],
                }
        elif kind == "describe":
            target = tool if tool is not None else self.data["server"]
            target["description"] = self.rng.choice(HOSTILE)
        elif kind == "add_resource":
            name = self.fresh("res_")
            self.data.setdefault("resources", []).append(
                {"uri": f"calc://{name}", "name": name, "description": "d", "text": "hello"}
            )
        elif kind == "add_template":
            name = self.fresh("tpl_")
            self.data.setdefault("resources", []).append(
                {"uriTemplate": f"calc://{name}/{{id}}", "name": name, "description": "d"}
            )
        elif kind == "add_prompt":
            name = self.fresh("prompt_")
            prompt: dict[str, Any] = {
                "name": name,
                "description": "d",
                "arguments": [{"name": "a"}],
            }
            if self.rng.random() < 0.5:
                prompt["handler"] = True
            else:
                prompt["messages"] = [{"role": "user", "text": "Hi {{ a }}"}]
            self.data.setdefault("prompts", []).append(prompt)
        return kind

    def broken(self) -> tuple[str, dict[str, Any]]:
        """A copy of the manifest with one error (the next build must fail)."""
        data = copy.deepcopy(self.data)
        kind = self.rng.choice(["bad_name", "bad_ref", "unsatisfiable", "duplicate"])
        tools = data["tools"]
        if kind == "bad_name":
            tools.append({"name": "bad name!", "description": "x"})
        elif kind == "bad_ref":
            tools.append({"name": "broken", "description": "x", "input": {
                "type": "object", "properties": {"a": {"$ref": "#/$defs/Missing"}}}})  # fmt: skip
        elif kind == "unsatisfiable":  # only the model generator notices
            tools.append({"name": "broken", "description": "x", "input": {
                "type": "object", "properties": {"a": {"anyOf": [False]}}}})  # fmt: skip
        else:
            tools.append(copy.deepcopy(tools[0]))
        return kind, data


def edit(path: Path, marker: str) -> bytes:
    with path.open("a", encoding="utf-8") as stream:
        stream.write(f"# user edit {marker}: keep me\n")
    return path.read_bytes()


def test_handler_edits_survive_a_long_run_of_manifest_changes(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    source = tmp_path / "calc.yaml"
    shutil.copy(CALCULATOR, source)
    data: dict[str, Any] = yaml.safe_load(source.read_text("utf-8"))
    out = tmp_path / "out"
    assert build(str(source), "-o", str(out))[0] == 0
    tools = out / PKG / "handlers" / "tools"
    edited = {
        path: edit(path, f"{path.stem}-0")
        for path in sorted(tools.glob("*.py"))
        if path.name != "__init__.py" and path.stem != "convert_units"
    }
    editor = Editor(data, rng)
    kinds: list[str] = []
    failures = 0
    for step in range(1, STEPS + 1):
        if step % 7 == 0:  # a broken manifest in the middle: nothing in OUT may change
            kind, bad = editor.broken()
            write_manifest(source, bad)
            before = snapshot(out)
            code, output = build(str(source), "-o", str(out))
            assert code == 2, (step, kind, output)
            assert snapshot(out) == before, (step, kind)
            failures += 1
        kind = editor.step()
        kinds.append(kind)
        write_manifest(source, data)
        code, output = build(str(source), "-o", str(out))
        assert code == 0, (step, kind, output)
        for path, content in edited.items():
            assert path.is_file(), (step, kind, path)
            assert path.read_bytes() == content, (step, kind, path)
        code, output = build(str(source), "-o", str(out), "--check")
        assert code == 0, (step, kind, output)
        for path in sorted(tools.glob("*.py")):  # edit the new stubs too
            if path not in edited and path.name != "__init__.py" and rng.random() < 0.5:
                edited[path] = edit(path, f"{path.stem}-{step}")
    current = {t["name"] for t in data["tools"]}
    orphans = [p for p in edited if p.stem not in current]
    print(
        f"\nedits: {STEPS} manifest changes ({', '.join(sorted(set(kinds)))}), {failures} "
        f"failed builds left OUT unchanged, {len(edited)} edited handlers byte-identical "
        f"after every build ({len(orphans)} of them orphaned)"
    )
    assert orphans, "the run should have removed or renamed an edited tool"
    assert len(edited) >= 6 and failures == STEPS // 7
    assert {"add_tool", "remove_tool", "rename_tool", "change_input"} <= set(kinds), kinds
