"""The problems a build collects: ordered, each once, in linear work."""

from __future__ import annotations

import pytest

from mcpgen.problems import Level, Location, Problem, Problems


def problem(line: int) -> Problem:
    return Problem(Level.WARNING, Location("api.yaml", line, 1), f"paths./x{line}", "odd")


def test_problems_are_kept_once_in_order() -> None:
    problems = Problems([problem(2), problem(1), problem(2)])
    problems.extend([problem(3), problem(1), problem(3)])
    assert problems.items == [problem(2), problem(1), problem(3)]


def test_adding_many_problems_compares_few(monkeypatch: pytest.MonkeyPatch) -> None:
    """A huge API's thousands of warnings: each added without comparing it with every one
    before it (10,000 took 11 s of CPU)."""
    compared = [0]
    equal = Problem.__eq__

    def counting(self: Problem, other: object) -> bool:
        compared[0] += 1
        return equal(self, other)

    monkeypatch.setattr(Problem, "__eq__", counting)
    problems = Problems()
    problems.extend(problem(line) for line in range(2000))
    assert len(problems.items) == 2000
    assert compared[0] < 2000
