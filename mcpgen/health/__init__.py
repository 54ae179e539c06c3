"""Handler health: ``mcpgen check DIR``, what ``build --check`` cannot see (it compares
generated files; the user's handlers are not generated). The ``CHECKS`` are described in
``check_command``'s help.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath

import click

from . import project
from .code import ENTRY_POINTS, entry_point, parse, unimplemented

CHECKS = ("drift", "stubs", "orphans", "types")


@dataclass(frozen=True)
class Problem:
    check: str  # one of CHECKS
    path: str  # relative to the project ("" for the project itself)
    line: int  # 0: the file as a whole
    message: str


@dataclass
class Report:
    manifest: str | None = None
    problems: list[Problem] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # check -> why

    @property
    def ok(self) -> bool:
        return not self.problems

    def counts(self) -> dict[str, int]:
        return {c: sum(1 for p in self.problems if p.check == c) for c in CHECKS}


def check(root: Path, manifest: Path | None = None, skip: frozenset[str] = frozenset()) -> Report:
    """Every check on the project in ``root`` (raises :class:`.project.BadInput`)."""
    from mcpgen.cli.build import rebuild_hint
    from mcpgen.write.handlers import orphans

    from . import typecheck

    found = project.open_project(root, manifest)
    report = Report(found.manifest.as_posix() if found.manifest else None)
    skipped = {name: f"--skip {name}" for name in skip}
    if found.manifest is None or "drift" in skip:
        skipped.setdefault("drift", found.manifest_note)
        named = project.named_from_spec(found)
    else:
        drift, named = project.check_drift(found)
        message = f"out of date with {found.manifest} (run: {rebuild_hint(found.manifest, root)})"
        report.problems += [Problem("drift", p, 0, message) for p in drift]
    if "stubs" not in skip:
        report.problems += _stubs(root, named)
    if "orphans" not in skip:
        message = "no manifest item uses it and no handler imports it (kept)"
        report.problems += [Problem("orphans", p, 0, message) for p in orphans(root, named)]
    if "types" not in skip:
        problems, skipped["types"] = typecheck.run(root, found.package)
        report.problems += problems
    report.skipped = {name: skipped[name] for name in CHECKS if skipped.get(name)}
    return report


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
    type-check against the generated models (mypy --strict, when mypy is installed).
    Exit status: 0 ok, 1 problems, 2 bad input.
    """
    try:
        report = check(directory, manifest, frozenset(skip))
    except project.BadInput as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    if output_format == "json":
        data = {
            "ok": report.ok,
            "project": str(directory),
            "manifest": report.manifest,
            "problems": [asdict(p) for p in report.problems],
            "counts": report.counts(),
            "skipped": report.skipped,
        }
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        for problem in report.problems:
            where = f"{problem.path}:{problem.line}" if problem.line else problem.path
            click.echo(f"{where}: {problem.check}: {problem.message}")
        for name, reason in report.skipped.items():
            click.echo(f"{directory}: {name} skipped: {reason}", err=True)
        if report.ok:
            ran = [c for c in CHECKS if c not in report.skipped]
            click.echo(f"{directory}: ok ({', '.join(ran) or 'nothing'} checked)", err=True)
        else:
            detail = ", ".join(f"{n} {c}" for c, n in report.counts().items() if n)
            click.echo(f"{directory}: {len(report.problems)} problem(s): {detail}", err=True)
    sys.exit(0 if report.ok else 1)
