"""The runtime every generated server runs: plain Python, copied verbatim into each package.

A build copies this folder byte for byte into ``src/<package>/_runtime/``; nothing in it
is rendered from a template and nothing in it imports the generator. What differs between
servers lives in the generated ``_spec.json`` and ``server.py``.

Handlers import the public API from their package (``from <package> import ToolError``);
the same names are here too, for handlers written against mcpgen 0.1
(``from ..._runtime import ToolError``).
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .api import *  # noqa: F403 (the names of api.__all__, re-exported)
else:  # imported when first used: the generator reads some runtime modules without mcp

    def __getattr__(name: str) -> Any:
        from importlib import import_module

        api = import_module(f"{__name__}.api")  # not "from . import api": that asks here
        if name in api.__all__:
            return getattr(api, name)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
