"""A value's place in a document: its path, its name in messages, where a parser found it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from mcpgen.problems import Location, fail, printable

PathPart = str | int
JsonPath = tuple[PathPart, ...]


def dotted(path: Sequence[PathPart]) -> str:
    """``tools[0].input.properties.x``: how a field is named in messages."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + printable(part)
    return out


def short_field(path: Sequence[PathPart]) -> str:
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
