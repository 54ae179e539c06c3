"""The build's process pool: warm-ups run in each worker before its first task, a failing
warm-up only costs time, and what they load is frozen away from the garbage collector."""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

from mcpgen.format.pool import Workers

_MARK = "mcpgen_test_warm_mark"


def _set_mark() -> None:
    setattr(sys.modules[__name__], _MARK, os.getpid())
    _KEPT.append([os.getpid()])  # something the warm-up leaves behind


_KEPT: list[list[int]] = []


def _fails() -> None:
    raise RuntimeError("cannot warm up")


def _state() -> tuple[int, object, bool]:
    """(this process, its warm-up mark, whether what the warm-up left is frozen: out of
    the collector's generations)."""
    young = {id(obj) for obj in gc.get_objects()}
    frozen = bool(_KEPT) and all(id(kept) not in young for kept in _KEPT)
    return os.getpid(), getattr(sys.modules[__name__], _MARK, None), frozen


def test_warm_ups_run_in_each_worker_before_its_first_task() -> None:
    with Workers(jobs=2) as workers:
        workers.warm(_fails, _set_mark)
        workers.warm(_set_mark)  # registered once
        results = [workers.submit(_state).result() for _ in range(4)]
    for pid, mark, frozen in results:
        assert pid != os.getpid()
        assert mark == pid  # the warm-up ran in that worker, despite the failing one
        assert frozen
    assert getattr(sys.modules[__name__], _MARK, None) is None  # not here


def test_one_core_runs_tasks_here_without_warm_ups() -> None:
    with Workers(jobs=1) as workers:
        workers.warm(_set_mark)
        pid, mark, _ = workers.submit(_state).result()
    assert pid == os.getpid() and mark is None


def test_workers_leave_when_their_build_dies(tmp_path: Path) -> None:
    """A build killed (or leaving with os._exit) before closing its pool: the workers
    notice within a second and exit instead of waiting for work forever."""
    import subprocess
    import time

    script = (
        "import os, sys\n"
        "from mcpgen.format.pool import Workers\n"
        "workers = Workers(jobs=2)\n"
        "ran = {workers.submit(os.getpid).result() for _ in range(4)}\n"
        "print(*sorted(ran | set(workers._pool._processes)))\n"
        "sys.stdout.flush()\n"
        "os._exit(0)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    pids = [int(pid) for pid in done.stdout.split()]
    assert pids and done.returncode == 0, done.stdout + done.stderr
    deadline = time.monotonic() + 10
    while any(Path(f"/proc/{pid}").exists() for pid in pids):
        assert time.monotonic() < deadline, "a worker outlived its build"
        time.sleep(0.1)
