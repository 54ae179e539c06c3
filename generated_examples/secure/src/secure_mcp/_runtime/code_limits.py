"""Code mode's limits (what one ``execute`` may use; ``codemode``'s docstring says who
enforces each) and the per-caller turns that share the sandbox workers fairly."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio


@dataclass(frozen=True)
class Limits:
    """What one ``execute`` may use; every field is enforced."""

    timeout: float = 30.0  # wall-clock seconds for the whole run, operations included
    cpu_seconds: float = 5.0  # seconds of execution inside the sandbox
    memory: int = 64 * 1024 * 1024  # bytes of sandbox heap
    recursion: int = 200  # call depth inside the sandbox
    calls: int = 50  # operations called per run
    output: int = 64 * 1024  # bytes printed, and bytes of the result as JSON
    code: int = 64 * 1024  # bytes of source code
    sleep_seconds: float = 10.0  # time.sleep in all, within the timeout
    workers: int = 2  # sandbox processes running at once (more runs wait for one)
    per_caller: int = 0  # runs of one caller at once (0: half the workers, at least one)
    arguments: int = 1024 * 1024  # bytes of one operation call's arguments as JSON

    @property
    def runs_per_caller(self) -> int:
        return self.per_caller or max(1, self.workers // 2)


class CallerTurns:
    """At most ``size`` runs of one caller (by its identity's key) at once: a caller's
    extra runs wait for its own earlier ones, within their timeout, and never hold a worker
    meanwhile, so one caller's slow runs cannot make another caller wait. Callers without a
    verified identity (stdio's local user, every client of a server without authentication)
    cannot be told apart: they share the workers as they come."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._gates: dict[str, anyio.Semaphore] = {}  # only callers with runs or waiters

    @asynccontextmanager
    async def turn(self, ctx: Any) -> AsyncIterator[None]:
        identity = getattr(ctx, "identity", None)
        if getattr(identity, "issuer", None) is None:  # local or anonymous
            yield
            return
        key = str(getattr(identity, "key", ""))
        gate = self._gates.get(key)
        if gate is None:
            gate = self._gates[key] = anyio.Semaphore(self.size)
        try:
            async with gate:
                yield
        finally:
            idle = gate.value == self.size and gate.statistics().tasks_waiting == 0
            if idle and self._gates.get(key) is gate:
                del self._gates[key]

    def __len__(self) -> int:
        return len(self._gates)
