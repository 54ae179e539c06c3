"""Parsed input with the position of every value, and how problems name a place."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcpgen.load.json_text import JsonLocator
from mcpgen.load.positions import JsonPath, PathPart, Positions, dotted
from mcpgen.problems import Location

if TYPE_CHECKING:
    from mcpgen.openapi.result import Merged


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
    _locator: JsonLocator | None = None  # made when first needed
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
            self._locator = JsonLocator(self.text, self.file)
        return self._locator.locate(path, key)


def display_path(path: Path) -> str:
    """A path as the user should see it: relative to the working directory when inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError, RuntimeError):  # RuntimeError: a symlink loop
        return str(path)
