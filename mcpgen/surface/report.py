"""``mcpgen diff OLD NEW``: what changed in the surface clients see, and whether it breaks
them. Exit status: 0 no change at or above ``--fail-on``, 1 such a change, 2 bad input."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from dataclasses import asdict

import click

from .changes import LEVELS, RANK, Change

MARKDOWN_ROWS = 100  # per level, at most
MERGED_ITEMS = 3  # items named in a row that several items share
MARKDOWN_LIMIT = 60_000  # characters: a GitHub comment holds 65,536
COLORS = {"breaking": "red", "compatible": "yellow", "docs": "cyan"}


def _signed(n: int) -> str:
    return f"{n:+,}" if n else "±0"


def _counts(summary: dict[str, int]) -> str:
    return ", ".join(f"{summary[level]} {level}" for level in LEVELS)


def cost_line(summary: dict[str, int], arrow: str = "->") -> str:
    b0, b1 = summary["bytesBefore"], summary["bytesAfter"]
    t0, t1 = summary["tokensBefore"], summary["tokensAfter"]
    return (
        f"tools/list {b0:,} {arrow} {b1:,} bytes ({_signed(b1 - b0)}), "
        f"~{t0:,} {arrow} ~{t1:,} tokens ({_signed(t1 - t0)}; estimated as bytes / 4)"
    )


def _groups(changes: Sequence[Change]) -> list[tuple[str, list[Change]]]:
    return [(level, g) for level in LEVELS if (g := [c for c in changes if c.level == level])]


def text(changes: Sequence[Change], summary: dict[str, int]) -> str:
    """For a terminal: with styles, which ``click.echo`` removes where there is none."""
    lines = [f"{_counts(summary)}; {cost_line(summary)}"]
    for level, group in _groups(changes):
        lines += ["", click.style(f"{level} ({len(group)})", fg=COLORS[level], bold=True)]
        for change in group:
            where = change.item + (f" {change.path}" if change.path else "")
            lines.append(f"  {click.style(where, bold=True)}: {change.change}")
            lines.append(f"    {click.style(change.why, dim=True)}")
    if not changes:
        lines.append("no changes")
    return "\n".join(lines) + "\n"


def _cell(value: str) -> str:
    return value.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _code(value: str) -> str:
    if "`" in value:
        return f"`` {_cell(value)} ``"
    return f"`{_cell(value)}`" if value else ""


def markdown(changes: Sequence[Change], summary: dict[str, int]) -> str:
    """A pull request comment: counts, cost, a table per level, cut to fit one comment."""
    rows = MARKDOWN_ROWS
    while True:
        text = _markdown(changes, summary, rows)
        if len(text) <= MARKDOWN_LIMIT or rows <= 5:
            return text
        rows //= 2


def _markdown(changes: Sequence[Change], summary: dict[str, int], rows: int) -> str:
    lines = [f"### MCP surface: {_counts(summary)}", "", cost_line(summary, "→"), ""]
    if not changes:
        lines.append("No change to what clients see.")
    for level, group in _groups(changes):
        fold = level == "docs"
        title = f"{level.capitalize()} ({len(group)})"
        lines.append(f"<details><summary>{title}</summary>" if fold else f"#### {title}")
        lines += ["", "| Item | Path | Change | Why |", "|---|---|---|---|"]
        merged: dict[tuple[str, str, str], tuple[list[str], Change]] = {}
        for c in group:  # one row per (path, change, why): a definition many tools share
            merged.setdefault((c.path, c.change, c.why), ([], c))[0].append(c.item)
        shown = list(merged.values())
        for items, change in shown[:rows]:
            named = ", ".join(_code(item) for item in items[:MERGED_ITEMS])
            more = len(items) - MERGED_ITEMS
            named += f" and {more} more" if more > 0 else ""
            lines.append(
                f"| {named} | {_code(change.path)} | {_cell(change.change)} | {_cell(change.why)} |"
            )
        if len(shown) > rows:
            left = sum(len(items) for items, _ in shown[rows:])
            lines.append(f"\n… and {left} more (`mcpgen diff --format json` lists them all)")
        lines += ["", "</details>", ""] if fold else [""]
    return "\n".join(lines).rstrip("\n") + "\n"


def as_json(changes: Sequence[Change], summary: dict[str, int]) -> str:
    data = {"changes": [asdict(c) for c in changes], "summary": summary}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


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
    type=click.Choice([*LEVELS, "none"]),
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
    shown = {"text": text, "json": as_json, "markdown": markdown}[output_format](changes, counts)
    click.echo(shown, nl=False, color=False if os.environ.get("NO_COLOR") else None)
    if fail_on != "none" and any(RANK[c.level] <= RANK[fail_on] for c in changes):
        sys.exit(1)
