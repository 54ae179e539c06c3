"""Content of the activities resource (travel://activities/{city}/{category}): user code,
kept across regenerations."""

from __future__ import annotations

import json

from ... import ResourceNotFound, ResourceReturn
from .._places import ACTIVITIES, known_city


async def read(city: str, category: str) -> ResourceReturn:
    name = known_city(city)
    if category not in ACTIVITIES:
        raise ResourceNotFound(f"no category {category!r}; known: {', '.join(ACTIVITIES)}")
    return json.dumps({"city": name, "category": category, "activities": ACTIVITIES[category]})
