"""One process pool per build, shared by model generation and formatting.

Both are CPU-bound and independent per module or piece, so a single pool with one process
per core keeps every core busy until the last task: generator runs are submitted first
(biggest first), formatting batches queue behind them. The pool starts on the first task,
so builds with nothing to generate or format never pay for it.

Each worker starts by running the pool's warm-ups (importing black, the model generator)
and then freezes what they left behind (``gc.freeze``): the garbage collector's full
passes would otherwise walk those hundreds of thousands of objects again and again while
black and the generator allocate, about a tenth of their time.

A build can also fork one *spare* worker at the very start (``early``), which loads the
model generator on the core that loading the source leaves idle; the few models a changed
operation or a small manifest needs are then generated there at once, instead of waiting
for a pool worker to load the generator (a third of a second) after the source is loaded.
The ``mcpgen`` command forks it before importing the rest of mcpgen (``fork_spare``); the
build's ``Workers`` adopts it.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.connection import Connection
from types import TracebackType
from typing import Any, ParamSpec, TypeVar, cast

P = ParamSpec("P")
T = TypeVar("T")


class Workers:
    def __init__(self, jobs: int | None = None) -> None:
        self.jobs = jobs or os.cpu_count() or 1
        self._pool: ProcessPoolExecutor | None = None
        self._spare: ProcessPoolExecutor | None = _take_forked_spare() if self.parallel else None
        self._warmups: list[Callable[[], object]] = []
        self._frozen = False

    def warm(self, *warmups: Callable[[], object]) -> None:
        """Run these (module-level functions) in every worker before its first task; only
        workers started after this call see them."""
        self._warmups.extend(w for w in warmups if w not in self._warmups)

    @property
    def parallel(self) -> bool:
        return self.jobs > 1

    def start(self, *warmups: Callable[[], object]) -> None:
        """Start the pool now (before there is work for it), its workers warming up with
        ``warmups`` while this process gets on with loading."""
        self.warm(*warmups)
        if self.parallel and self._pool is None:
            self._pool = _started(self.jobs, tuple(self._warmups))

    def start_spare(self, *warmups: Callable[[], object]) -> None:
        """Fork one extra worker now, to run ``warmups`` while this process loads, and then
        whatever ``submit_spare`` sends it."""
        if self.parallel and self._spare is None and _forks():
            self._spare = _started(1, warmups)

    def submit_spare(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        """Run in the spare worker if there is one, else like ``submit``."""
        if self._spare is not None:
            try:
                return self._spare.submit(fn, *args, **kwargs)
            except BrokenProcessPool:
                self._spare = None
        return self.submit(fn, *args, **kwargs)

    def submit(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        """Run in the pool (when there is more than one core), else here and now."""
        if not self.parallel:
            return done(fn, *args, **kwargs)
        if not self._frozen:
            # The build's objects (the loaded spec: millions of them) stay until the end:
            # frozen, the garbage collector never walks them again, here or in workers
            # forked from here.
            gc.freeze()
            self._frozen = True
        self.start()
        assert self._pool is not None
        try:
            return self._pool.submit(fn, *args, **kwargs)
        except BrokenProcessPool:  # a worker died (out of memory?): the rest runs here
            return done(fn, *args, **kwargs)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
        if self._spare is not None:
            # an unused spare may still be loading the generator: stop it rather than wait
            for process in list(getattr(self._spare, "_processes", {}).values()):
                process.terminate()
            self._spare.shutdown(cancel_futures=True)
        self._pool = self._spare = None
        if self._frozen:
            gc.unfreeze()
            self._frozen = False

    def __enter__(self) -> Workers:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


_forked: list[ProcessPoolExecutor] = []  # a spare forked before there was a Workers


def fork_spare(*warmups: Callable[[], object]) -> None:
    """Fork the spare worker now, before the build's ``Workers`` exists (which adopts it).
    Only on a machine with more than one core, where workers fork."""
    if (os.cpu_count() or 1) > 1 and _forks() and not _forked:
        _forked.append(_started(1, warmups))


def _take_forked_spare() -> ProcessPoolExecutor | None:
    return _forked.pop() if _forked else None


def _started(jobs: int, warmups: tuple[Callable[[], object], ...]) -> ProcessPoolExecutor:
    """A pool of ``jobs`` workers, forked now (processes start on the first task, all of
    them), each running ``warmups`` first."""
    pool = ProcessPoolExecutor(
        max_workers=jobs, initializer=_start_worker, initargs=(os.getpid(), warmups)
    )
    pool.submit(_nothing)
    return pool


def _forks() -> bool:
    return multiprocessing.get_start_method(allow_none=False) == "fork"


def _nothing() -> None:
    pass


def _start_worker(build: int, warmups: tuple[Callable[[], object], ...]) -> None:
    # a worker whose build is gone (killed, or exited without closing its pool) leaves too;
    # the build's pid comes from the build: a worker forked as the build exits would read
    # its new parent's (init's) as its own, and wait for it forever
    threading.Thread(target=_leave_with, args=(build,), daemon=True).start()
    for warmup in warmups:
        # a warm-up that fails only costs time: the task needing it fails (or not) itself
        with contextlib.suppress(Exception):
            warmup()
    gc.collect()
    gc.freeze()
    gc.enable()  # a worker forked by a build that paused the collector collects as usual


def _leave_with(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


def forked(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> Callable[[], T]:
    """Start ``fn(*args, **kwargs)`` in a child forked now, which sees this process's
    objects as they are: nothing is pickled but the result. Call what this returns for the
    result (the child's exception is raised here; a child that died is made up for by
    computing here). Without fork, or on one core, ``fn`` runs here when the result is
    asked for."""
    if (os.cpu_count() or 1) < 2 or not _forks():
        return functools.partial(fn, *args, **kwargs)
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_send_result, args=(send, fn, args, kwargs), daemon=True)
    child.start()
    send.close()

    def result() -> T:
        try:
            ok, value = receive.recv()
        except EOFError:  # the child died (out of memory?): compute here
            ok, value = True, fn(*args, **kwargs)
        finally:
            receive.close()
            child.join()
        if not ok:
            raise value
        return cast(T, value)

    return result


def _send_result(send: Connection, fn: Callable[..., object], args: Any, kwargs: Any) -> None:
    try:
        outcome: tuple[bool, object] = (True, fn(*args, **kwargs))
    except Exception as exc:
        outcome = (False, exc)
    # A result that cannot be pickled, or a build gone (a failed build does not ask):
    # nothing to say here; the build computes it itself if it asks.
    with contextlib.suppress(Exception):
        send.send(outcome)
    send.close()


def done(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> Future[T]:
    """A future already holding ``fn``'s result (or exception), computed here, with the
    garbage collector on as in a worker (a build pauses it: ``collector_paused``)."""
    future: Future[T] = Future()
    paused = not gc.isenabled()
    if paused:
        gc.enable()
    try:
        future.set_result(fn(*args, **kwargs))
    except Exception as exc:
        future.set_exception(exc)
    finally:
        if paused:
            gc.disable()
    return future
