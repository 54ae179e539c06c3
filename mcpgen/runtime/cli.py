"""The server's command line: ``<script> --transport T [options]``. Every option also has an
environment variable, ``<PREFIX><OPTION>`` (``CALCULATOR_PORT``); a flag wins over the
variable, the variable over the manifest.
"""

from __future__ import annotations

import argparse
import errno
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import anyio

from . import MISSING_PROPAGATORS
from .errors import ConfigError
from .logs import configure_logging
from .server import LISTENED, GeneratedServer, settle
from .settings import Settings, csv, offered
from .telemetry import flush, setup

logger = logging.getLogger(__name__)
STDIO_SHUTDOWN_GRACE = 1.0  # seconds between a signal and the exit, even with stdin blocked
TRANSPORT_HELP = {
    "stdio": "stdio for local hosts",
    "http": "http (streamable HTTP)",
    "sse": "sse (legacy HTTP+SSE)",
    "websocket": "websocket",
}


# Each flag sets the ``Settings`` field of its name; its type follows the field's default.
# ``{d}`` is the settings without flags (manifest and environment).
HELP = {
    "host": "bind address (default {d.host}; other than localhost needs auth)",
    "port": "port (default {d.port})",
    "path": "streamable HTTP endpoint path (default {d.path})",
    "stateless": "streamable HTTP without sessions: any worker answers any request "
    "(default {d.stateless})",
    "json_response": "answer POSTs with JSON instead of SSE streams (default {d.json_response})",
    "workers": "worker processes (stateless HTTP or websocket)",
    "public_url": "this server's public base URL, when behind a proxy",
    "allowed_hosts": "Host headers to accept, comma separated (name:* for any port)",
    "allowed_origins": "browser Origins to accept, comma separated",
    "cors_origins": "Origins allowed by CORS, comma separated ('*' for any)",
    "max_body_size": "largest request body in bytes (default {d.max_body_size}; on stdio, a line: 64 MiB at least)",
    "rate_limit": "requests per second per caller (0: no limit; default {d.rate_limit})",
    "rate_burst": "requests a caller may send at once",
    "retry_interval": "ms before clients resume a broken SSE stream",
    "event_store_size": "events kept for resumable streams (0: off)",
    "shutdown_timeout": "seconds requests in flight get on shutdown (default {d.shutdown_timeout})",
    "max_sessions": "open stateful sessions at most (default {d.max_sessions})",
    "max_sessions_per_caller": "open sessions one verified caller may hold (default: half of "
    "--max-sessions, at most 50)",
    "max_tasks": "MCP tasks kept for all callers (with Redis: all replicas; default {d.max_tasks})",
    "trusted_proxies": "proxy addresses or CIDR ranges ('*' for any) whose X-Forwarded-For "
    "and -Proto are believed, comma separated (default none)",
    "session_idle_timeout": "seconds before an idle session is closed "
    "(default {d.session_idle_timeout})",
    "header_timeout": "seconds a client may take to send request headers "
    "(default {d.header_timeout})",
    "body_timeout": "seconds a client may pause inside a request body (default {d.body_timeout})",
    "redis_url": "Redis for state shared by several replicas (redis://host:6379/0); a password "
    "only in {d.env_prefix}REDIS_URL, never on the command line",
    "log_level": "DEBUG, INFO, WARNING, ... (default {d.log_level})",
    "log_format": "log lines on stderr (default {d.log_format})",
}
CHOICES = {"log_format": ["text", "json"]}


def parse_args(
    spec: Mapping[str, Any], argv: Sequence[str] | None, d: Settings
) -> argparse.Namespace:
    info = spec["server"]
    parser = argparse.ArgumentParser(
        prog=info.get("script") or info["name"],
        description=f"{info.get('title') or info['name']} (MCP server)",
        epilog=f"Every option also reads the environment variable {d.env_prefix}<OPTION>.",
    )
    parser.add_argument(
        "--transport",
        choices=offered(spec),
        help=", ".join(TRANSPORT_HELP[t] for t in offered(spec)) + f" (default {d.transport})",
    )
    helps = dict(HELP)
    if spec.get("auth", {}).get("type") == "oauth":  # (the package carries auth_keys.py)
        from .auth_keys import OAUTH_HELP

        helps.update(OAUTH_HELP)
    if not any(entry.get("task") for entry in spec.get("tools", [])):  # no tasks: no cap
        del helps["max_tasks"]
    for name, text in helps.items():
        default = getattr(Settings, name)
        options: dict[str, Any] = {"help": text.format(d=d), "choices": CHOICES.get(name)}
        if isinstance(default, bool):
            options["action"] = argparse.BooleanOptionalAction
        elif isinstance(default, int | float):
            options["type"] = type(default)
        elif isinstance(default, tuple):
            options["type"] = csv
        parser.add_argument("--" + name.replace("_", "-"), **options)
    return parser.parse_args(argv)


