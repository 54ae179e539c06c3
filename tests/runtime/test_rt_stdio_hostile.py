"""The stdio transport's cap on requests in flight (``runtime.stdio``) against clumsy or
hostile clients: ids that the SDK takes for one (``7`` and ``"7"``), an id used many times,
a full park while a call in flight waits for the client's answer, large requests, and
the end of input with requests parked. Those that need no server-to-client request run in
both protocol eras: the handshake, and 2026-07-28 (each request carries its envelope)."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest
from rtstdio import INITIALIZE, INITIALIZED, Stdio, call, lines, popen, wait_for, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]
IN_FLIGHT = PARKED = 1024  # runtime.stdio_pending.IN_FLIGHT, PARKED
ERAS = pytest.mark.parametrize("era", ["handshake", "2026-07-28"])
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _started(era: str) -> Stdio:
    """A server process, its connection opened in ``era`` (the first request decides)."""
    stdio = Stdio()
    if era == "handshake":
        stdio.initialize()
    else:
        assert "result" in stdio.call(_call(era, "first", "echo", {"text": "x"}), 60)
    return stdio


def _call(era: str, request_id: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    message = call(request_id, name, arguments)
    if era != "handshake":
        message["params"]["_meta"] = ENVELOPE
    return message


def _cancel(request_id: Any) -> dict[str, Any]:
    params = {"requestId": request_id, "reason": "stop"}
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}


def _echoes(era: str, prefix: str, count: int) -> list[dict[str, Any]]:
    return [_call(era, f"{prefix}{i}", "echo", {"text": "x"}) for i in range(count)]


def _full_park(era: str, marker: Path) -> list[dict[str, Any]]:
    """1,024 calls that take a minute (the last one's start marked), then 1,024 parked."""
    slow = [_call(era, i, "slow", {"seconds": 60}) for i in range(1, IN_FLIGHT)]
    slow.append(_call(era, IN_FLIGHT, "slow", {"seconds": 60, "marker": str(marker)}))
    return [*slow, *_echoes(era, "p", PARKED)]


def _write(stdio: Stdio, messages: list[dict[str, Any]]) -> None:
    assert stdio.process.stdin is not None
    stdio.process.stdin.write(lines(messages))
    stdio.process.stdin.flush()


def _answer(stdio: Stdio, request_id: Any, timeout: float = 10) -> dict[str, Any]:
    """The answer to ``request_id`` (what comes before it skipped)."""
    while True:
        message = stdio.receive(timeout)
        if message.get("id") == request_id and "method" not in message:
            return message


@ERAS
def test_a_cancel_naming_the_id_as_text_frees_the_slot(tmp_path: Path, era: str) -> None:
    """The SDK takes ``"7"`` for ``7`` (``coerce_request_id``): a cancel naming the id as
    text ends call 7, which is never answered. 1,024 such calls cancelled so must leave
    the cap free, not full for ever (every later request parked, never run)."""
    stdio = _started(era)
    try:
        last = tmp_path / "m"
        slow = [_call(era, i, "slow", {"seconds": 60}) for i in range(1, IN_FLIGHT)]
        slow.append(_call(era, IN_FLIGHT, "slow", {"seconds": 60, "marker": str(last)}))
        _write(stdio, slow)
        wait_for(last.with_suffix(".started"))
        _write(stdio, [_cancel(str(i)) for i in range(1, IN_FLIGHT + 1)])
        wait_for(last.with_suffix(".cancelled"))
        answer = stdio.call(_call(era, "after", "echo", {"text": "x"}), 10)
        assert answer["result"]["structuredContent"] == {"text": "x"}, answer
    finally:
        stdio.kill()


@ERAS
def test_one_id_many_times_is_held_by_the_cap(tmp_path: Path, era: str) -> None:
    """The SDK runs a request whose id is already in flight (it overwrites its entry):
    1,500 calls with one id are as many in flight, so past 1,024 they must wait."""
    stdio = _started(era)
    try:
        count = IN_FLIGHT + 476
        markers = [str(tmp_path / f"m{i}") for i in range(count)]
        _write(stdio, [_call(era, "same", "slow", {"seconds": 60, "marker": m}) for m in markers])
        started = lambda: len(list(tmp_path.glob("*.started")))  # noqa: E731
        wait_until(lambda: started() >= IN_FLIGHT, 60)
        time.sleep(2)
        assert started() == IN_FLIGHT, f"{started()} calls run at once"
    finally:
        stdio.kill()


def test_a_full_park_still_reads_the_answer_a_call_waits_for() -> None:
    """``interview`` waits for the client's elicitation answer while 1,023 slow calls fill
    the cap, 1,024 more fill the park and one more is read: reading must not stop there
    (the answer behind it would never be read, ``interview`` never end); the request past
    the park is refused (-32004) rather than held, and ``interview`` goes on at once."""
    stdio = Stdio()
    try:
        asking = {"elicitation": {}, "sampling": {}}
        params = {**INITIALIZE["params"], "capabilities": asking}
        assert stdio.call({**INITIALIZE, "params": params}, 60)["result"]["protocolVersion"]
        stdio.send(INITIALIZED)
        stdio.send(call("interview", "interview", {}))
        asked = _next_request(stdio)
        assert asked["method"] == "elicitation/create", asked
        # the slow calls parked have the ids the server gives its own requests (0, 1, ...)
        slow = [call(f"s{i}", "slow", {"seconds": 60}) for i in range(1, IN_FLIGHT)]
        slow += [call(i, "slow", {"seconds": 60}) for i in range(PARKED)]
        assert asked["id"] in range(PARKED), asked
        _write(stdio, [*slow, call("past", "echo", {"text": "x"})])
        content = {"color": "red", "size": "L"}
        stdio.send({"jsonrpc": "2.0", "id": asked["id"],
                    "result": {"action": "accept", "content": content}})  # fmt: skip
        seen = []
        while not seen or "method" not in seen[-1] or "id" not in seen[-1]:
            seen.append(stdio.receive(10))
        assert seen[-1]["method"] == "sampling/createMessage", seen
        refused = [m for m in seen if m.get("id") == "past"]
        assert refused and refused[0]["error"]["code"] == -32004, seen
    finally:
        stdio.kill()


def _next_request(stdio: Stdio, timeout: float = 10) -> dict[str, Any]:
    """The next request the server sends the client (skipping notifications)."""
    while True:
        message = stdio.receive(timeout)
        if "method" in message and "id" in message:
            return message


@ERAS
def test_end_of_input_with_requests_parked_stops_the_server(tmp_path: Path, era: str) -> None:
    """stdin closed (the host stopping the server) while 1,024 calls that never end fill
    the cap and 1,024 more are parked: the server exits within the grace, not once a call
    in flight ends (here a minute; a call waiting for the gone client, never)."""
    stdio = _started(era)
    try:
        _write(stdio, _full_park(era, tmp_path / "m"))
        wait_for(tmp_path / "m.started")
        started = time.monotonic()
        assert stdio.close(timeout=30) == 0, stdio.stderr.decode()[-3000:]
        assert time.monotonic() - started < 10
        assert b"Traceback" not in stdio.stderr, stdio.stderr.decode()[-3000:]
    finally:
        stdio.kill()


@ERAS
def test_end_of_input_still_runs_the_parked_requests(era: str) -> None:
    """``printf ... | server``: 1,024 calls of a second fill the cap, 1,024 more are parked,
    stdin ends at once: every one is answered before the server exits."""
    stdio = _started(era)
    try:
        slow = [_call(era, i, "slow", {"seconds": 1}) for i in range(IN_FLIGHT)]
        echoes = [_call(era, f"p{i}", "echo", {"text": "x"}) for i in range(PARKED)]
        _write(stdio, [*slow, *echoes])
        assert stdio.close(timeout=60) == 0, stdio.stderr.decode()[-3000:]
        stdio._out.join(10)
        answered = set()
        while not stdio.lines.empty():
            answered.add(stdio.receive(1).get("id"))
        expected = {m["id"] for m in [*slow, *echoes]}
        assert expected <= answered, f"{len(expected - answered)} never answered"
    finally:
        stdio.kill()


def test_the_park_holds_little_of_large_requests() -> None:
    """1,024 slow calls fill the cap, then requests of 200 kB each follow, and the client
    reads nothing: the park stops reading long before it holds 1,024 of them (200 MB of
    the server's memory; 50 GB of 50 MB lines), so the client's writes are held back."""
    stdio = Stdio()
    assert stdio.process.stdin is not None
    stdin, written = stdio.process.stdin, [0]
    padding = "x" * 200_000

    def feed() -> None:
        with suppress(OSError, ValueError):  # (the server killed at the end)
            for i in range(IN_FLIGHT + PARKED + 1):
                message = call(i, "echo", {"text": "x"})
                message["params"]["_meta"] = {"padding": padding}
                stdin.write(lines([message]))
                written[0] += 1

    try:
        stdio.initialize()
        _write(stdio, [call(f"s{i}", "slow", {"seconds": 60}) for i in range(IN_FLIGHT)])
        threading.Thread(target=feed, daemon=True).start()
        seen, deadline = -1, time.monotonic() + 60
        while seen != written[0] and time.monotonic() < deadline:
            seen = written[0]
            time.sleep(2)
        assert written[0] < 200, f"{written[0]} requests of 200 kB read and held"
    finally:
        stdio.kill()


@ERAS
@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("boom", {}),  # the handler raises
        ("limited", {"seconds": 30}),  # the tool's timeout (0.5 s) ends it
        ("nope", {}),  # no such tool
        ("echo", {"text": 5}),  # the arguments break the schema
    ],
)
def test_a_call_that_fails_frees_its_slot(era: str, name: str, arguments: Any) -> None:
    """1,023 slow calls and one that fails fill the cap; the request parked behind them
    runs once the failure is answered."""
    stdio = _started(era)
    try:
        slow = [_call(era, i, "slow", {"seconds": 60}) for i in range(1, IN_FLIGHT)]
        failing = _call(era, "failing", name, arguments)
        _write(stdio, [*slow, failing, _call(era, "parked", "echo", {"text": "x"})])
        assert _answer(stdio, "parked", 15)["result"]["structuredContent"] == {"text": "x"}
    finally:
        stdio.kill()


