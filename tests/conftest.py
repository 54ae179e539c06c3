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

import pytest
from tiers import tier


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        found = tier(item.path)
        if found == "unit" and item.get_closest_marker("slow") is not None:
            found = "e2e"
        item.add_marker(getattr(pytest.mark, found))
