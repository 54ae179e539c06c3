"""Settings (manifest, then ``FIXTURE_*`` environment variables, then flags), the errors a
bad setting gets, the warnings a risky one gets, and the server's log lines."""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
import rtkit
from rtbridge import http_client, running

from mcpgen.runtime import cli
from mcpgen.runtime.errors import ConfigError
from mcpgen.runtime.http_guard import HEALTH_PATH, WELL_KNOWN
from mcpgen.runtime.http_legacy import MESSAGES_PATH
from mcpgen.runtime.logs import JsonFormatter, configure_logging
from mcpgen.runtime.prometheus import METRICS_PATH
from mcpgen.runtime.serve import serve_workers
from mcpgen.runtime.settings import Settings, own_route

P = rtkit.PREFIX
pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def root_logging() -> Iterator[None]:
    """``configure_logging`` replaces the root handlers: put pytest's back afterwards."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


@pytest.fixture
def kept_environ() -> Iterator[None]:
    """``serve_workers`` exports the settings for its workers (``os.environ.update``): put
    the environment back, or every later server process reads them (an HTTP port, say)."""
    saved = dict(os.environ)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def test_settings_travel_through_the_environment() -> None:
    spec = rtkit.make_spec()
    settings = replace(
        Settings.defaults(spec),
        transport="http",
        stateless=True,
        workers=3,
        cors_origins=("https://a.example", "https://b.example"),
        rate_limit=2.5,
        public_url="https://mcp.example.com",
        jwks_file="/keys/jwks.json",
    )
    assert Settings.from_env(spec, settings.to_env()) == settings


def test_the_environment_overrides_the_manifest_and_flags_the_environment() -> None:
    spec = rtkit.make_spec(port=8123, rate_limit=3, allowed_hosts=["a.example"])
    defaults = Settings.defaults(spec)
    assert (defaults.port, defaults.rate_limit, defaults.allowed_hosts) == (
        8123,
        3.0,
        ("a.example",),
    )
    env = Settings.from_env(spec, {P + "PORT": "9001", P + "ALLOWED_HOSTS": "b.example, c:*"})
    assert env.port == 9001 and env.allowed_hosts == ("b.example", "c:*")
    assert env.rate_limit == 3.0  # untouched settings keep the manifest's value
    flags = cli.settings_from(cli.parse_args(spec, ["--port", "9002", "--stateless"], env), env)
    assert (flags.port, flags.stateless, flags.allowed_hosts) == (9002, True, ("b.example", "c:*"))


def test_the_help_shows_the_defaults_the_environment_sets(capsys: Any) -> None:
    spec = rtkit.make_spec()
    env = Settings.from_env(spec, {P + "LOG_LEVEL": "DEBUG", P + "LOG_FORMAT": "json"})
    with pytest.raises(SystemExit):
        cli.parse_args(spec, ["--help"], env)
    shown = " ".join(capsys.readouterr().out.split())
    assert "(default DEBUG)" in shown and "(default json)" in shown


def test_max_tasks_is_a_flag_only_of_servers_with_task_tools(capsys: Any) -> None:
    """``--max-tasks`` showed in the help of every generated server (and was taken), though
    it means something only where a tool runs as a task."""
    spec = rtkit.make_spec()
    env = Settings.from_env(spec, {})
    with pytest.raises(SystemExit):
        cli.parse_args(spec, ["--help"], env)
    assert "--max-tasks" not in capsys.readouterr().out
    with pytest.raises(SystemExit):  # argparse: unrecognized arguments
        cli.parse_args(spec, ["--max-tasks", "5"], env)
    assert "--max-tasks" in capsys.readouterr().err
    tasks = {**spec, "tools": [{**entry, "task": "optional"} for entry in spec["tools"][:1]]}
    assert tasks["tools"], "the spec needs a tool"
    flags = cli.settings_from(cli.parse_args(tasks, ["--max-tasks", "5"], env), env)
    assert flags.max_tasks == 5


@pytest.mark.parametrize(
    "url", ["redis://:hunter2-pw@r:6379/0", "redis://r:6379/0?db=1&password=hunter2-pw"]
)
def test_a_password_in_a_url_flag_is_refused_in_either_form(url: str) -> None:
    """redis-py reads ``?password=`` as well as the userinfo's: both are on the process
    list (the query form passed the check)."""
    spec = rtkit.make_spec()
    settings = Settings.from_env(spec, {})
    with pytest.raises(ConfigError, match="process list") as caught:
        cli.settings_from(cli.parse_args(spec, ["--redis-url", url], settings), settings)
    assert "hunter2" not in str(caught.value)
    with pytest.raises(ConfigError, match="--redis-url: Invalid IPv6 URL"):  # (a traceback)
        cli.settings_from(
            cli.parse_args(spec, ["--redis-url", "redis://[::1/0"], settings), settings
        )


def test_keys_from_the_environment_replace_the_manifests() -> None:
    spec = rtkit.make_spec()
    spec["auth"]["jwksUrl"] = "https://auth.fixture.test/jwks.json"
    settings = Settings.from_env(spec, {P + "JWKS_FILE": "/k.json"})
    assert (settings.jwks_file, settings.jwks_url) == ("/k.json", None)


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("STATELESS", "perhaps", "FIXTURE_STATELESS: cannot read 'perhaps'"),
        ("PORT", "eighty", "FIXTURE_PORT: cannot read 'eighty'"),
        ("RATE_LIMIT", "fast", "FIXTURE_RATE_LIMIT: cannot read 'fast'"),
        ("TRANSPORT", "pigeon", "unknown transport 'pigeon'"),
        ("PATH", "mcp", "must start with '/'"),
        # a route of the server's own: /healthz was served without authentication
        ("PATH", "/healthz", "is a route of the server's own"),
        ("PATH", "/.well-known/oauth-protected-resource/x", "is a route of the server's own"),
        ("LOG_FORMAT", "xml", "log format must be text or json"),
        ("LOG_LEVEL", "verbose", "log level must be DEBUG, INFO, WARNING, ERROR or CRITICAL"),
        ("LOG_LEVEL", "warn", "not 'warn'"),  # (logging knows it, uvicorn does not)
        ("WORKERS", "0", "must be positive"),
        ("MAX_BODY_SIZE", "0", "must be positive"),
        ("RATE_LIMIT", "-1", "rate limit >= 0"),
        ("BODY_TIMEOUT", "0", "timeouts must be positive"),
        # empty (a compose file's unset ${HOST}): the host listened on every interface, the
        # path and the log level were an AttributeError's traceback
        ("HOST", "", "host must not be empty"),
        ("PATH", "", "path must not be empty"),
        ("LOG_LEVEL", "", "log level must not be empty"),
        ("TRANSPORT", "", "transport must not be empty"),
    ],
)
def test_bad_settings_are_reported(name: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError) as error:
        Settings.from_env(rtkit.make_spec(), {P + name: value})
    assert message in str(error.value)


def test_the_servers_own_routes_are_every_route_it_adds() -> None:
    assert all(own_route(p) for p in (HEALTH_PATH, WELL_KNOWN, METRICS_PATH, MESSAGES_PATH))


def test_a_bad_setting_stops_the_command_line_with_its_name(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit status 2, as for a bad flag (argparse): bad input, one line."""
    monkeypatch.setenv(P + "PORT", "eighty")
    spec = rtkit.make_spec()
    with pytest.raises(SystemExit) as stopped:
        cli.main(spec, rtkit.factory(spec), "rtserve:create_app", ["--transport", "http"])
    assert stopped.value.code == 2
    assert capsys.readouterr().err == "fixture: FIXTURE_PORT: cannot read 'eighty'\n"


