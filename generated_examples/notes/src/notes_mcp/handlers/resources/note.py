"""Content of the note resource (notes://note/{id}).

One note as Markdown.

This file is yours: mcpgen created it once and never overwrites it.
Return text (str), binary data (bytes), or a list of resource contents; raise
``ResourceNotFound`` when the requested resource does not exist.
"""

from __future__ import annotations

from ... import ResourceReturn


async def read(id_: str) -> ResourceReturn:
    raise NotImplementedError
