"""Wall time per build phase, for ``mcpgen build --timings`` (where does a big build go?)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

_PHASES: dict[str, float] = {}


@contextmanager
def phase(name: str) -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    finally:
        _PHASES[name] = _PHASES.get(name, 0.0) + time.perf_counter() - start


def report() -> str:
    """One line per phase in the order they first ran, and the total."""
    total = sum(_PHASES.values())
    lines = [f"  {name:<22} {seconds:7.2f} s" for name, seconds in _PHASES.items()]
    return "\n".join(["timings:", *lines, f"  {'total':<22} {total:7.2f} s"])


def reset() -> None:
    _PHASES.clear()
