"""Stand-in travel data, the same on every call: user code, kept across regenerations."""

from __future__ import annotations

import hashlib

from .. import ResourceNotFound

CITIES = (
    "Amsterdam",
    "Barcelona",
    "Berlin",
    "Lisbon",
    "London",
    "Paris",
    "Prague",
    "Rome",
    "Vienna",
)
ACTIVITIES = {
    "food": ("a market hall", "a street-food tour", "a cooking class"),
    "museums": ("the city museum", "a modern art gallery"),
    "nightlife": ("a jazz bar", "a rooftop terrace"),
    "outdoors": ("a walk along the river", "a bike ride through the parks"),
    "shopping": ("the old-town boutiques", "a flea market"),
}


def seed(*parts: str) -> int:
    """A number that depends only on ``parts`` (case aside)."""
    return int(hashlib.sha256("/".join(parts).lower().encode()).hexdigest()[:8], 16)


def known_city(name: str) -> str:
    """The known city ``name`` names, in any case; ``ResourceNotFound`` for another."""
    for known in CITIES:
        if known.lower() == name.lower():
            return known
    raise ResourceNotFound(f"no travel data for {name!r}; known cities: {', '.join(CITIES)}")
