"""Completes resource notes://note/{id}, argument id: user code, kept across regenerations.

A completion handler gets no ``Context``, so it cannot see the caller's notes in
``ctx.store``: it offers nothing rather than ids that may not exist (search_notes lists them).
"""

from __future__ import annotations

from collections.abc import Sequence


async def complete(value: str, context: dict[str, str]) -> Sequence[str]:
    return []
