"""The runtime every generated server runs: plain Python, copied verbatim into each package.

A build copies this folder byte for byte into ``src/<package>/_runtime/``; nothing in it
is rendered from a template and nothing in it imports the generator. What differs between
servers lives in the generated ``_spec.json`` and ``server.py``.

Handlers import the public API from their package (``from <package> import ToolError``);
the same names are here too, for handlers written against mcpgen 0.1
(``from ..._runtime import ToolError``).
"""

import os
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any


def _installed_propagators() -> list[str]:
    """Drop from ``OTEL_PROPAGATORS`` the names no installed package provides, and return
    them (``cli.py`` logs them). OpenTelemetry reads the variable when the SDK is first
    imported, which this package does, and raises on a name it cannot load: the server would
    not start. The others stay in use; none left, its default (tracecontext,baggage)."""
    value = os.environ.get("OTEL_PROPAGATORS", "")
    names = [n.strip() for n in value.split(",")]
    group = "opentelemetry_propagator"
    kept = [n for n in names if n.lower() == "none" or (n and entry_points(group=group, name=n))]
    if value and kept != names:  # (an empty name, "a,,b", would raise too)
        # still set: any OTEL_* variable turns telemetry on (telemetry.configured)
        os.environ["OTEL_PROPAGATORS"] = ",".join(kept) or "tracecontext,baggage"
    return [n for n in names if n and n not in kept]


MISSING_PROPAGATORS = _installed_propagators()

if TYPE_CHECKING:
    from .api import *  # noqa: F403 (the names of api.__all__, re-exported)
else:  # imported when first used: the generator reads some runtime modules without mcp

    def __getattr__(name: str) -> Any:
        from importlib import import_module

        api = import_module(f"{__name__}.api")  # not "from . import api": that asks here
        if name in api.__all__:
            return getattr(api, name)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
