"""The ``mcpgen`` command (console script, ``python -m mcpgen``).

For ``mcpgen build`` the spare worker (``early``) is forked before the command line module
is imported: mcpgen's own imports (a fifth of a second) and the model generator's, in the
worker (a third), then run at the same time on two cores. Everything else goes straight
to ``cli.run``.
"""

from __future__ import annotations

import sys
from pathlib import Path

_WITH_VALUE = {"-o", "--output", "--max-context-bytes"}


def run() -> None:
    source = _build_source(sys.argv[1:])
    if source is not None:
        from mcpgen import early
        from mcpgen.format import pool as workers

        if early.plan(source, small=True) == "spare":
            workers.fork_spare(early.load_generator)
    from mcpgen.cli import run as run_cli

    run_cli()


def _build_source(argv: list[str]) -> Path | None:
    """SOURCE of ``mcpgen build [OPTIONS] SOURCE``, or None (another command, help)."""
    if argv[:1] != ["build"] or {"-h", "--help"} & set(argv):
        return None
    rest = iter(argv[1:])
    for arg in rest:
        if arg in _WITH_VALUE:
            next(rest, None)
        elif arg == "--":
            after = next(rest, None)
            return Path(after) if after else None
        elif not arg.startswith("-"):
            return Path(arg)
    return None
