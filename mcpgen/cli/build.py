"""``mcpgen build``: load -> validate -> model -> render -> compare/write, with a summary."""

from __future__ import annotations

import functools
import gc
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import click

from mcpgen import cache
from mcpgen import identifiers as names
from mcpgen import timings as timing
from mcpgen.cli import EXIT_BAD_INPUT, EXIT_DRIFT, EXIT_OK, counted, report
from mcpgen.cli.starter import default_output
from mcpgen.format import Engine, FormatError
from mcpgen.load.document import Document
from mcpgen.model.build import tools_list_bytes
from mcpgen.model.types import Manifest
from mcpgen.pipeline import handler_stub, load_manifest, render_files, too_deep
from mcpgen.problems import InputError, Level, Problem, Problems
from mcpgen.render import LOCK_FILE, Output
from mcpgen.render.lock import estimate_tokens, share_equal
from mcpgen.write import apply, diff, foreign, plan, unsafe_root
from mcpgen.write.rename import RenameError, plan_moves
from mcpgen.write.rename import parse as parse_renames


def context_cost(manifest: Manifest) -> tuple[int, int]:
    """(tools listed, bytes of the tools/list result) a model's context pays for."""
    tools = manifest.advertised_tools
    return sum(1 for t in tools if t.enabled), tools_list_bytes(tools)


def source_from(root: Path, source: Path) -> str | None:
    """Where ``source`` is seen from the output folder ``root`` (POSIX, e.g. ``../mcpgen.yaml``)."""
    try:
        return Path(os.path.relpath(os.path.abspath(source), os.path.abspath(root))).as_posix()
    except ValueError:  # another drive
        return None


def _q(path: Path | str) -> str:
    """``path`` as a hint shows it: quoted for a shell (a folder with a space, pasted)."""
    return shlex.quote(str(path))


def rebuild_hint(source: Path | str, root: Path | str) -> str:
    """The command that builds ``source`` into ``root`` again, to paste into a shell."""
    return f"mcpgen build {_q(source)} -o {_q(root)}"


def _say(message: str) -> None:
    click.echo(message, err=True)


def _fail(message: str) -> int:
    _say(message)
    return EXIT_BAD_INPUT


def run_build(source: Path, output: Path | None, *, timings: bool = False, **options: Any) -> int:
    """``mcpgen build`` (``options``: those of ``_build``)."""
    timing.reset()
    try:
        code = _build(source, output, **options)
        with timing.phase("cache upkeep"):
            cache.prune()
        return code
    finally:
        gc.unfreeze()  # what the load froze is the collector's again (a caller lives on)
        if timings:
            click.echo(timing.report(), err=True)


