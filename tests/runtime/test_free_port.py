"""``free_port`` hands out listening ports below the kernel's ephemeral range. CI once lost a
server to "address already in use": bind(0) had given it a port that an outgoing connection
then took as its source port before the server bound it."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
import rtkit
import uvicorn
from sse_starlette.sse import AppStatus

from mcpgen.runtime import testing
from mcpgen.runtime.serve import DrainingServer, serve

RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def test_ports_are_distinct_bindable_and_below_the_ephemeral_range() -> None:
    low = int(RANGE.read_text().split()[0]) if RANGE.exists() else 32768
    ports = [testing.free_port() for _ in range(40)]
    assert len(set(ports)) == 40
    assert all(1024 <= port < low for port in ports)
    for port in ports:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))


def test_a_port_someone_listens_on_is_passed_over(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as busy, socket.socket() as idle:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        idle.bind(("127.0.0.1", 0))
        taken, free = busy.getsockname()[1], idle.getsockname()[1]
        idle.close()
        monkeypatch.setattr(testing.random, "sample", lambda ports, k: [taken, free])
        assert testing.free_port() == free


def test_the_serving_line_comes_only_once_the_port_is_bound(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A port in use: uvicorn's error is the last word, no "serving" line before it."""

    async def stop_at_once(self: DrainingServer) -> None:
        pass

    monkeypatch.setattr(DrainingServer, "main_loop", stop_at_once)
    monkeypatch.setattr(AppStatus, "should_exit", False)  # (set by the shutdown, for all)
    caplog.set_level("INFO")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        settings = rtkit.settings(rtkit.make_spec(), port=busy.getsockname()[1])
        with pytest.raises(SystemExit):
            serve(rtkit.app(), settings)
    assert "address already in use" in caplog.text and "serving" not in caplog.text
    port = testing.free_port()
    serve(rtkit.app(), rtkit.settings(rtkit.make_spec(), port=port))
    assert f"serving http on http://127.0.0.1:{port}/mcp" in caplog.text
    caplog.clear()  # a worker of --workers: its server has no line to say, and says none
    DrainingServer(uvicorn.Config(rtkit.app(), port=testing.free_port(), log_config=None)).run()
    assert "Application startup complete" in caplog.text
    assert [r for r in caplog.records if r.name == "mcpgen.runtime.serve"] == []
