"""tests/runtime: the runtime (``mcpgen.runtime``) tested directly, in this process where
possible. The fixture server, its credentials and the connectors are in ``rtkit``,
``rtconnect`` and ``rtbridge``."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"
