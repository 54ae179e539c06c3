"""What handlers import (through the package: ``from <package> import ToolError, Context``)."""

from __future__ import annotations

from .content import (
    PromptReturn,
    ResourceReturn,
    ToolReturn,
    audio,
    embedded_blob,
    embedded_text,
    image,
    resource_link,
    text,
)
from .context import Context, elicitation, roots, sampling
from .errors import ResourceNotFound, ToolError
from .identity import Identity

__all__ = [
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