def test_a_cancel_naming_true_drops_no_parked_request() -> None:
    """``true`` is no request id (the SDK ignores such a cancel): parked request 1, which
    ``True == 1`` matched, still runs."""
    stdio = _started("handshake")
    try:
        slow = [call(f"s{i}", "slow", {"seconds": 2}) for i in range(IN_FLIGHT)]
        _write(stdio, [*slow, call(1, "echo", {"text": "x"}), _cancel(True)])
        assert _answer(stdio, 1, 20)["result"]["structuredContent"] == {"text": "x"}
    finally:
        stdio.kill()


def test_a_question_withdrawn_no_longer_opens_the_park() -> None:
    """``interview`` asks the client, then is cancelled: the server withdraws its question
    (a cancel of its own), so a full park stops reading again (the request past it waits
    and runs) rather than refusing (-32004) as while an answer was awaited."""
    stdio = Stdio()
    try:
        params = {**INITIALIZE["params"], "capabilities": {"elicitation": {}}}
        assert stdio.call({**INITIALIZE, "params": params}, 60)["result"]["protocolVersion"]
        stdio.send(INITIALIZED)
        stdio.send(call("interview", "interview", {}))
        asked = _next_request(stdio)
        stdio.send(_cancel("interview"))
        while (withdrawn := stdio.receive(10)).get("method") != "notifications/cancelled":
            pass
        assert withdrawn["params"]["requestId"] == asked["id"], withdrawn
        slow = [call(i, "slow", {"seconds": 3}) for i in range(IN_FLIGHT)]
        echoes = [call(f"p{i}", "echo", {"text": "x"}) for i in range(PARKED)]
        _write(stdio, [*slow, *echoes, call("past", "echo", {"text": "x"})])
        assert _answer(stdio, "past", 30)["result"]["structuredContent"] == {"text": "x"}
    finally:
        stdio.kill()


