"""``mcpgen diff OLD NEW``: what changed in the surface clients see, and whether it breaks them.

Exit status: 0 no change at or above ``--fail-on``, 1 such a change, 2 bad input.
"""

from __future__ import annotations

import os
import sys

import click

FAIL_ON = ("breaking", "compatible", "docs", "none")


@click.command("diff")
@click.argument("old")
@click.argument("new")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "markdown", "json"]),
    default="text",
    show_default=True,
    help="text for a terminal, markdown for a pull request comment, json for tools.",
)
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    default="breaking",
    show_default=True,
    help="Exit 1 when a change at this level or above exists (none: never).",
)
def diff(old: str, new: str, output_format: str, fail_on: str) -> None:
    """Compare the MCP surface of OLD and NEW and classify every change.

    OLD and NEW are each a surface file (mcp-surface.json), a generated project folder, a
    manifest, an OpenAPI document, or git:REF:PATH (PATH at revision REF of the current
    repository, e.g. git:origin/main:mcp-surface.json). Changes are breaking, compatible
    or docs; docs/surface.md lists the rules.
    """
    from . import report
    from .changes import RANK
    from .diff import diff as compare
    from .diff import summary
    from .sources import SourceError, load_both

    try:
        before, after = load_both(old, new)
    except SourceError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    changes = compare(before, after)
    counts = summary(changes, before, after)
    if output_format == "json":
        click.echo(report.as_json(changes, counts), nl=False)
    elif output_format == "markdown":
        click.echo(report.markdown(changes, counts), nl=False)
    else:
        color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        click.echo(report.text(changes, counts, color), nl=False)
    if fail_on != "none" and any(RANK[c.level] <= RANK[fail_on] for c in changes):
        sys.exit(1)