def _build(
    source: Path,
    output: Path | None,
    *,
    check: bool,
    show_diff: bool,
    strict: bool,
    max_context_bytes: int | None = None,
    name: str | None = None,
    renames: tuple[str, ...] = (),
    formatter: Engine = "ruff",
) -> int:
    try:
        wanted = parse_renames(renames)
    except RenameError as exc:
        return _fail(f"error: {exc}")
    if wanted and (check or show_diff):
        return _fail("error: --rename moves files: use it without --check and --diff")
    with timing.phase("load + validate"):
        # millions of objects that live until the build ends: kept out of the collector's passes
        collecting = gc.isenabled()
        gc.disable()
        try:
            loaded = load_manifest(source, strict, name)
        finally:
            gc.freeze()
            if collecting:
                gc.enable()
    if loaded.manifest is None:
        report(loaded.problems, strict)
        return EXIT_BAD_INPUT
    manifest, document = loaded.manifest, loaded.document
    if name is not None and document and (document.imported is None or "openapi" in document.data):
        return _fail(
            f"{source}: --name names a server built from an OpenAPI document; a manifest "
            "names its own (server.name)"
        )
    report(loaded.problems)
    if manifest.mode_reason and not check:
        _say(manifest.mode_reason)
    if max_context_bytes is not None:  # a budget is checked before any work
        with timing.phase("context cost"):
            size = context_cost(manifest)[1]
        if size > max_context_bytes:
            return _fail(
                f"{source}: tools/list would cost {size} bytes, over --max-context-bytes "
                f"{max_context_bytes}; filter operations (openapi.include/exclude) or use "
                "openapi.mode: search or code"
            )
    root = output or default_output(source, manifest.server.name)
    for folder in (root, *root.parents):
        if folder.is_symlink() and not folder.exists():
            return _fail(f"{folder}: a link to nothing (dangling, or a loop) (-o {_q(root)})")
        if folder.exists() and not folder.is_dir():
            return _fail(f"{folder}: exists and is not a folder (-o {_q(root)})")
    if not (check or show_diff) and (unsafe := unsafe_root(root, source)):
        return _fail(
            f"{root}: error: -o is {unsafe}: a build writes pyproject.toml, src/, tests/... "
            f"into it; build into a new or empty folder, e.g. -o {_q(root / manifest.server.name)}"
        )
    if ".." in root.parts:  # (``-o empty/missing/..`` is ``empty``, where the kernel lands)
        real = os.path.realpath(root)
        root = Path(real if root.is_absolute() else os.path.relpath(real))
    try:  # every rename is checked before anything is rendered or written
        stub = functools.partial(handler_stub, manifest)
        moves = plan_moves(root, manifest, wanted, stub) if wanted else []
    except RenameError as exc:
        return _fail(f"error: {exc}")
    source_path = source_from(root, source)
    if manifest.ci.github and (source_path or "").startswith("../"):
        _say(
            f"warning: ci.github: the workflow expects {root} to be the repository root, "
            f"but the manifest ({source_path}) is outside it; build with -o . from the "
            "repository root"
        )
    try:
        rendered = render_files(manifest, source_path, formatter)
        with timing.phase("compare"):
            the_plan = plan(root, rendered, moves)
    except InputError as exc:
        report(Problems(exc.problems))
        return EXIT_BAD_INPUT
    except RecursionError:  # a stage after load ran out of stack: where the chain starts
        deep = too_deep(document)
        if not deep.has_errors():
            raise
        report(deep)
        return EXIT_BAD_INPUT
    except (FormatError, ValueError) as exc:
        return _fail(f"error: {exc}")

    theirs = [] if check or show_diff else foreign(the_plan)
    for relative in theirs:
        _say(
            f"{root / relative}: error: exists and was not written by mcpgen; a build "
            "replaces only its own files: move it away or build into another folder"
        )
    if theirs:
        return EXIT_BAD_INPUT
    if not check:
        with timing.phase("context cost"):
            count, size = context_cost(manifest)
        _say(
            f"tools/list: {counted(count, 'tool')}, {size} bytes (about {estimate_tokens(size)} tokens, "
            "estimated)"
        )
    if show_diff:
        sys.stdout.write(diff(the_plan))
    if check or show_diff:
        if drift := the_plan.drift:
            _say(f"{root}: out of date with {source} ({len(drift)} file(s)):")
            for relative in drift:
                _say(f"  {relative}")
            _say(f"run: {rebuild_hint(source, root)}")
            return EXIT_DRIFT
        _say(f"{root}: up to date with {source}")
        return EXIT_OK

    with timing.phase("changes"):
        # against the last build's surface lock: changes for clients, and for the handlers
        lock = previous_lock(root) if LOCK_FILE in the_plan.changed else None
        package = f"src/{manifest.server.package}/"
        models_changed = any(p.startswith(package + "models/") for p in the_plan.changed)
        changes = signature_changes(root, manifest, lock[0]) if lock and models_changed else []
        if document is not None:  # every build, while a kept handler does not fit
            report(handler_misfits(root, manifest, document))
        surface_changes, renamed = surface_summary(root, lock, rendered) if lock else ([], [])
    try:
        with timing.phase("write"):
            leftovers = apply(the_plan)
    except OSError as exc:
        return _fail(f"error: cannot write {root}: {exc}")
    if leftovers:  # (its files are all generated again; handlers were never replaced)
        _say(
            f"{root}: an earlier build was interrupted while writing it: removed "
            f"{counted(leftovers, 'staged leftover')}; this build rewrote what it left "
            "half done"
        )
    stubs = [p for p in the_plan.stubs_added if not p.endswith("__init__.py")]  # nothing to write
    _say(
        f"built {root}: {len(the_plan.created)} written, {len(the_plan.changed)} updated, "
        f"{len(the_plan.unchanged)} unchanged, {len(the_plan.obsolete)} removed, "
        f"{len(stubs)} handler stub(s) added"
    )
    lines = [f"new stub: {p}" for p in stubs]
    lines += [f"renamed: {m.old} -> {m.new}" for m in the_plan.moves]
    lines += [
        f"removed (no longer generated): {p}" for p in the_plan.obsolete if "/_runtime/" not in p
    ]
    lines += [f"orphaned (kept, no longer in the manifest): {p}" for p in the_plan.orphaned]
    for kind, before, after in renamed:  # a forgotten --rename: the handler was left behind
        stem = "/" + names.handler_path(f"{kind}s", names.ident(before))
        if any(p.endswith(stem) for p in the_plan.orphaned):
            lines.append(
                f"hint: {kind} {before} was renamed to {after}; move its handler to the new "
                f"stub with: {rebuild_hint(source, root)} --rename {_q(f'{before}={after}')}"
            )
    # indented lines say where a handler no longer fits its models
    lines += [line if line.startswith(" ") else f"changed: {line}" for line in changes]
    lines += surface_changes
    if loaded.problems.warnings:
        lines.append(f"{len(loaded.problems.warnings)} warning(s)")
    for line in lines:
        _say(f"  {line}")
    if LOCK_FILE in the_plan.created:  # a new project: where its own README starts
        handlers = f"src/{manifest.server.package}/handlers/"
        todo = f"write the handlers in {handlers}, then " if stubs else ""
        _say(f"next: {todo}cd {_q(root)} && pip install -e '.[test]' && pytest")
    return EXIT_OK


