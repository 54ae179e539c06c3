"""Handler health: ``mcpgen check DIR``, what ``build --check`` cannot see (it compares
generated files; the user's handlers are not generated). :func:`check` runs four checks:

- ``drift``: the generated files differ from what the manifest renders (as ``build
  --check``; needs the manifest: given, or recorded in ``pyproject.toml``);
- ``stubs``: handlers that still only raise ``NotImplementedError`` (or do not parse, or
  lack their function);
- ``orphans``: handler files no manifest item names and no handler imports;
- ``types``: ``mypy --strict`` on the handlers with the project's configuration.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

CHECKS = ("drift", "stubs", "orphans", "types")


@dataclass(frozen=True)
class Problem:
    check: str  # one of CHECKS
    path: str  # relative to the project ("" for the project itself)
    line: int  # 0: the file as a whole
    message: str

    def to_data(self) -> dict[str, object]:
        return {"check": self.check, "path": self.path, "line": self.line, "message": self.message}


@dataclass
class Report:
    root: Path
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
    from mcpgen.write.handlers import orphans

    from . import project, typecheck

    found = project.open_project(root, manifest)
    report = Report(root, found.manifest.as_posix() if found.manifest else None)
    skipped = {name: f"--skip {name}" for name in skip}
    if found.manifest is None or "drift" in skip:
        skipped.setdefault("drift", found.manifest_note)
        project.named_from_spec(found)
    else:
        project.check_drift(found)
        command = f"mcpgen build {found.manifest} -o {root}"
        message = f"out of date with {found.manifest} (run: {command})"
        report.problems += [Problem("drift", p, 0, message) for p in found.drift]
    if "stubs" not in skip:
        report.problems += _stubs(root, found.named)
    if "orphans" not in skip:
        message = "no manifest item uses it and no handler imports it (kept)"
        named = orphans(root, found.package_dir, found.named)
        report.problems += [Problem("orphans", p, 0, message) for p in named]
    if "types" not in skip:
        problems, skipped["types"] = typecheck.run(root, found.package)
        report.problems += problems
    report.skipped = {name: skipped[name] for name in CHECKS if skipped.get(name)}
    return report


def _stubs(root: Path, named: set[str]) -> list[Problem]:
    from .code import ENTRY_POINTS, entry_point, parse, unimplemented

    problems = []
    for relative in sorted(named):
        parts = PurePosixPath(relative).parts
        if len(parts) != 5 or parts[-1] == "__init__.py" or not (root / relative).is_file():
            continue  # src/<pkg>/handlers/<kind>/<name>.py only
        function = ENTRY_POINTS.get(parts[3])
        if function is None:
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