def settings_from(args: argparse.Namespace, base: Settings) -> Settings:
    given = {key: value for key, value in vars(args).items() if value is not None}
    for name in ("redis_url", "jwks_url", "introspection_url", "public_url"):
        flag = "--" + name.replace("_", "-")
        try:
            parts = urlsplit(given[name]) if isinstance(given.get(name), str) else None
        except ValueError as exc:  # an IPv6 host without its ]
            raise ConfigError(f"{flag}: {exc}") from None
        if parts and (parts.password or "password" in dict(parse_qsl(parts.query.lower()))):
            # every user of the machine reads a command line (ps, /proc/PID/cmdline)
            raise ConfigError(
                f"{flag} carries a password, which the process list shows to every user: "
                f"set {base.env_prefix}{name.upper()} in the environment instead"
            )
    return base.updated(given)


def main(
    spec: Mapping[str, Any],
    server_factory: Callable[..., GeneratedServer],
    app_factory: str,
    argv: Sequence[str] | None = None,
) -> None:
    """Run the server. ``app_factory`` (``package.server:create_app``) builds the HTTP app
    in each worker process when there are several."""
    for fd, name in enumerate(("stdin", "stdout", "stderr")):
        if getattr(sys, name) is None:  # fd closed at start (``<&-``): the null device in it
            # (the lowest free fd) before anything else takes it, an event loop's selector
            null = os.open(os.devnull, os.O_RDWR)
            setattr(sys, name, os.fdopen(null, "w" if fd else "r", encoding="utf-8"))
    prog = spec["server"].get("script") or spec["server"]["name"]
    try:
        base = Settings.from_env(spec)
        settings = settings_from(parse_args(spec, argv, base), base)
    except ConfigError as exc:  # a bad setting, by flag or variable: exit 2 as argparse does
        print(f"{prog}: {exc}", file=sys.stderr)
        sys.exit(2)
    configure_logging(settings.log_level, settings.log_format)
    if MISSING_PROPAGATORS:  # dropped before OpenTelemetry read them (__init__.py)
        logger.warning(
            "OTEL_PROPAGATORS: %s not installed, ignored; propagating with %s",
            ", ".join(MISSING_PROPAGATORS),
            os.environ["OTEL_PROPAGATORS"],
        )
    if settings.transport == "stdio":
        setup(spec, "stdio")
        run_stdio(server_factory, settings)
        return
    try:
        if settings.redis_url:
            from .http_app import require_sharing

            require_sharing()
            from .sharing import check_reachable

            check_reachable(spec, settings)  # Redis unreachable at start: one line, exit 1
        from .http_app import create_app

        if settings.workers > 1:  # what each builds, checked once here (without telemetry):
            # a setting it refuses killed every worker, and uvicorn started them again forever
            from .serve import serve_workers

            create_app(spec, server_factory, settings, {**os.environ, "OTEL_SDK_DISABLED": "true"})
            tasks = any(entry.get("task") for entry in spec.get("tools", []))
            notifies = any(spec.get("capabilities", {}).get(key) for key in LISTENED)
            serve_workers(app_factory, settings, tasks=tasks, notifies=notifies)
            return
        from .serve import serve

        app = create_app(spec, server_factory, settings)
        settle()
        serve(app, settings)
    except ConfigError as exc:
        sys.exit(f"{prog}: {exc}")


def run_stdio(server_factory: Callable[..., GeneratedServer], settings: Settings) -> None:
    """Serve on stdin/stdout until EOF, SIGTERM or SIGINT; exit status 0 in each case."""
    try:
        anyio.run(_serve_stdio, server_factory, settings)
    except KeyboardInterrupt:
        pass
    except BaseExceptionGroup as group:
        if group.split(_client_gone)[1] is not None:
            raise  # something other than the client gone
        logger.info("client disconnected; exiting")  # answers were pending: nothing to serve
        # fd 1 to /dev/null, so that interpreter shutdown does not fail flushing a dead pipe
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)


def _client_gone(exc: BaseException) -> bool:
    """A write to a client that left: a closed pipe or socket, a terminal hung up (EIO)."""
    gone = isinstance(exc, (BrokenPipeError, ConnectionResetError))
    return gone or (isinstance(exc, OSError) and exc.errno == errno.EIO)


async def _serve_stdio(server_factory: Callable[..., GeneratedServer], settings: Settings) -> None:
    from . import stdio

    server = server_factory()
    if server.tasks is not None:
        server.tasks.store.cap = settings.max_tasks
    settle()
    async with anyio.create_task_group() as tg:
        if sys.platform != "win32":
            tg.start_soon(_stop_on_signal, tg.cancel_scope)
        try:
            await stdio.serve(server, settings.max_body_size)
        finally:
            _wire_done()
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(flush)
        tg.cancel_scope.cancel()


def _wire_done() -> None:
    """Once serving ends, fd 1 writes to stderr, as while serving: what is exported now (a
    console exporter's spans, logs and metrics) is no message, and the client may read on."""
    with suppress(OSError, ValueError):  # (the client gone: nothing to flush into)
        sys.stdout.flush()
    os.dup2(2, 1)


async def _stop_on_signal(scope: anyio.CancelScope) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for signum in signals:
            logger.info("%s: shutting down", signal.Signals(signum).name)
            # The file and terminal path (stdin not a pipe) blocks in a read that cannot
            # be cancelled: exit after a short grace period.
            timer = threading.Timer(STDIO_SHUTDOWN_GRACE, _exit_now)
            timer.daemon = True
            timer.start()
            scope.cancel()
            return


def _exit_now() -> None:
    logging.shutdown()
    sys.stderr.flush()
    os._exit(0)