def previous_lock(root: Path) -> tuple[dict[str, Any], str] | None:
    """The last build's ``mcp-surface.json`` (and its text), if this version can compare it."""
    from mcpgen.surface.sources import SourceError, check

    try:
        before = json.loads(text := (root / LOCK_FILE).read_text("utf-8"))
        if not isinstance(before, dict):
            return None
        check(before, LOCK_FILE)
    except (OSError, ValueError, SourceError):
        return None
    return before, text


def surface_summary(
    root: Path, lock: tuple[dict[str, Any], str], rendered: Output
) -> tuple[list[str], list[tuple[str, str, str]]]:
    """What the new surface lock changes for clients against ``before`` (counts, the first
    breaking changes), and the items renamed, as (kind, old name, new name)."""
    from mcpgen.surface.changes import BREAKING
    from mcpgen.surface.diff import diff, summary

    before, text = lock  # (the text it was read from: never read again)
    after = rendered.surface or json.loads(rendered.generated[LOCK_FILE])
    share_equal(before, after, text, rendered.generated[LOCK_FILE])
    changes = diff(before, after)
    counts = summary(changes, before, after)
    in_git = any((folder / ".git").exists() for folder in (root, *root.resolve().parents))
    hint = f" (mcpgen diff git:HEAD:{LOCK_FILE} {LOCK_FILE}, in {_q(root)})" if in_git else ""
    lines = [
        f"surface: {counts['breaking']} breaking, {counts['compatible']} compatible, "
        f"{counts['docs']} docs change(s) for clients; tools/list {counts['bytesBefore']} -> "
        f"{counts['bytesAfter']} bytes{hint}"
    ]
    breaking = [c for c in changes if c.level == BREAKING]
    lines += [f"  breaking: {c.item}{c.path}: {c.change}" for c in breaking[:SHOWN]]
    if len(breaking) > SHOWN:
        lines.append(f"  ... and {len(breaking) - SHOWN} more breaking")
    renamed = [
        (c.item.partition(":")[0], c.item.partition(":")[2], c.change[len(RENAMED) :])
        for c in breaking
        if c.change.startswith(RENAMED) and not c.path
    ]
    return lines, renamed


RENAMED = "renamed to "
SHOWN = 5  # breaking changes a build's summary lists


def signature_changes(root: Path, manifest: Manifest, lock: dict[str, Any]) -> list[str]:
    """What changed in the contract of an existing handler since the ``lock``, and where it
    uses a field that is gone."""
    from mcpgen.health.code import parse, stale_fields

    old = {e["name"]: e for key in ("tools", "operations") for e in lock.get(key, [])}
    lines = []
    for tool in manifest.tools:
        if (before := old.get(tool.name)) is None:
            continue
        handler = f"src/{manifest.server.package}/" + names.handler_path("tools", tool.ident)
        has_handler = (root / handler).is_file()  # an imported operation may have none
        removed: dict[str, set[str]] = {}  # properties gone from the input, the output
        required: set[str] = set()  # newly required output properties
        for key, label in (("inputSchema", "input"), ("outputSchema", "output")):
            now, then = tool.definition.get(key), before.get(key)
            if now == then:
                continue
            removed[key], newly_required, detail = _schema_delta(then, now)
            if key == "outputSchema":
                required = newly_required
            where = f"; {handler} may no longer type-check: run mcpgen check {_q(root)}"
            lines.append(
                f"tool {tool.name!r} {label} schema changed{detail}{where if has_handler else ''}"
            )
        tree = parse(root / handler) if removed and has_handler else None
        if tree is not None and not isinstance(tree, str):
            found = stale_fields(tree, tool, removed, required)
            lines += [f"  {handler}:{line}: {message}" for line, message in found]
    return lines


def handler_misfits(root: Path, manifest: Manifest, document: Document) -> Problems:
    """A warning at each ``context:`` the kept handler no longer fits (a call fails)."""
    from mcpgen.health.code import misfits

    found = Problems()
    for kind, index, handler, what in misfits(root, manifest):
        at: list[str | int] = [kind, index, "context"]
        location = document.locate(at if "context" in document.data[kind][index] else at[:2])
        found.add(Problem(Level.WARNING, location, document.field(at), f"{handler}: {what}"))
    return found


def _schema_delta(before: Any, after: Any) -> tuple[set[str], set[str], str]:
    """(properties removed, newly required, the change in words) at the top of a schema."""
    old_schema = before if isinstance(before, dict) else {}
    new_schema = after if isinstance(after, dict) else {}
    old = set(old_schema.get("properties", {}))
    new = set(new_schema.get("properties", {}))
    required = set(new_schema.get("required", [])) - set(old_schema.get("required", []))
    if not isinstance(before, dict) or not isinstance(after, dict):
        detail = " (added)" if before is None else (" (removed)" if after is None else "")
        return old - new, required, detail
    changed = {k for k in old & new if before["properties"][k] != after["properties"][k]}
    parts = [
        f"{verb} {', '.join(sorted(keys))}"
        for verb, keys in (("added", new - old), ("removed", old - new), ("changed", changed))
        if keys
    ]
    if before.get("required") != after.get("required"):
        parts.append("required fields changed")
    return old - new, required, f" ({'; '.join(parts)})" if parts else ""
