"""Code mode (search_docs and execute): being written; see issue 19."""

from __future__ import annotations

from typing import Any

from .errors import ConfigError


def install(spec: dict[str, Any], table: Any) -> set[str]:
    raise ConfigError("code mode is not in this runtime yet: use openapi.mode search or tools")