@ERAS
def test_a_ping_behind_the_cap_is_answered_at_once_as_below_it(era: str) -> None:
    """1,024 slow calls fill the cap and one more is parked: a ping (how a host checks that
    the server lives) is answered at once, not parked behind them for a minute, and as the
    SDK answers it below the cap (the runtime answered ``{}`` itself, even to a ping the
    SDK refuses in this era: with the 2026-07-28 envelope on a handshake connection, any
    on a 2026-07-28 one)."""
    stdio = _started(era)
    pings = [
        {"jsonrpc": "2.0", "id": "bare", "method": "ping"},
        {"jsonrpc": "2.0", "id": "enveloped", "method": "ping", "params": {"_meta": ENVELOPE}},
    ]
    try:
        below = [stdio.call(ping, 10) for ping in pings]
        slow = [_call(era, i, "slow", {"seconds": 60}) for i in range(IN_FLIGHT)]
        _write(stdio, [*slow, _call(era, "parked", "echo", {"text": "x"})])
        assert [stdio.call(ping, 10) for ping in pings] == below
        refused = [False, True] if era == "handshake" else [True, True]  # (2026: no ping)
        assert ["error" in answer for answer in below] == refused, below
    finally:
        stdio.kill()


@ERAS
def test_end_of_input_behind_a_full_park_stops_the_server(tmp_path: Path, era: str) -> None:
    """As above, but with the pipe filled past the park too (reading stops there, the end
    of input unread behind it): the server still exits within the grace."""
    stdio = _started(era)
    assert stdio.process.stdin is not None
    try:
        _write(stdio, _full_park(era, tmp_path / "m"))
        wait_for(tmp_path / "m.started")
        fd, refused = stdio.process.stdin.fileno(), 0
        os.set_blocking(fd, False)
        more = lines(_echoes(era, "q", 100))
        while refused < 5:  # until the pipe stays full: the server reads no more
            try:
                os.write(fd, more)
                refused = 0
            except BlockingIOError:
                refused += 1
                time.sleep(0.2)
        started = time.monotonic()
        assert stdio.close(timeout=30) == 0, stdio.stderr.decode()[-3000:]
        assert time.monotonic() - started < 10
        assert b"Traceback" not in stdio.stderr, stdio.stderr.decode()[-3000:]
    finally:
        stdio.kill()