def test_an_unknown_log_level_stops_the_command_line_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--log-level trace`` was a ValueError's traceback (``warn``, uvicorn's KeyError)."""
    spec = rtkit.make_spec()
    with pytest.raises(SystemExit) as stopped:
        cli.main(spec, rtkit.factory(spec), "rtserve:create_app", ["--log-level", "trace"])
    assert stopped.value.code == 2
    assert capsys.readouterr().err == (
        "fixture: log level must be DEBUG, INFO, WARNING, ERROR or CRITICAL, not 'trace'\n"
    )


def test_an_empty_host_flag_stops_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    """``--host ''`` listened on 0.0.0.0 and [::] (uvicorn's "every interface")."""
    spec = rtkit.make_spec()
    with pytest.raises(SystemExit) as stopped:
        cli.main(spec, rtkit.factory(spec), "rtserve:create_app", ["--host", ""])
    assert stopped.value.code == 2
    assert capsys.readouterr().err == "fixture: host must not be empty\n"


def test_missing_keys_stop_the_command_line(
    monkeypatch: pytest.MonkeyPatch, root_logging: None
) -> None:
    monkeypatch.delenv(rtkit.KEYS_ENV, raising=False)
    spec = rtkit.make_spec("bearer")
    with pytest.raises(SystemExit) as stopped:
        cli.main(spec, rtkit.factory(spec), "rtserve:create_app", ["--transport", "http"])
    assert f"set {rtkit.KEYS_ENV}" in str(stopped.value.code)


@pytest.mark.parametrize("flags", [["--no-stateless"], ["--transport", "sse"]])
def test_several_workers_need_stateless_http(flags: list[str], root_logging: None) -> None:
    spec = rtkit.make_spec("none")
    argv = ["--transport", "http", *flags, "--workers", "2"]
    with pytest.raises(SystemExit) as stopped:
        cli.main(spec, rtkit.factory(spec), "rtserve:create_app", argv)
    assert "several workers need stateless HTTP" in str(stopped.value.code)
    with pytest.raises(ConfigError, match="stateless"):
        serve_workers("rtserve:create_app", rtkit.settings(spec, "http", workers=2))


def test_several_workers_without_redis_refuse_task_tools(
    monkeypatch: pytest.MonkeyPatch, root_logging: None, kept_environ: None
) -> None:
    """A task lives in the worker that ran it: with two workers and no Redis, tasks/get
    answered "Unknown task" whenever it reached the other one. Refused at start instead."""
    import uvicorn

    started: list[object] = []
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: started.append(a))
    spec = rtkit.make_spec("none")
    spec["tools"][0]["task"] = "optional"
    argv = ["--transport", "http", "--stateless", "--workers", "2"]
    with pytest.raises(SystemExit) as stopped:
        cli.main(spec, rtkit.factory(spec), "rtserve:create_app", argv)
    assert "tasks" in str(stopped.value.code) and "--workers" in str(stopped.value.code)
    assert started == []
    del spec["tools"][0]["task"]  # without task tools, the workers start
    cli.main(spec, rtkit.factory(spec), "rtserve:create_app", argv)
    assert len(started) == 1


