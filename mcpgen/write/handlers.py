"""The user's files under ``src/<package>/handlers``: which ones the manifest names, which
are helpers those import, and which are orphans (kept, and reported).

A file is *named* when the build would create it (a handler stub) or the server would use
it if present (the override of an imported operation, ``handlers/tools/<tool>.py``). A
*helper* is a module that no manifest item names but that a named file imports, directly
or through another helper (``from ._common import client``). Anything else is an orphan:
what a tool, resource or prompt that left the manifest used to run. Imports are read with
``ast``; nothing is imported or run.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from importlib.util import resolve_name
from pathlib import Path, PurePosixPath


def orphans(root: Path, named: Iterable[str], gone: Iterable[str] = ()) -> list[str]:
    """The orphans of every package under ``src/`` (one no longer built, the server renamed,
    keeps its handlers), ``__init__.py`` files aside; ``gone``: files about to be removed."""
    present = {
        path.relative_to(root).as_posix()
        for path in root.glob("src/*/handlers/**/*.py")
        if "__pycache__" not in path.parts and path.is_file()
    } - set(gone)
    live: set[str] = set()
    todo = [f for f in named if f in present]
    while todo:
        relative = todo.pop()
        if relative in live:
            continue
        live.add(relative)
        parts = PurePosixPath(relative).with_suffix("").parts[1:]  # (under src/)
        module = parts[:-1] if parts[-1] == "__init__" else parts
        for name in imported_modules(root / relative, module):
            base = "/".join(("src", *name))
            todo += [f for f in (f"{base}.py", f"{base}/__init__.py") if f in present]
    return [f for f in sorted(present) if f not in live and PurePosixPath(f).name != "__init__.py"]


def imported_modules(path: Path, module: tuple[str, ...]) -> set[tuple[str, ...]]:
    """Dotted names (as tuples) that the file of ``module`` may import: every ``import``
    and ``from ... import`` target, relative ones resolved, and ``from m import n`` also as
    ``m.n`` (``n`` may be a submodule). An unreadable or broken file imports nothing."""
    try:
        tree = ast.parse(path.read_text("utf-8"), str(path))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return set()
    package = module if path.name == "__init__.py" else module[:-1]
    found: set[tuple[str, ...]] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(tuple(alias.name.split(".")) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            relative = "." * node.level + (node.module or "")
            try:
                target = tuple(resolve_name(relative, ".".join(package)).split("."))
            except (ImportError, ValueError):  # beyond the top-level package
                continue
            found.add(target)
            found.update((*target, alias.name) for alias in node.names if alias.name != "*")
    # importing a.b.c runs a/__init__ and a/b/__init__ too
    return {name[:n] for name in found for n in range(1, len(name) + 1)}
