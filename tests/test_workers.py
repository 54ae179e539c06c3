"""The build's process pool: warm-ups run in each worker before its first task, a failing
warm-up only costs time, and what they load is frozen away from the garbage collector."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

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


def _collecting() -> bool:
    return gc.isenabled()


@pytest.mark.parametrize("jobs", [2, 1])
def test_tasks_collect_garbage_while_the_build_pauses_the_collector(jobs: int) -> None:
    """A build runs with the collector off (``collector_paused``); black and the model
    generator make cyclic garbage, so their tasks run with it on: in a worker forked
    during the pause, and here on one core (after which it is off again)."""
    from mcpgen.pipeline import collector_paused

    with Workers(jobs=jobs) as workers, collector_paused():
        assert workers.submit(_collecting).result()
        assert not gc.isenabled()
    gc.unfreeze()
    assert gc.isenabled()


class _Recorder:
    """Stands in for Workers: what ``build._start_early`` asked of it."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def start(self, *warmups: object) -> None:
        self.calls.append("pool")

    def start_spare(self, *warmups: object) -> None:
        self.calls.append("spare")


def _early(build: object, source: Path) -> list[str]:
    recorder = _Recorder()
    build._start_early(source, recorder)  # type: ignore[attr-defined]
    return recorder.calls