@pytest.mark.parametrize("capability", ["toolsListChanged", "resourcesSubscribe"])
def test_several_workers_without_redis_refuse_change_notifications(
    monkeypatch: pytest.MonkeyPatch, root_logging: None, kept_environ: None, capability: str
) -> None:
    """A change notification raised in one worker reached only that worker's listen streams
    (and subscribed sessions): a client listening on another never heard it (two workers,
    streams on each, one list_changed: 2 of 4 heard). Refused at start, as tasks are."""
    import uvicorn

    started: list[object] = []
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: started.append(a))
    spec = rtkit.make_spec("none")
    spec["capabilities"][capability] = True
    argv = ["--transport", "http", "--stateless", "--workers", "2"]
    with pytest.raises(SystemExit) as stopped:
        cli.main(spec, rtkit.factory(spec), "rtserve:create_app", argv)
    assert "change notifications" in str(stopped.value.code) and "Redis" in str(stopped.value.code)
    assert started == []
    shared = {"redis_url": "redis://r", "state_secret": "s" * 32}
    settings = rtkit.settings(spec, "http", workers=2, stateless=True, **shared)
    serve_workers("rtserve:create_app", settings, notifies=True)  # Redis carries them
    assert len(started) == 1
    os.environ.pop(P + "REDIS_URL")  # exported for the workers (kept_environ restores all)
    del spec["capabilities"][capability]  # nothing to notify: the workers start
    cli.main(spec, rtkit.factory(spec), "rtserve:create_app", argv)
    assert len(started) == 2


@pytest.mark.parametrize(
    ("auth", "variable", "value", "said"),
    [
        ("none", P + "STATE_SECRET", "short", "at least 32 characters"),
        ("bearer", rtkit.KEYS_ENV, "", f"set {rtkit.KEYS_ENV}"),
    ],
)
def test_several_workers_refuse_a_setting_their_app_refuses_before_any_starts(
    monkeypatch: pytest.MonkeyPatch,
    root_logging: None,
    kept_environ: None,
    auth: str,
    variable: str,
    value: str,
    said: str,
) -> None:
    """Each worker builds its app from the settings: one the app refuses (a short
    STATE_SECRET, missing keys) killed every worker with a traceback, and uvicorn started
    them again, forever, the server never listening nor exiting. Refused once at start."""
    import uvicorn

    started: list[object] = []
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: started.append(a))
    monkeypatch.setenv(variable, value)
    spec = rtkit.make_spec(auth)
    argv = ["--transport", "http", "--stateless", "--workers", "2"]
    with pytest.raises(SystemExit) as stopped:
        cli.main(spec, rtkit.factory(spec), "rtserve:create_app", argv)
    assert said in str(stopped.value.code)
    assert started == []


