"""Content of the activities resource (travel://activities/{city}/{category}).

Things to do in a city, by category.

This file is yours: mcpgen created it once and never overwrites it.
Return text (str), binary data (bytes), or a list of resource contents; raise
``ResourceNotFound`` when the requested resource does not exist.
"""

from __future__ import annotations

from ... import ResourceReturn


async def read(city: str, category: str) -> ResourceReturn:
    raise NotImplementedError
