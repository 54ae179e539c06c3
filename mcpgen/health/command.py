"""``mcpgen check DIR``: handler health of a generated project, with exit codes for CI.

Exit status: 0 no problem, 1 problems, 2 bad input (not a generated project, a manifest
that is missing or has errors).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from mcpgen.health import CHECKS


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
def check(
    directory: Path, manifest: Path | None, output_format: str, skip: tuple[str, ...]
) -> None:
    """Check the handlers of the generated project in DIRECTORY (default: here).

    Reports generated files out of date with the manifest (what build --check says),
    handlers that still raise NotImplementedError, orphaned handler files (not an override
    of an imported operation, not a helper a handler imports), and handlers that no longer
    type-check against the generated models (mypy --strict, when mypy is installed).
    Exit status: 0 ok, 1 problems, 2 bad input.
    """
    from mcpgen.health import check as run_checks
    from mcpgen.health.project import BadInput

    try:
        report = run_checks(directory, manifest, frozenset(skip))
    except BadInput as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    if output_format == "json":
        data = {
            "ok": report.ok,
            "project": str(directory),
            "manifest": report.manifest,
            "problems": [p.to_data() for p in report.problems],
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
        counts = report.counts()
        if report.ok:
            ran = [c for c in CHECKS if c not in report.skipped]
            click.echo(f"{directory}: ok ({', '.join(ran) or 'nothing'} checked)", err=True)
        else:
            detail = ", ".join(f"{n} {c}" for c, n in counts.items() if n)
            click.echo(f"{directory}: {len(report.problems)} problem(s): {detail}", err=True)
    sys.exit(0 if report.ok else 1)
