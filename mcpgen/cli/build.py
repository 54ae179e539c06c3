"""``mcpgen build``: load -> validate -> model -> render -> compare/write, with a summary."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from mcpgen import early
from mcpgen import format as formatting
from mcpgen import identifiers as names
from mcpgen import timings as timing
from mcpgen.cli.output import EXIT_BAD_INPUT, EXIT_DRIFT, EXIT_OK, report
from mcpgen.format import FormatError, cache
from mcpgen.format.pool import Workers
from mcpgen.model.build import tools_list_bytes
from mcpgen.model.types import Manifest
from mcpgen.pipeline import load_manifest
from mcpgen.problems import InputError, Problems
from mcpgen.render import models as modelgen
from mcpgen.render import render_project
from mcpgen.render.spec import tool_entry
from mcpgen.write import apply, diff, plan


def _interactive() -> bool:
    import os

    return sys.stderr.isatty() and not os.environ.get("CI")


def context_cost(manifest: Manifest) -> tuple[int, int]:
    """(tools listed, bytes of the tools/list result) a model's context pays for."""
    tools = manifest.advertised_tools
    return sum(1 for t in tools if t.enabled), tools_list_bytes(tools)


def _start_early(source: Path, workers: Workers) -> None:
    """Put the core that loading the source leaves idle to work (``early``): a first build
    of a big API starts the whole pool now, a rebuild a spare worker for the models of
    what changed (unless the ``mcpgen`` command forked it already)."""
    start = early.plan(source)
    if start == "pool":
        workers.start(modelgen.warm, formatting.warm)
    elif start == "spare":
        workers.start_spare(early.load_generator)


def run_build(
    source: Path,
    output: Path | None,
    *,
    check: bool,
    show_diff: bool,
    strict: bool,
    max_context_bytes: int | None = None,
    timings: bool = False,
    name: str | None = None,
) -> int:
    timing.reset()
    try:
        with Workers() as workers:
            _start_early(source, workers)
            code = _build(
                source, output, check, show_diff, strict, max_context_bytes, workers, name
            )
        with timing.phase("cache upkeep"):
            cache.prune()
        return code
    finally:
        if timings:
            click.echo(timing.report(), err=True)


def _build(
    source: Path,
    output: Path | None,
    check: bool,
    show_diff: bool,
    strict: bool,
    max_context_bytes: int | None,
    workers: Workers,
    name: str | None = None,
) -> int:
    with timing.phase("load + validate"):
        loaded = load_manifest(source, strict, name)
    if loaded.manifest is None:
        report(loaded.problems, strict)
        return EXIT_BAD_INPUT
    manifest = loaded.manifest
    report(loaded.problems)
    if manifest.mode_reason and not check:
        click.echo(manifest.mode_reason, err=True)
    if max_context_bytes is not None:  # a budget is checked before any work
        with timing.phase("context cost"):
            size = context_cost(manifest)[1]
        if size > max_context_bytes:
            click.echo(
                f"{source}: tools/list would cost {size} bytes, over --max-context-bytes "
                f"{max_context_bytes}; filter operations (openapi.include/exclude) or use "
                "openapi.metaTools",
                err=True,
            )
            return EXIT_BAD_INPUT
    root = output or Path(names.kebab(manifest.server.name))
    if root.exists() and not root.is_dir():
        click.echo(f"{root}: exists and is not a folder", err=True)
        return EXIT_BAD_INPUT
    try:
        rendered = render_project(manifest, show_progress=_interactive(), workers=workers)
        with timing.phase("compare"):
            the_plan = plan(root, rendered)
    except InputError as exc:
        problems = Problems()
        problems.extend(exc.problems)
        report(problems)
        return EXIT_BAD_INPUT
    except (FormatError, ValueError) as exc:
        click.echo(f"error: {exc}", err=True)
        return EXIT_BAD_INPUT

    if not check:
        # After rendering, which made each tool's JSON (for _spec.json): the model
        # generator was not kept waiting for this.
        with timing.phase("context cost"):
            count, size = context_cost(manifest)
        click.echo(f"tools/list: {count} tools, {size} bytes (about {size // 4} tokens)", err=True)
    if show_diff:
        sys.stdout.write(diff(the_plan))
    if check or show_diff:
        drift = the_plan.drift
        if drift:
            click.echo(f"{root}: out of date with {source} ({len(drift)} file(s)):", err=True)
            for relative in drift:
                click.echo(f"  {relative}", err=True)
            click.echo(f"run: mcpgen build {source} -o {root}", err=True)
            return EXIT_DRIFT
        click.echo(f"{root}: up to date with {source}", err=True)
        return EXIT_OK

    with timing.phase("signature changes"):
        # A changed input or output schema changes _spec.json and a models module; a new
        # description alone does not need the old spec read (9 MB for GitHub).
        package = f"src/{manifest.server.package}/"
        models_changed = any(p.startswith(package + "models/") for p in the_plan.changed)
        spec_changed = package + "_spec.json" in the_plan.changed
        changes = signature_changes(root, manifest) if spec_changed and models_changed else []
    try:
        with timing.phase("write"):
            apply(the_plan)
    except OSError as exc:
        click.echo(f"error: cannot write {root}: {exc}", err=True)
        return EXIT_BAD_INPUT
    _summary(root, the_plan.created, the_plan.changed, the_plan.unchanged, the_plan.stubs_added)
    for relative in the_plan.orphaned:
        click.echo(f"  orphaned (kept, no longer in the manifest): {relative}", err=True)
    for line in changes:
        click.echo(f"  changed: {line}", err=True)
    if loaded.problems.warnings:
        click.echo(f"  {len(loaded.problems.warnings)} warning(s)", err=True)
    return EXIT_OK


