"""A generated project as ``mcpgen check`` sees it: its package, the manifest it records,
the drift of its generated files, and the handler files it names.

The manifest is the one given, else the one the project records: ``pyproject.toml``,
``[tool.mcpgen] source``, relative to the project (written by every build).
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpgen import identifiers as names


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
    """What ``mcpgen build MANIFEST -o ROOT --check`` reports, and the handler files the
    build names."""
    from mcpgen.cli.build import source_from
    from mcpgen.format import FormatError
    from mcpgen.pipeline import load_manifest, render_files
    from mcpgen.problems import InputError
    from mcpgen.surface.sources import _first_problem
    from mcpgen.write import plan

    assert project.manifest is not None
    server = project.spec.get("server", {})
    name = server.get("name") if isinstance(server, dict) else None
    loaded = load_manifest(project.manifest, False, name if isinstance(name, str) else None)
    if loaded.manifest is None:
        raise BadInput(_first_problem(loaded.problems, str(project.manifest)))
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
    for path in list(named):  # each kind's package
        parts = path.split("/")
        if len(parts) > 4:
            named.add("/".join(parts[:4]) + "/__init__.py")
    return named
