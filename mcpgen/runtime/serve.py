"""Running the HTTP app with uvicorn. On SIGTERM or SIGINT the server stops accepting
connections and gives the requests in flight ``shutdown_timeout`` seconds to finish; SSE
streams and WebSockets are only closed once they have (sse-starlette and uvicorn would end
every one at the first signal). Slow clients are cut off (``h11guard``)."""

from __future__ import annotations

import logging
import math
import os
from typing import Any

import anyio
import uvicorn
from sse_starlette.sse import AppStatus
from uvicorn.supervisors import multiprocess

from .errors import ConfigError
from .h11guard import GuardedH11
from .lifecycle import INFLIGHT
from .settings import Settings

logger = logging.getLogger(__name__)


class DrainingServer(uvicorn.Server):
    """Lets in-flight requests finish before SSE streams are closed."""

    serving = ""  # logged once the socket is bound (``serve``)

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets)  # (an address in use: logged, and the process exits)
        if self.serving:  # (not in a worker of --workers: uvicorn's parent says where)
            logger.info("%s", self.serving)

    async def shutdown(self, sockets: Any = None) -> None:
        seconds = self.config.timeout_graceful_shutdown or 0

        async def release() -> None:
            if not await INFLIGHT.wait_idle(max(0.1, seconds - 0.5)):
                running = len(INFLIGHT.scopes)
                logger.warning("shutdown: %d request(s) still running after %s s", running, seconds)
            # ended here, not by uvicorn's cancelling them (a 500 and a traceback each); the
            # streams of 2026-07-28's subscriptions/listen are no sse-starlette's (AppStatus)
            INFLIGHT.stop()
            await INFLIGHT.wait_idle(0.3)
            AppStatus.should_exit = True

        ws = self.config.ws_protocol_class
        async with anyio.create_task_group() as tg:
            if ws and any(isinstance(c, ws) for c in self.server_state.connections):
                # (uvicorn closes a WebSocket at once: 1012, its calls in flight unanswered)
                for server in self.servers:
                    server.close()  # (no new connection meanwhile)
                await release()
            else:
                tg.start_soon(release)
            await super().shutdown(sockets)


class DrainingProcess(multiprocess.Process):
    """A worker (``--workers``) that runs a ``DrainingServer`` (uvicorn 0.55's workers make
    their ``Server`` here, a plain one)."""

    @property
    def server(self) -> uvicorn.Server:
        if self._server is None:
            self._server = DrainingServer(config=self.config)
        return self._server


def uvicorn_options(settings: Settings) -> dict[str, Any]:
    return {
        "host": settings.host,
        "port": settings.port,
        "log_config": None,
        "log_level": settings.log_level.lower(),
        "timeout_graceful_shutdown": math.ceil(settings.shutdown_timeout),
        "ws_max_size": settings.max_body_size,
        "http": GuardedH11,
        "timeout_keep_alive": settings.header_timeout,  # (h11guard: a deadline for headers)
        # X-Forwarded-For decides the client address (and so the rate limit of anonymous
        # and refused requests): believed only from the proxies the operator names
        "proxy_headers": bool(settings.trusted_proxies),
        "forwarded_allow_ips": list(settings.trusted_proxies) or None,
    }


def serve(app: Any, settings: Settings) -> None:
    """Serve ``app`` until SIGTERM/SIGINT."""
    server = DrainingServer(uvicorn.Config(app, **uvicorn_options(settings)))
    where = f"http://{settings.host}:{settings.port}{settings.endpoint}"
    server.serving = f"serving {settings.transport} on {where}"
    server.run()


def serve_workers(
    factory: str, settings: Settings, tasks: bool = False, notifies: bool = False
) -> None:
    """Several worker processes (stateless HTTP or WebSocket), each building its app from
    the environment with ``factory`` (``package.server:create_app``); ``tasks``: some tool
    runs as an MCP task, which lives in the worker that started it unless Redis holds it;
    ``notifies``: the server offers change notifications, which without Redis reach only
    the listeners of the worker that raised them."""
    if settings.transport == "sse" or (settings.transport == "http" and not settings.stateless):
        raise ConfigError(
            "several workers need stateless HTTP (--stateless) or WebSocket: "
            "sessions live in the process that opened them"
        )
    if tasks and not settings.redis_url:
        raise ConfigError(
            "several workers (--workers) without Redis cannot serve MCP tasks: a task lives "
            "in the worker that started it, and tasks/get reaching another answers 'Unknown "
            "task'; run one worker, or share state through Redis (docs/replicas.md)"
        )
    if notifies and not settings.redis_url:
        raise ConfigError(
            "several workers (--workers) without Redis cannot carry change notifications "
            "(listChanged, subscribe): one raised in a worker reaches only the listeners of "
            "that worker; run one worker, or share events through Redis (docs/replicas.md)"
        )
    if settings.rate_limit and not settings.redis_url:
        logger.warning(
            "each of the %d workers keeps its own rate limit: a caller whose connections "
            "reach them all may send %d times %g requests per second; share one limit "
            "through Redis (--redis-url)",
            settings.workers,
            settings.workers,
            settings.rate_limit,
        )
    os.environ.update(settings.to_env())  # each worker builds its app from these
    multiprocess.Process = DrainingProcess  # type: ignore[misc]
    uvicorn.run(factory, factory=True, workers=settings.workers, **uvicorn_options(settings))
