"""Test tiers: every test is ``unit``, ``fuzz``, ``e2e`` or ``external`` (markers, set here
by file; the lists are in ``tiers.py``).

* ``unit`` -- in-process and in memory: the loaders, the checks, the model, rendering, the
  runtime against in-memory servers. A developer's loop: ``python -m pytest -m unit``.
* ``fuzz`` -- hypothesis properties and fuzzers of the loaders, the importer, the fast path
  and the generator: in process, but hundreds of generated inputs each.
* ``e2e`` -- builds generated projects and runs them as their users do: servers on sockets,
  stdio subprocesses, mypy and ruff over generated code, the attacker's suite.
* ``external`` -- needs a program beside Python: Node (the TypeScript SDK, the official
  conformance suite), redis-server, or a fresh venv that installs packages.

A test marked ``slow`` is at least ``e2e``. The README's test command (what CI runs) runs
every tier; ``-m "not external"`` leaves out the last.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest
from tiers import tier

_MYPY_CACHE: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    """One mypy cache for the session's subprocesses (generated suites' ``mypy --strict``).

    Cold, a run re-reads the SDK, pydantic and the stdlib (~20 s a generated project);
    sharing the cache checks the same code in ~3-8 s. mypy keys its cache by module and
    path and re-hashes a file whose path or mtime differ, so nothing stale is trusted.
    ``MYPY_CACHE_DIR`` set by the caller wins."""
    if "MYPY_CACHE_DIR" not in os.environ:
        _MYPY_CACHE.append(tempfile.mkdtemp(prefix="mcpgen-tests-mypy-"))
        os.environ["MYPY_CACHE_DIR"] = _MYPY_CACHE[0]


def pytest_unconfigure(config: pytest.Config) -> None:
    for folder in _MYPY_CACHE:
        os.environ.pop("MYPY_CACHE_DIR", None)
        shutil.rmtree(folder, ignore_errors=True)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        found = tier(item.path)
        if found == "unit" and item.get_closest_marker("slow") is not None:
            found = "e2e"
        item.add_marker(getattr(pytest.mark, found))
