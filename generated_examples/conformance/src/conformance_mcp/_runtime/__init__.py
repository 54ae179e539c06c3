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
    from .api import (
        Context,
        Identity,
        PromptReturn,
        ResourceNotFound,
        ResourceReturn,
        ToolError,
        ToolReturn,
        audio,
        elicitation,
        embedded_blob,
        embedded_text,
        image,
        resource_link,
        roots,
        sampling,
        text,
    )
else:  # imported when first used: the generator reads some runtime modules without mcp

    def __getattr__(name: str) -> Any:
        if name in __all__ and name != "RUNTIME_VERSION":
            from . import api

            return getattr(api, name)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


RUNTIME_VERSION = "0.2.0"  # the mcpgen version this runtime came with

__all__ = [
    "RUNTIME_VERSION",
    "Context",
    "Identity",
    "PromptReturn",
    "ResourceNotFound",
    "ResourceReturn",
    "ToolError",
    "ToolReturn",
    "audio",
    "elicitation",
    "embedded_blob",
    "embedded_text",
    "image",
    "resource_link",
    "roots",
    "sampling",
    "text",
]
