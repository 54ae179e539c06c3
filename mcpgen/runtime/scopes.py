"""The scopes a server's tools, resources and prompts need (``auth``): ``server.policy_of``
uses this policy when some item names one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .authz import Kind, Policy
from .errors import Forbidden
from .identity import Identity


class ScopedPolicy(Policy):
    """The scopes each tool, resource and prompt needs, and whether discovery hides what
    a caller may not use (``hideUnauthorizedTools``)."""

    def __init__(
        self,
        scopes: Mapping[Kind, Mapping[str, Sequence[str]]] | None = None,
        *,
        hide_unauthorized: bool = False,
    ) -> None:
        self.scopes: dict[Kind, dict[str, tuple[str, ...]]] = {
            kind: {name: tuple(needed) for name, needed in table.items() if needed}
            for kind, table in (scopes or {}).items()
        }
        super().__init__(hide_unauthorized)
        self.scoped = any(self.scopes.values())

    def required(self, kind: Kind, name: str) -> tuple[str, ...]:
        return self.scopes.get(kind, {}).get(name, ())

    def missing(self, identity: Identity, kind: Kind, name: str) -> list[str]:
        return identity.missing(self.required(kind, name))

    def check(self, identity: Identity, kind: Kind, name: str) -> None:
        """Raise ``Forbidden`` unless ``identity`` holds every scope ``name`` needs."""
        needed = self.scopes.get(kind, {}).get(name)
        if needed and (missing := identity.missing(needed)):
            raise Forbidden(kind, name, needed, missing)

    def allowed(self, identity: Identity, kind: Kind, name: str) -> bool:
        return not self.missing(identity, kind, name)

    def visible(self, identity: Identity, kind: Kind, name: str) -> bool:
        """Whether discovery (lists, search) shows ``name`` to this caller."""
        return not self.hide_unauthorized or self.allowed(identity, kind, name)

    def hides_from(self, identity: Identity | None) -> bool:
        """Whether discovery hides anything from ``identity`` (a scope it lacks)."""
        if not self.hide_unauthorized or identity is None:
            return False
        return any(self.missing(identity, k, n) for k, t in self.scopes.items() for n in t)
