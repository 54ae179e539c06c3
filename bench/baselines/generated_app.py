"""uvicorn --factory entry for a generated server: stateless streamable HTTP at /mcp.

Used by bench/throughput.py when it launches the generated server through uvicorn itself
(``--generated-launcher factory``, or a package without ``--workers``). The package comes
from ``BENCH_PACKAGE`` (default ``calculator_mcp``); put its ``src`` directory on
``PYTHONPATH``. A package with an ``asgi.create_app`` (the app its own ``--workers`` serves,
with the generated HTTP middleware) is built through it, configured for stateless HTTP by
its ``<PREFIX>_*`` environment variables; an older package without one through
``create_server().streamable_http_app(stateless_http=True)``.

    BENCH_PACKAGE=calculator_mcp PYTHONPATH=generated_examples/calculator/src:bench/baselines \\
        python -m uvicorn --factory generated_app:create_app --workers 2 --port 8003
"""

from __future__ import annotations

import importlib
import os
from typing import Any


def create_app() -> Any:
    package = os.environ.get("BENCH_PACKAGE", "calculator_mcp")
    try:
        http = importlib.import_module(package + "._http")
        asgi = importlib.import_module(package + ".asgi")
    except ImportError:
        server = importlib.import_module(package + ".server").create_server()
        return server.streamable_http_app(stateless_http=True, host="127.0.0.1")
    prefix = http.ENV_PREFIX
    os.environ.setdefault(prefix + "TRANSPORT", "http")
    os.environ.setdefault(prefix + "STATELESS", "true")
    os.environ.setdefault(prefix + "LOG_LEVEL", "WARNING")
    return asgi.create_app()
