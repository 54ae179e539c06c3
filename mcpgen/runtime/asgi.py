"""The HTTP app built from the environment alone, for uvicorn workers and process managers."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .errors import ConfigError
from .logs import configure_logging
from .settings import Settings, offered

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from .server import GeneratedServer


def app_from_env(
    spec: Mapping[str, Any], server_factory: Callable[..., GeneratedServer]
) -> Starlette:
    """A new app from ``<PREFIX>*`` environment variables (called once in each worker)."""
    from .http_app import create_app
    from .server import settle

    settings = Settings.from_env(spec)
    if settings.transport == "stdio":  # the first network transport the server offers
        network = [t for t in offered(spec) if t != "stdio"]
        if not network:
            raise ConfigError("this server offers no HTTP transport (transports.offer)")
        settings = replace(settings, transport=network[0])
    configure_logging(settings.log_level, settings.log_format)
    app: Starlette = create_app(spec, server_factory, settings)
    settle()
    return app