def test_a_terminal_hanging_up_behind_a_full_park_stops_the_server(tmp_path: Path) -> None:
    """stdin a terminal (the SDK's transport) that hangs up behind a full park, lines
    unread: the server sees the hang-up and stops within the grace, as on a pipe; it
    waited for a call in flight to end (here a minute). (A file is no client that hangs
    up: ``test_rt_stdio.test_stdio_from_a_file_answers_all_to_a_client_slow_to_read``.)"""
    import pty
    import tty

    controller, terminal = pty.openpty()
    tty.setraw(terminal)  # (no echo, no line editing: the bytes as written)
    process = popen(stdin=terminal, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    os.close(terminal)
    os.set_blocking(controller, False)
    data = lines([INITIALIZE, INITIALIZED, *_full_park("handshake", tmp_path / "m")])
    data += lines(_echoes("handshake", "q", 3000))  # (more than a read and the terminal hold)
    refused, started = 0, tmp_path / "m.started"
    try:
        while data and not (started.exists() and refused >= 5):  # until the server reads no more
            try:
                data, refused = data[os.write(controller, data) :], 0
            except BlockingIOError:
                refused += 1
                time.sleep(0.2)
        assert data, "the server read everything: no full park"
        os.close(controller)
        began = time.monotonic()
        assert process.wait(90) == 0
        assert time.monotonic() - began < 15
        assert process.stderr is not None and b"Traceback" not in process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("source", ["file", "pipe"])
def test_calls_cut_off_at_the_end_of_input_are_answered_to_a_client_slow_to_read(
    tmp_path: Path, source: str
) -> None:
    """stdin a file (the SDK's transport writing) or a pipe, 1,000 calls in flight at its
    end, the client reading only 2 s after they were cancelled: each is answered
    "Connection closed". (The SDK gives each such answer 1 s to be taken, then drops it
    with a warning: under load, ~1,000 lines on stderr, which hung the server above.)"""
    marker, requests = tmp_path / "m", tmp_path / "requests.jsonl"
    calls = [call(i, "slow", {"seconds": 60}) for i in range(1, 1000)]
    calls.append(call(1000, "slow", {"seconds": 60, "marker": str(marker)}))
    requests.write_bytes(lines([INITIALIZE, INITIALIZED, *calls]))
    with (
        requests.open("rb") as file,
        subprocess.Popen(["cat", requests], stdout=subprocess.PIPE) as cat,
    ):
        stdin = cat.stdout if source == "pipe" else file
        process = popen(stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        wait_for(marker.with_suffix(".cancelled"), 60)
        time.sleep(2)  # (the answers, ~100 kB, fill the pipe)
        out, err = process.communicate(timeout=60)
    assert process.returncode == 0 and b"gave up" not in err, err.decode()[-3000:]
    closed = [json.loads(line) for line in out.splitlines()][1:]
    assert sorted(a["id"] for a in closed) == list(range(1, 1001))
    assert {a["error"]["message"] for a in closed} == {"Connection closed"}
