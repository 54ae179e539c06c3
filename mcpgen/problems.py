"""Problems as data, each with a level and a location: stages collect them instead of raising
on the first, so a user sees everything wrong with a manifest at once."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import click


def printable(text: str, keep: str = "") -> str:
    """``text`` with control characters (and lone surrogates) escaped, but those in ``keep``:
    a problem is one line, and text from the input must not drive the terminal."""
    if text.isprintable() or (keep and text.translate(dict.fromkeys(map(ord, keep))).isprintable()):
        return text
    return "".join(
        c if c.isprintable() or c in keep else c.encode("unicode_escape").decode("ascii")
        for c in text
    )


def cut(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, ``...`` marking the cut."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def clip(text: str, limit: int = 60) -> str:
    """``text`` as a Python string literal cut to ``limit`` characters (quoted input)."""
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 4] + "...'"


class Level(enum.Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, order=True)
class Location:
    """A position in an input file. ``line`` and ``column`` are 1-based; 0 means unknown."""

    file: str
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}" if self.line else self.file


@dataclass(frozen=True)
class Problem:
    level: Level
    location: Location
    field: str
    message: str
    path: tuple[str | int, ...] | None = dataclasses.field(default=None, compare=False)

    def to_data(self) -> dict[str, object]:
        """The problem as JSON (``mcpgen validate --format json``)."""
        where = dataclasses.asdict(self.location)  # file, line, column
        return {"level": self.level.value, **where, "field": self.field, "message": self.message}

    def format(self, color: bool = False) -> str:
        where = printable(str(self.location))
        label = self.level.value
        field_part = f"{printable(self.field)}: " if self.field else ""
        if color:
            fg = "red" if self.level is Level.ERROR else "yellow"
            where = click.style(where, bold=True)
            label = click.style(label, fg=fg, bold=True)
        return f"{where}: {label}: {field_part}{printable(self.message)}"


@dataclass
class Problems:
    """An ordered, de-duplicated collection of problems."""

    items: list[Problem] = field(default_factory=list)
    # what ``items`` holds, looked up in constant time (10,000 warnings took 11 s of ``in``)
    _seen: set[Problem] = field(default_factory=set, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.items = list(dict.fromkeys(self.items))
        self._seen = set(self.items)

    def add(self, problem: Problem) -> None:
        if problem not in self._seen:
            self._seen.add(problem)
            self.items.append(problem)

    def extend(self, problems: Iterable[Problem]) -> None:
        for problem in problems:
            self.add(problem)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.items if p.level is Level.ERROR]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.items if p.level is Level.WARNING]

    def sorted(self) -> list[Problem]:
        return sorted(self.items, key=lambda p: (p.location, p.field, p.message))

    def has_errors(self, strict: bool = False) -> bool:
        return bool(self.errors) or (strict and bool(self.warnings))


class InputError(Exception):
    """Raised when input cannot be used at all; carries the located problems."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(p.format() for p in self.problems))


def fail(file: str, message: str, line: int = 0, column: int = 0, field: str = "") -> InputError:
    """Build an InputError holding one located error."""
    return InputError([Problem(Level.ERROR, Location(file, line, column), field, message)])


def first_problem(problems: Problems, shown: str) -> str:
    """The first error of ``problems`` (else warning) as one line for a command to print."""
    errors = problems.sorted()
    errors = [p for p in errors if p.level.value == "error"] or errors
    if not errors:
        return f"{shown}: cannot be loaded"
    more = f" (and {len(errors) - 1} more; run mcpgen validate)" if len(errors) > 1 else ""
    first = errors[0]  # the command says "error: " once, so not the problem's own level
    field = f"{printable(first.field)}: " if first.field else ""
    return f"{printable(str(first.location))}: {field}{printable(first.message)}{more}"
