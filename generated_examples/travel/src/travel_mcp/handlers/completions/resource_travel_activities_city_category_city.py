"""Completes resource travel://activities/{city}/{category}, argument city: user code, kept
across regenerations."""

from __future__ import annotations

from collections.abc import Sequence

from .._places import CITIES


async def complete(value: str, context: dict[str, str]) -> Sequence[str]:
    """The known cities starting with ``value``, in any case."""
    return [city for city in CITIES if city.lower().startswith(value.lower())]
