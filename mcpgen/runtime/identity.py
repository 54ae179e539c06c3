"""Who is calling: the verified identity every authorization decision and cache key uses
(``auth.py`` verifies credentials, ``http_auth.py`` reads the one a request presents)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any


@dataclass(frozen=True)
class Identity:
    """A caller whose credential was verified (or the local, unrestricted caller). ``scopes``
    None means unrestricted: stdio, in-memory connections and static keys. ``token`` is the
    inbound credential, kept only for token exchange (RFC 8693): never logged, never in a
    ``repr``, never sent to an upstream API."""

    subject: str
    scopes: frozenset[str] | None = None
    expires_at: int | None = None
    client: str | None = None
    issuer: str | None = None
    claims: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    token: str | None = field(default=None, repr=False, compare=False)
    # which claim named the caller: "subject" (``sub``), "client" (a client-credentials
    # token's ``client_id``) or "username"; names of different kinds never meet
    kind: str = "subject"

    @cached_property  # a request reads it up to four times (limit, session, state)
    def key(self) -> str:
        """A stable key for per-caller caches, limits and sessions (no secret in it), one per
        identity: parts holding a NUL are JSON-encoded (no NUL, unlike any other key's text)."""
        parts = [self.issuer or "", self.client or "", self.subject]
        if self.kind != "subject":  # keys of ``sub`` identities stay what they were
            parts.append(self.kind)
        text = "\x00".join(parts)
        if text.count("\x00") != len(parts) - 1:
            text = json.dumps(parts)
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    @property
    def restricted(self) -> bool:
        return self.scopes is not None

    def missing(self, required: tuple[str, ...] | list[str]) -> list[str]:
        """The required scopes this caller lacks ([] when it may go ahead)."""
        scopes = self.scopes
        return [] if scopes is None else [scope for scope in required if scope not in scopes]


LOCAL = Identity("local")  # stdio and in-memory callers: the user who started the server
