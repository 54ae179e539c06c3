"""Content of the hotels resource (travel://hotels/{city}): user code, kept across
regenerations."""

from __future__ import annotations

import json

from ... import ResourceReturn
from .._places import known_city, seed


async def read(city: str) -> ResourceReturn:
    name = known_city(city)
    hotels = [
        {"name": f"{kind} {name}", "stars": stars, "price": 60 * stars + seed(name, kind) % 40}
        for kind, stars in (("Hostel", 1), ("Hotel", 3), ("Grand Hotel", 5))
    ]
    return json.dumps({"city": name, "hotels": hotels})