def test_a_big_build_starts_workers_before_loading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first build of a big source starts the whole pool; a rebuild (models cached) only
    a spare worker for the models of what changed; a small source neither."""
    import importlib

    from mcpgen import early

    build = importlib.import_module("mcpgen.cli.build")  # the module, not the click command

    big = tmp_path / "spec.json"
    big.write_text(" " * early.PRESTART_SOURCE_BYTES + "{}")
    small = tmp_path / "m.yaml"
    small.write_text("mcpgen: 1\n")
    store = tmp_path / "cache"
    monkeypatch.setenv("MCPGEN_CACHE_DIR", str(store))
    assert _early(build, big) == ["pool"]  # no cache folder yet
    store.mkdir()
    (store / "pieces-0.json").write_text("{}")
    assert _early(build, big) == ["pool"]  # a cache, but no models in it
    assert _early(build, small) == []
    assert _early(build, tmp_path / "missing.json") == []
    (store / "models-v4-0.py").write_text("")
    assert _early(build, big) == ["spare"]  # a rebuild: models are cached
    assert _early(build, small) == []  # in this process; the mcpgen command forks one
    assert early.plan(small, small=True) == "spare"
    monkeypatch.setenv("MCPGEN_CACHE_DIR", "")
    assert _early(build, big) == ["pool"]  # caching off: every build is a first one


def test_the_spare_worker_is_forked_at_once_and_takes_spare_tasks() -> None:
    with Workers(jobs=2) as workers:
        workers.start_spare(_set_mark)
        assert workers._spare is not None and workers._pool is None
        assert len(workers._spare._processes) == 1  # forked already, before any task
        pid, mark, frozen = workers.submit_spare(_state).result()
        assert mark == pid and pid != os.getpid() and frozen
        other, _, _ = workers.submit(_state).result()  # other tasks go to the pool
        assert workers._pool is not None and other != pid
    assert workers._spare is None and workers._pool is None


def test_without_a_spare_spare_tasks_go_to_the_pool() -> None:
    with Workers(jobs=2) as workers:
        pid, _, _ = workers.submit_spare(_state).result()
        assert workers._pool is not None and pid != os.getpid()
    with Workers(jobs=1) as workers:
        workers.start_spare(_set_mark)
        pid, mark, _ = workers.submit_spare(_state).result()
    assert pid == os.getpid() and mark is None  # one core: here, no warm-up


def test_a_started_pool_has_its_workers_running_before_any_task() -> None:
    with Workers(jobs=2) as workers:
        workers.start(_set_mark)
        assert workers._pool is not None
        assert len(workers._pool._processes) == 2  # forked already
        pid, mark, frozen = workers.submit(_state).result()
    assert mark == pid and frozen


@pytest.mark.parametrize(
    ("argv", "source"),
    [
        (["build", "m.yaml"], "m.yaml"),
        (["build", "-o", "out", "--strict", "m.yaml", "--check"], "m.yaml"),
        (["build", "--output", "out", "--max-context-bytes", "9", "spec.json"], "spec.json"),
        (["build", "--timings", "--", "-odd.yaml"], "-odd.yaml"),
        (["build", "--help"], None),
        (["build"], None),
        (["validate", "m.yaml"], None),
        ([], None),
    ],
)
def test_the_command_finds_what_it_will_build(argv: list[str], source: str | None) -> None:
    from mcpgen.launch import _build_source

    found = _build_source(argv)
    assert (str(found) if found else None) == source


def test_a_spare_forked_before_the_build_is_adopted_and_stopped() -> None:
    from mcpgen.format import pool as module

    module.fork_spare(_set_mark)
    assert len(module._forked) == 1
    with Workers(jobs=2) as workers:
        assert workers._spare is not None and not module._forked  # adopted
        processes = list(workers._spare._processes.values())
        pid, mark, _ = workers.submit_spare(_state).result()
        assert mark == pid
    assert all(not p.is_alive() for p in processes)  # stopped with the build


def test_workers_leave_when_their_build_dies(tmp_path: Path) -> None:
    """A build killed (or leaving with os._exit) before closing its pool: the workers
    notice within a second and exit instead of waiting for work forever."""
    import subprocess
    import time

    script = (
        "import os, sys\n"
        "from mcpgen.format.pool import Workers\n"
        "workers = Workers(jobs=2)\n"
        "workers.start_spare()\n"
        "print(workers.submit_spare(os.getpid).result(), workers.submit(os.getpid).result())\n"
        "sys.stdout.flush()\n"
        "os._exit(0)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    pids = [int(pid) for pid in done.stdout.split()]
    assert len(pids) == 2, done.stdout + done.stderr
    deadline = time.monotonic() + 10
    while any(Path(f"/proc/{pid}").exists() for pid in pids):
        assert time.monotonic() < deadline, "a worker outlived its build"
        time.sleep(0.1)


def test_a_worker_started_after_its_build_died_leaves_at_once() -> None:
    """The build's pid is handed to the worker: one forked as the build exits (its parent
    already init) compares against the build's pid, not init's, and leaves instead of
    waiting forever (it kept the test's pipes open for minutes under load)."""
    import subprocess

    script = (
        "import os\n"
        "from mcpgen.format.pool import _leave_with\n"
        "_leave_with(os.getppid() + 1_000_000)\n"  # a build that is not this parent
        "raise SystemExit(3)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=30)
    assert done.returncode == 0, done.stderr


_SEEN: list[str] = []  # set here after the fork: a forked child does not see it


def _child_view(extra: str) -> tuple[int, list[str], str]:
    return os.getpid(), list(_SEEN), extra


def _raises() -> None:
    raise ValueError("from the child")


def _dies() -> int:
    if os.getpid() != _PARENT[0]:
        os._exit(3)  # the child dies without a word: the result is computed here
    return 7


_PARENT: list[int] = []


def _unpicklable() -> Callable[[], int]:
    pid = os.getpid()
    return lambda: pid


def test_forked_runs_in_a_child_that_sees_this_process_as_it_was() -> None:
    from mcpgen.format.pool import forked

    big = ["x" * 1000] * 1000  # seen by the child without being sent to it
    _SEEN[:] = ["before"]
    result = forked(_child_view, str(len(big)))
    _SEEN[:] = ["after"]
    pid, seen, extra = result()
    assert pid != os.getpid() and seen == ["before"] and extra == "1000"
    with pytest.raises(ValueError, match="from the child"):
        forked(_raises)()
    _PARENT[:] = [os.getpid()]
    assert forked(_dies)() == 7
    assert forked(_unpicklable)()() == os.getpid()  # computed here instead


def test_forked_runs_here_on_one_core(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcpgen.format import pool

    monkeypatch.setattr(pool.os, "cpu_count", lambda: 1)
    _SEEN[:] = ["before"]
    result = pool.forked(_child_view, "x")
    _SEEN[:] = ["after"]
    assert result() == (os.getpid(), ["after"], "x")
