"""Handler health: ``mcpgen check DIR`` (the ``CHECKS``: see ``check_command``'s help),
against the manifest given or the one ``pyproject.toml`` records (``[tool.mcpgen] source``).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import tomllib
from dataclasses import asdict, dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any

import click

from mcpgen import identifiers as names

from .code import ENTRY_POINTS, entry_point, parse, unimplemented

CHECKS = ("drift", "stubs", "orphans", "types")
MYPY_TIMEOUT = 600.0
CALLS = "(the generated server's call of a handler: does its signature fit the manifest?)"


@dataclass(frozen=True)
class Problem:
    check: str  # one of CHECKS
    path: str  # relative to the project ("" for the project itself)
    line: int  # 0: the file as a whole
    message: str


class BadInput(Exception):
    """The folder or the manifest cannot be checked; the message is one line."""


@dataclass
class Project:
    root: Path
    package: str
    spec: dict[str, Any]
    manifest: Path | None = None  # None: no drift check
    manifest_note: str = ""  # why there is none


def open_project(root: Path, manifest: Path | None) -> Project:
    if not root.is_dir():
        raise BadInput(f"{root}: not a folder")
    found = sorted(root.glob("src/*/_spec.json"))
    if not found:
        raise BadInput(f"{root}: not a project mcpgen generated (no src/<package>/_spec.json)")
    if len(found) > 1:
        raise BadInput(f"{root}: more than one generated package under src/")
    try:
        spec = json.loads(found[0].read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise BadInput(f"{found[0]}: cannot be read: {exc}") from None
    if not isinstance(spec, dict):
        raise BadInput(f"{found[0]}: not an mcpgen spec")
    if manifest is not None and not manifest.is_file():
        raise BadInput(f"{manifest}: file not found")
    recorded = (manifest, "") if manifest is not None else _recorded(root)
    return Project(root, found[0].parent.name, spec, *recorded)


def _recorded(root: Path) -> tuple[Path | None, str]:
    """The manifest ``pyproject.toml`` records, or why there is none to use."""
    try:
        data = tomllib.loads((root / "pyproject.toml").read_text("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None, "pyproject.toml cannot be read; pass --manifest"
    source = data.get("tool", {}).get("mcpgen", {}).get("source")
    if not isinstance(source, str) or not source:
        return None, "pyproject.toml records no [tool.mcpgen] source; pass --manifest"
    path = root / source
    if not path.is_file():
        raise BadInput(
            f"{root}: the manifest it was built from, {source} (pyproject.toml, "
            "[tool.mcpgen] source), is not there; pass --manifest"
        )
    return path, ""


def check_drift(project: Project) -> tuple[list[str], set[str]]:
    """What ``build --check`` reports, and the handler files the build names."""
    from mcpgen.cli.build import source_from
    from mcpgen.format import FormatError
    from mcpgen.pipeline import load_manifest, render_files
    from mcpgen.problems import InputError, first_problem
    from mcpgen.write import plan

    assert project.manifest is not None
    server = project.spec.get("server", {})
    name = server.get("name") if isinstance(server, dict) else None
    loaded = load_manifest(project.manifest, False, name if isinstance(name, str) else None)
    if loaded.manifest is None:
        raise BadInput(first_problem(loaded.problems, str(project.manifest)))
    try:
        output = render_files(loaded.manifest, source_from(project.root, project.manifest))
        the_plan = plan(project.root, output)
    except InputError as exc:
        raise BadInput(f"{project.manifest}: {exc}") from None
    except (FormatError, ValueError) as exc:
        raise BadInput(str(exc)) from None
    if loaded.manifest.server.package != project.package:
        raise BadInput(
            f"{project.manifest} builds package {loaded.manifest.server.package}, "
            f"{project.root} holds {project.package}: not this project's manifest"
        )
    return the_plan.drift, set(output.stubs) | output.overrides


def named_from_spec(project: Project) -> set[str]:
    """Without a manifest: the handler files the project's ``_spec.json`` names."""
    package = f"src/{project.package}"
    named = {f"{package}/handlers/__init__.py"}
    for kind in ("tools", "resources", "prompts", "completions"):
        value = project.spec.get(kind)
        for entry in value if isinstance(value, list) else []:
            match kind, entry:
                case _, {"handler": str(handler)}:
                    named.add(handler)
                case "tools", {"http": _, "ident": str(ident)}:
                    named.add(f"{package}/{names.handler_path(kind, ident)}")
                case "completions", {"handler": True}:  # built by an older mcpgen
                    ident = names.completion_ident(
                        *(str(entry.get(k)) for k in ("target", "ref", "argument"))
                    )
                    named.add(f"{package}/{names.handler_path(kind, ident)}")
    # each kind's package
    return named | {"/".join(p.split("/")[:4]) + "/__init__.py" for p in named if p.count("/") > 3}


def mypy_available() -> bool:
    return importlib.util.find_spec("mypy") is not None


