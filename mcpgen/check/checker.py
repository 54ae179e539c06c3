"""What the semantic checks of one document share: its state, located problems, unique names."""

from __future__ import annotations

import base64
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mcpgen import identifiers as names
from mcpgen.check import ref_depth
from mcpgen.check.structure import checkable, entries
from mcpgen.load import Document, JsonPath
from mcpgen.model.names import Assigned, assign
from mcpgen.problems import Level, Problem, Problems, clip


class Checker:
    """The semantic checks of one document (``auth``, ``prompts``, ``names``: functions of it)."""

    def __init__(self, doc: Document, broken: set[JsonPath] | None = None) -> None:
        self.doc = doc
        self.broken = broken or set()
        self.data: dict[str, Any] = checkable(doc.data, self.broken)
        # names are checked on every entry that has one, malformed or not
        self.named: dict[str, Any] = checkable(doc.data, set())
        self.assigned = assign(self.named)  # the Python names the model will have
        self.problems = Problems()
        self.schemas: list[tuple[JsonPath, Any, ref_depth.Resolve]] = []  # (ref_cycles)
        self.settled: ref_depth.Settled = {}  # (ref_cycles: the $defs' references)

    def error(
        self, path: JsonPath, message: str, key: bool = False, level: Level = Level.ERROR
    ) -> None:
        self.problems.add(Problem(level, self.doc.locate(path, key), self.doc.field(path), message))

    def warn(self, path: JsonPath, message: str) -> None:
        self.error(path, message, level=Level.WARNING)

    def check_base64(self, where: JsonPath, value: str) -> None:
        try:
            base64.b64decode(value, validate=True)
        except ValueError:  # binascii.Error is one
            self.error(where, "not valid base64")

    def check_file(self, where: JsonPath, relative: str) -> None:
        if problem := static_file_problem(self.doc.base_dir, relative):
            self.error(where, problem)

    def distinct_kwargs(self, given: list[str], where: JsonPath, what: str) -> None:
        seen: dict[str, str] = {}
        for name in given:
            python = names.kwarg(name)
            other = seen.setdefault(python, name)
            if other != name:
                self.error(
                    where,
                    f"{what} {other!r} and {name!r} both become the Python argument {python!r}; rename one",
                )

    def unique(self, items: Iterable[dict[str, Any]], key: str, where: JsonPath, what: str) -> None:
        first: dict[str, int] = {}
        for index, item in self.renamed_last(where, items):
            value = item.get(key)
            if not isinstance(value, str):  # absent, or malformed (reported as such)
                continue
            if value in first:
                self.error(
                    (*where, index, key),
                    f"duplicate {what} {value!r} (first at {self.doc.field((*where, first[value]))})"
                    + self.rename_hint((*where, index), item),
                )
            first.setdefault(value, index)

    def renamed(self, path: JsonPath) -> bool:
        """Whether ``openapi.overrides`` named this imported entry (its name is located there)."""
        overlay = self.doc.overlays.get((*path, "name"))
        return overlay is not None and overlay.field is not None

    def renamed_last(
        self, where: JsonPath, items: Iterable[dict[str, Any]]
    ) -> list[tuple[int, dict[str, Any]]]:
        """The entries, those renamed by an override last: a clash is blamed on the rename."""
        return sorted(entries(list(items)), key=lambda e: self.renamed((*where, e[0])))

    def rename_hint(self, path: JsonPath, item: dict[str, Any]) -> str:
        """How to rename an entry imported from an OpenAPI document."""
        if self.doc.overlay(path) is None or self.renamed(path):
            return ""  # written in the manifest, or renamed there (the problem is at the rename)
        return f" (the imported one with openapi.overrides.{item.get('name')}.name)"

    def unique_names(self, section: str, what: str, assigned: dict[int, Assigned]) -> None:
        """The entries' names are unique, and so are the Python names they become."""
        self.unique(self.named[section], "name", (section,), f"{what} name")
        first: dict[str, str] = {}
        for index, item in self.renamed_last((section,), self.named[section]):
            name = item.get("name")
            if index not in assigned or not isinstance(name, str):
                continue
            ident = assigned[index].ident
            other = first.setdefault(ident, name)
            if other != name:
                self.error(
                    (section, index, "name"),
                    f"{what} {name!r} and {other!r} both become the Python name {ident!r}; "
                    "rename one" + self.rename_hint((section, index), item),
                )


def static_file_problem(base_dir: Path, relative: str) -> str | None:
    """Why ``relative`` cannot serve as a static file, or None when it can."""
    if "\0" in relative:
        return "file path contains a NUL character"
    try:
        if Path(relative).is_absolute():
            return "file paths are relative to the manifest's folder, not absolute"
        root = base_dir.resolve()
        target = (base_dir / relative).resolve()
        if root != target and root not in target.parents:
            return f"{clip(relative)} points outside the manifest's folder"
        if not target.is_file():
            return f"file {clip(relative)} not found next to the manifest"
    except (OSError, ValueError, RuntimeError) as exc:  # too long, a symlink loop, ...
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return f"cannot use file {clip(relative)}: {reason}"
    return None
