"""Parsed input with the position of every value, and how problems name a place."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcpgen.problems import Location, fail, printable

if TYPE_CHECKING:
    from mcpgen.openapi.result import Merged

PathPart = str | int
JsonPath = tuple[PathPart, ...]


def dotted(path: Sequence[PathPart]) -> str:
    """``tools[0].input.properties.x``: how a field is named in messages."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + printable(part)
    return out


def _short_field(path: Sequence[PathPart]) -> str:
    """A dotted field name cut short: deep paths would fill the terminal."""
    return dotted(path) if len(path) <= 6 else dotted(path[:6]) + "..."


@dataclass
class Positions:
    """Where each value (and each mapping key) of a document stood in its file."""

    file: str
    values: dict[JsonPath, tuple[int, int]] = field(default_factory=dict)
    keys: dict[JsonPath, tuple[int, int]] = field(default_factory=dict)

    def add_key(self, path: JsonPath, line: int, col: int) -> None:
        """Record where the key ending ``path`` stands; a mapping's second one is an error."""
        first = self.keys.get(path)
        if first is not None:
            message = f"duplicate key {path[-1]!r} (first at line {first[0]}, column {first[1]})"
            raise fail(self.file, message, line, col, dotted(path))
        self.keys[path] = (line, col)

    def locate(self, path: Sequence[PathPart], key: bool = False) -> Location:
        """The location of ``path``, or of its nearest ancestor that has one."""
        table = self.keys if key else self.values
        for end in range(len(path), -1, -1):
            at = tuple(path[:end])
            if found := table.get(at) or self.values.get(at):
                return Location(self.file, *found)
        return Location(self.file, 1, 1)


@dataclass(frozen=True)
class Overlay:
    """Where a part of a merged document came from: an entry imported from an OpenAPI
    document is located at its operation in that document (``pointer`` names it). The name
    an ``openapi.overrides`` entry gave it is that entry's (``field``: how problems name it)."""

    locate: Callable[[], Location]
    pointer: str
    field: str | None = None


@dataclass
class Document:
    """Parsed input: plain JSON-compatible data plus the position of each value. ``overlays``:
    where an entry merged in from another file (an imported tool) was written."""

    file: str
    base_dir: Path
    data: Any
    text: str
    # YAML: every position, from the composer. JSON (parsed fast, without positions):
    # None, and a path is found on demand in the text (``JsonLocator``).
    positions: Positions | None = None
    _locator: Any = None  # a JsonLocator, made when first needed
    overlays: dict[JsonPath, Overlay] = field(default_factory=dict)
    # what an OpenAPI import adds beside the data (``openapi.to_manifest``)
    imported: Merged | None = None

    def overlay(self, path: Sequence[PathPart]) -> Overlay | None:
        for end in range(len(path), 0, -1) if self.overlays else ():
            if (found := self.overlays.get(tuple(path[:end]))) is not None:
                return found
        return None

    def field(self, path: Sequence[PathPart]) -> str:
        """How a problem names ``path``: its dotted name, and the JSON pointer of the
        operation it was imported from."""
        found = self.overlay(path)
        if found is not None and found.field is not None:
            return found.field
        return dotted(path) if found is None else f"{found.pointer} ({dotted(path)})"

    def locate(self, path: Sequence[PathPart], key: bool = False) -> Location:
        found = self.overlay(path)
        if found is not None:
            return found.locate()
        if self.positions is not None:
            return self.positions.locate(path, key)
        if self._locator is None:  # JSON: find this one place, not every position
            from mcpgen.load.json_text import JsonLocator

            self._locator = JsonLocator(self.text, self.file)
        found_at: Location = self._locator.locate(path, key)
        return found_at


def display_path(path: Path) -> str:
    """A path as the user should see it: relative to the working directory when inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError, RuntimeError):  # RuntimeError: a symlink loop
        return str(path)