def typecheck(root: Path, package: str) -> tuple[list[Problem], str]:
    """``mypy --strict`` on the handlers and ``server.py`` (its calls of them), with the
    project's configuration: its errors (those in what they import apart), or why not run."""
    if not mypy_available():
        return [], "mypy is not installed in this environment (pip install mypy)"
    handlers, server = f"src/{package}/handlers", f"src/{package}/server.py"
    if not (root / handlers).is_dir():
        return [], f"{handlers} does not exist"
    command = [sys.executable, "-m", "mypy", "--strict", "--output", "json", "--no-error-summary"]
    if (root / "pyproject.toml").is_file():
        command += ["--config-file", "pyproject.toml"]
    try:
        done = subprocess.run(
            [*command, handlers, *([server] if (root / server).is_file() else [])],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=MYPY_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return [], f"mypy took longer than {MYPY_TIMEOUT:.0f} s"
    except OSError as exc:
        return [], f"mypy could not be started: {exc}"
    found: list[Problem] = []
    unparsed: list[str] = []
    for line in done.stdout.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            if line.strip():
                unparsed.append(line)
            continue
        if isinstance(entry, dict) and entry.get("severity") == "error":
            code = f"  [{entry['code']}]" if entry.get("code") else ""
            path = Path(str(entry.get("file", "?"))).as_posix()
            line_no = entry["line"] if isinstance(entry.get("line"), int) else 0
            found.append(Problem("types", path, line_no, f"{entry.get('message')}{code}"))
    if done.returncode not in (0, 1) or (done.returncode == 1 and not found):
        detail = (done.stderr.strip() or "\n".join(unparsed)).splitlines()
        reason = detail[-1] if detail else f"exit status {done.returncode}"
        return [], f"mypy failed: {reason}"
    inside = [e for e in found if e.path.startswith(handlers + "/")]
    called = [replace(e, message=f"{e.message} {CALLS}") for e in found if e.path == server]
    others = [e for e in found if e not in inside and e.path != server]
    rest = [replace(e, message=e.message + " (in code the handlers import)") for e in others]
    return inside + called + rest, ""


def check(
    found: Project, skip: frozenset[str] = frozenset()
) -> tuple[list[Problem], dict[str, str]]:
    """Every check on the project: the problems, and why a check was skipped (by check)."""
    from mcpgen.cli.build import rebuild_hint
    from mcpgen.write.handlers import orphans

    root, problems = found.root, []
    skipped = {name: f"--skip {name}" for name in skip}
    if found.manifest is None or "drift" in skip:
        skipped.setdefault("drift", found.manifest_note)
        named = named_from_spec(found)
    else:
        drift, named = check_drift(found)
        message = f"out of date with {found.manifest} (run: {rebuild_hint(found.manifest, root)})"
        problems += [Problem("drift", p, 0, message) for p in drift]
    if "stubs" not in skip:
        problems += _stubs(root, named)
    if "orphans" not in skip:
        message = "no manifest item uses it and no handler imports it (kept)"
        problems += [Problem("orphans", p, 0, message) for p in orphans(root, named)]
    if "types" not in skip:
        typed, skipped["types"] = typecheck(root, found.package)
        problems += typed
    return problems, {name: skipped[name] for name in CHECKS if skipped.get(name)}


def stubs_left(root: Path, package: str) -> list[Problem]:
    """The handlers the project's ``_spec.json`` names that are still stubs (``bundle``)."""
    spec = json.loads((root / "src" / package / "_spec.json").read_text("utf-8"))
    return _stubs(root, named_from_spec(Project(root, package, spec)))


def _stubs(root: Path, named: set[str]) -> list[Problem]:
    problems = []
    for relative in sorted(named):
        parts = PurePosixPath(relative).parts  # src/<pkg>/handlers/<kind>/<name>.py only
        function = ENTRY_POINTS.get(parts[3]) if len(parts) == 5 else None
        if function is None or parts[-1] == "__init__.py" or not (root / relative).is_file():
            continue
        tree = parse(root / relative)
        if isinstance(tree, str):
            problems.append(Problem("stubs", relative, 0, tree))
            continue
        node = entry_point(tree, function)
        if node is None:
            problems.append(Problem("stubs", relative, 0, f"defines no {function}() function"))
        elif unimplemented(node):
            message = f"{function}() still raises NotImplementedError: write the handler"
            problems.append(Problem("stubs", relative, node.lineno, message))
    return problems


@click.command("check")
@click.argument(
    "directory", type=click.Path(file_okay=False, path_type=Path), default=".", required=False
)
@click.option(
    "--manifest",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The manifest (or OpenAPI document) the project is built from (default: the one "
    "pyproject.toml records, [tool.mcpgen] source).",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="json: one object with every problem, for tools.",
)
@click.option(
    "--skip",
    type=click.Choice(CHECKS),
    multiple=True,
    help="Leave a check out (repeatable), e.g. --skip stubs while handlers are being written.",
)
def check_command(
    directory: Path, manifest: Path | None, output_format: str, skip: tuple[str, ...]
) -> None:
    """Check the handlers of the generated project in DIRECTORY (default: here).

    Reports generated files out of date with the manifest (what build --check says),
    handlers that still raise NotImplementedError, orphaned handler files (not an override
    of an imported operation, not a helper a handler imports), and handlers that no longer
    type-check against the generated models or the server's calls (mypy --strict, when
    mypy is installed).
    Exit status: 0 ok, 1 problems, 2 bad input.
    """
    try:
        found = open_project(directory, manifest)
        problems, skipped = check(found, frozenset(skip))
    except BadInput as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    counts = {c: sum(1 for p in problems if p.check == c) for c in CHECKS}
    if output_format == "json":
        data = {
            "ok": not problems,
            "project": str(directory),
            "manifest": found.manifest.as_posix() if found.manifest else None,
            "problems": [asdict(p) for p in problems],
            "counts": counts,
            "skipped": skipped,
        }
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        for problem in problems:
            where = f"{problem.path}:{problem.line}" if problem.line else problem.path
            click.echo(f"{where}: {problem.check}: {problem.message}")
        for name, reason in skipped.items():
            click.echo(f"{directory}: {name} skipped: {reason}", err=True)
        if not problems:
            ran = [c for c in CHECKS if c not in skipped]
            click.echo(f"{directory}: ok ({', '.join(ran) or 'nothing'} checked)", err=True)
        else:
            detail = ", ".join(f"{n} {c}" for c, n in counts.items() if n)
            click.echo(f"{directory}: {len(problems)} problem(s): {detail}", err=True)
    sys.exit(1 if problems else 0)
