"""Completes resource travel://activities/{city}/{category}, argument city.

This file is yours: mcpgen created it once and never overwrites it.
"""

from __future__ import annotations

from collections.abc import Sequence


async def complete(value: str, context: dict[str, str]) -> Sequence[str]:
    """Values that complete ``value``; ``context`` holds arguments already chosen."""
    return []
