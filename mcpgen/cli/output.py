"""Printing problems and the exit codes every command shares."""

from __future__ import annotations

import os
import sys
from typing import NoReturn

import click

from mcpgen.problems import Problems

EXIT_OK, EXIT_DRIFT, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 70


def counted(number: int, noun: str) -> str:
    """``1 tool``, ``2 tools``, ``0 tools``."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def report(problems: Problems, strict: bool = False) -> None:
    color = sys.stderr.isatty() and not os.environ.get("NO_COLOR") and not os.environ.get("CI")
    for problem in problems.sorted():
        click.echo(problem.format(color), err=True)
    errors, warnings = len(problems.errors), len(problems.warnings)
    if errors or (strict and warnings):
        click.echo(f"{errors} error(s), {warnings} warning(s)", err=True)


def bad_input(problems: Problems, strict: bool = False) -> NoReturn:
    report(problems, strict)
    sys.exit(EXIT_BAD_INPUT)