def _summary(
    root: Path, created: list[str], changed: list[str], unchanged: list[str], stubs: list[str]
) -> None:
    click.echo(
        f"built {root}: {len(created)} written, {len(changed)} updated, "
        f"{len(unchanged)} unchanged, {len(stubs)} handler stub(s) added",
        err=True,
    )
    for relative in stubs:
        click.echo(f"  new stub: {relative}", err=True)


_TOOLS_LINE = '\n"tools": [\n'  # where the compact _spec.json lists the tools, one per line


def _old_tools(root: Path, manifest: Manifest) -> dict[str, Any]:
    """The last build's tool definitions (from its ``_spec.json``) that differ from the new
    ones, by name. A big API's compact ``_spec.json`` (megabytes) has one tool per line:
    only the lines that are not a new tool's JSON exactly are parsed."""
    path = root / "src" / manifest.server.package / "_spec.json"
    try:
        text = path.read_text("utf-8")
        start = text.find(_TOOLS_LINE)
        if start < 0:  # the indented layout of a small API
            entries = json.loads(text).get("tools", [])
        else:
            start += len(_TOOLS_LINE)
            lines = text[start : text.index("\n]", start)].split(",\n")
            package = manifest.server.package
            now = {json.dumps(tool_entry(t, package), ensure_ascii=False) for t in manifest.tools}
            entries = [json.loads(line) for line in lines if line not in now]
        return {e["definition"]["name"]: e["definition"] for e in entries}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def signature_changes(root: Path, manifest: Manifest) -> list[str]:
    """What changed in the contract of an existing handler since the last build."""
    old = _old_tools(root, manifest)
    lines = []
    for tool in manifest.tools:
        before = old.get(tool.name)
        if before is None:
            continue
        handler = f"src/{manifest.server.package}/handlers/tools/{tool.ident}.py"
        for key, label in (("inputSchema", "input"), ("outputSchema", "output")):
            now = tool.definition.get(key)
            then = before.get(key)
            if now == then:
                continue
            detail = _property_delta(then, now)
            lines.append(f"tool {tool.name!r} {label} schema changed{detail}; check {handler}")
    return lines


def _property_delta(before: Any, after: Any) -> str:
    if not isinstance(before, dict) or not isinstance(after, dict):
        return " (added)" if before is None else (" (removed)" if after is None else "")
    old = set(before.get("properties", {}))
    new = set(after.get("properties", {}))
    parts = []
    if new - old:
        parts.append("added " + ", ".join(sorted(new - old)))
    if old - new:
        parts.append("removed " + ", ".join(sorted(old - new)))
    changed = sorted(k for k in old & new if before["properties"][k] != after["properties"][k])
    if changed:
        parts.append("changed " + ", ".join(changed))
    if before.get("required") != after.get("required"):
        parts.append("required fields changed")
    return f" ({'; '.join(parts)})" if parts else ""
