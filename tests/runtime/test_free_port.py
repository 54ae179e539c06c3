"""``free_port`` hands out listening ports below the kernel's ephemeral range. CI once lost a
server to "address already in use": bind(0) had given it a port that an outgoing connection
then took as its source port before the server bound it."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from mcpgen.runtime import testing

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
