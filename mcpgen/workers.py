"""One process pool per build, shared by model generation and formatting.

Both are CPU-bound and independent per module or piece, so a single pool with one process
per core keeps every core busy until the last task: generator runs are submitted first
(biggest first), formatting batches queue behind them. The pool starts on the first task,
so small builds never pay for it.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from types import TracebackType
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


class Workers:
    def __init__(self, jobs: int | None = None) -> None:
        self.jobs = jobs or os.cpu_count() or 1
        self._pool: ProcessPoolExecutor | None = None

    @property
    def parallel(self) -> bool:
        return self.jobs > 1

    def submit(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        """Run in the pool (when there is more than one core), else here and now."""
        if not self.parallel:
            return done(fn, *args, **kwargs)
        if self._pool is None:
            # Workers are forked with the build's objects (the loaded spec: millions of
            # them); frozen, their garbage collector never walks those again.
            gc.freeze()
            self._pool = ProcessPoolExecutor(max_workers=self.jobs)
        try:
            return self._pool.submit(fn, *args, **kwargs)
        except BrokenProcessPool:  # a worker died (out of memory?): the rest runs here
            return done(fn, *args, **kwargs)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None
            gc.unfreeze()

    def __enter__(self) -> Workers:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def done(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> Future[T]:
    """A future already holding ``fn``'s result (or exception), computed here."""
    future: Future[T] = Future()
    try:
        future.set_result(fn(*args, **kwargs))
    except Exception as exc:
        future.set_exception(exc)
    return future
