"""The runtime every generated server runs: plain Python, copied verbatim into each package.

A build copies this folder byte for byte into ``src/<package>/_runtime/``; nothing in it
is rendered from a template and nothing in it imports the generator. What differs between
servers lives in the generated ``_spec.json`` and ``server.py``.

Handlers import the public API from their package (``from <package> import ToolError``);
the same names are here too, for handlers written against mcpgen 0.1
(``from ..._runtime import ToolError``).
"""

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