def test_several_workers_parent_checks_their_app_without_telemetry(
    monkeypatch: pytest.MonkeyPatch, root_logging: None, kept_environ: None
) -> None:
    """The parent builds the workers' app only to check it: no telemetry of its own (it
    would export, and say it does, for a process that serves nothing)."""
    import uvicorn

    from mcpgen.runtime import telemetry

    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: None)
    monkeypatch.setattr(telemetry, "ACTIVE", None)
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "console")
    spec = rtkit.make_spec("none")
    argv = ["--transport", "http", "--stateless", "--workers", "2"]
    cli.main(spec, rtkit.factory(spec), "rtserve:create_app", argv)
    assert telemetry.ACTIVE is None


def test_several_workers_without_redis_warn_that_the_rate_limit_multiplies(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, kept_environ: None
) -> None:
    """Each worker keeps its own token buckets: four workers and ``--rate-limit 20`` let
    one caller send 80 requests a second. Said at start (it was not)."""
    import uvicorn

    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: None)
    spec = rtkit.make_spec("none")
    settings = rtkit.settings(spec, "http", workers=4, stateless=True, rate_limit=20.0)
    with caplog.at_level("WARNING"):
        serve_workers("rtserve:create_app", settings)
    assert any("4 times 20 requests" in r.getMessage() for r in caplog.records), caplog.text
    caplog.clear()
    serve_workers("rtserve:create_app", rtkit.settings(spec, "http", workers=4, stateless=True))
    assert not caplog.records


def test_oauth_flags_only_for_oauth_servers() -> None:
    oauth, bearer = rtkit.make_spec(), rtkit.make_spec("bearer")
    parsed = cli.parse_args(oauth, ["--jwks-url", "https://k"], Settings.defaults(oauth))
    assert parsed.jwks_url == "https://k"
    with pytest.raises(SystemExit):
        cli.parse_args(bearer, ["--jwks-url", "https://k"], Settings.defaults(bearer))


def test_json_log_lines() -> None:
    record = logging.LogRecord("x", logging.WARNING, __file__, 1, "refused %s", ("it",), None)
    record.path = "/mcp"
    data = json.loads(JsonFormatter().format(record))
    assert data["level"] == "warning" and data["logger"] == "x"
    assert data["message"] == "refused it"
    assert data["path"] == "/mcp"
    assert data["time"].endswith("Z")


def test_json_log_lines_of_uvicorn_access_and_exceptions() -> None:
    args = ("127.0.0.1:5000", "POST", "/mcp", "1.1", 200)
    access = logging.LogRecord(
        "uvicorn.access", logging.INFO, __file__, 1, "%s %s %s %s %d", args, None
    )
    data = json.loads(JsonFormatter().format(access))
    assert (data["method"], data["path"], data["status"]) == ("POST", "/mcp", 200)
    try:
        raise ValueError("bad")
    except ValueError:
        failed = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed", (), sys.exc_info())
    assert "ValueError: bad" in json.loads(JsonFormatter().format(failed))["exception"]


def test_configure_logging_writes_json_to_stderr(
    root_logging: None, capsys: pytest.CaptureFixture[str]
) -> None:
    configure_logging("info", "json")
    logging.getLogger("mcpgen.test").info("hello %s", "there", extra={"who": "me"})
    logging.getLogger("httpx2").info("GET https://api.example/?key=secret")  # kept quiet
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = [json.loads(line) for line in captured.err.splitlines()]
    assert [(line["message"], line["who"]) for line in lines] == [("hello there", "me")]


def test_no_auth_off_localhost_logs_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        rtkit.app(rtkit.make_spec("none"), host="0.0.0.0")
    assert "without authentication" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        rtkit.app(rtkit.make_spec("none"))
    assert "without authentication" not in caplog.text


def test_no_allowed_hosts_off_localhost_logs_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        rtkit.app(host="0.0.0.0")
    assert "FIXTURE_ALLOWED_HOSTS" in caplog.text


@pytest.mark.anyio
async def test_allowed_hosts_off_localhost() -> None:
    """Bound to every interface with allowed hosts: only those Host headers are served
    (localhost is no longer implied)."""
    app = rtkit.app(
        transport="http-json", host="0.0.0.0", allowed_hosts=("mcp.example.com", "edge:*")
    )
    statuses: dict[str, int] = {}
    async with running(app), http_client(app) as http:
        for host in ("mcp.example.com", "edge:8443", "localhost:8000", "edge:x", "evil.example"):
            headers: dict[str, Any] = {"Host": host, **rtkit.credentials(rtkit.make_spec())}
            response = await http.post("/mcp", json=INIT, headers={**POST, **headers})
            statuses[host] = response.status_code
    assert statuses == {
        "mcp.example.com": 200,
        "edge:8443": 200,
        "localhost:8000": 421,
        "edge:x": 421,
        "evil.example": 421,
    }


INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "t", "version": "0"}},
}  # fmt: skip
POST = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
