"""The stdio transport's life: the fixture server process ends with status 0 at end of
input, on SIGTERM, and when its client vanishes mid-call; it holds back when the client
does not read; it serves socket pairs (what Node hosts give) and falls back to the SDK's
transport for a regular file."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx2
import pytest
from rtstdio import (
    INITIALIZE,
    INITIALIZED,
    Stdio,
    call,
    cleaned_up,
    lines,
    popen,
    wait_for,
    wait_until,
)

from mcpgen.runtime.testing import free_port

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]
POSIX = pytest.mark.skipif(sys.platform == "win32", reason="POSIX pipes and signals")


def test_stdio_exits_cleanly_at_end_of_input() -> None:
    process = popen(stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = process.communicate(lines([INITIALIZE]), timeout=60)
    assert process.returncode == 0, err.decode()[-3000:]
    assert json.loads(out.splitlines()[0])["id"] == 0
    assert b"Traceback" not in err


@POSIX
@pytest.mark.parametrize("closed", [0, 1], ids=["stdin-closed", "stdout-closed"])
def test_stdio_with_a_standard_stream_closed_exits_cleanly(closed: int) -> None:
    """``server <&-`` is end of input; ``server >&-`` answers into nothing: status 0 both."""
    pipes = {"stdin": subprocess.PIPE, "stderr": subprocess.PIPE}
    process = popen(**pipes, preexec_fn=lambda: _close(closed))
    _, err = process.communicate(lines([INITIALIZE]) if closed else None, timeout=60)
    assert process.returncode == 0 and b"Traceback" not in err, err.decode()[-3000:]


@POSIX
def test_http_with_the_standard_streams_closed_serves() -> None:
    port = free_port()
    flags = ("--transport", "http", "--port", str(port))
    process = popen(*flags, stderr=subprocess.PIPE, preexec_fn=lambda: _close(0, 1))
    try:
        wait_until(lambda: _answers(port), 60)
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=30)  # (uvicorn ends raising SIGTERM again)
    assert b"Finished server process" in err and b"Traceback" not in err, err.decode()[-3000:]


def _close(*fds: int) -> None:
    for fd in fds:
        os.close(fd)


def _answers(port: int) -> bool:
    try:
        return httpx2.get(f"http://127.0.0.1:{port}/mcp", timeout=2).status_code > 0
    except httpx2.HTTPError:
        return False


@pytest.mark.parametrize("stdin", ["pipe", "file"])
def test_stdio_answers_what_it_read_before_end_of_input(tmp_path: Path, stdin: str) -> None:
    """Requests written all at once and stdin closed (``printf ... | server``, or
    ``server < requests.jsonl``, which the SDK's transport serves): every one is answered
    before the server exits (the SDK cancels what is in flight at end of input)."""
    slow = call(1, "slow", {"seconds": 0.5, "marker": str(tmp_path / "m")})
    echoes = [call(i, "echo", {"text": str(i)}) for i in range(2, 12)]
    listing = {"jsonrpc": "2.0", "id": 12, "method": "tools/list"}
    requests = lines([INITIALIZE, INITIALIZED, slow, *echoes, listing])
    if stdin == "pipe":
        process = popen(stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = process.communicate(requests, timeout=60)
    else:
        (tmp_path / "requests.jsonl").write_bytes(requests)
        with (tmp_path / "requests.jsonl").open("rb") as file:
            process = popen(stdin=file, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err.decode()[-3000:]
    answered = {json.loads(line)["id"] for line in out.splitlines()}
    assert answered == set(range(13)), err.decode()[-3000:]


@POSIX
def test_stdio_exits_cleanly_on_sigterm() -> None:
    process = popen(stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(lines([INITIALIZE]))
        process.stdin.flush()
        assert json.loads(process.stdout.readline())["id"] == 0  # serving, stdin still open
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=15) == 0
    finally:
        if process.poll() is None:
            process.kill()
        process.stdin.close()
        process.stdout.close()


def test_stdio_client_that_disconnects_mid_call(tmp_path: Path) -> None:
    """stdin closed while a handler sleeps: the server cancels it, runs its cleanup and
    exits 0 without a traceback."""
    server = Stdio()
    try:
        server.initialize()
        marker = tmp_path / "gone"
        server.send(call(7, "slow", {"seconds": 60, "marker": str(marker)}))
        wait_for(marker.with_suffix(".started"))
        started = time.monotonic()
        assert server.close() == 0, server.stderr.decode()[-3000:]
        assert time.monotonic() - started < 10
        assert b"Traceback" not in server.stderr, server.stderr.decode()[-3000:]
        assert cleaned_up(marker, 5)
    finally:
        server.kill()


def test_stdio_client_that_vanishes_with_answers_pending(tmp_path: Path) -> None:
    """Both pipes closed (the client process died) while answers are still to be written:
    the server exits by itself, without a traceback."""
    process = popen(stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdin and process.stdout and process.stderr
    try:
        process.stdin.write(lines([INITIALIZE]))
        process.stdin.flush()
        assert json.loads(process.stdout.readline())["id"] == 0
        slow = [
            call(i, "slow", {"seconds": 0.3, "marker": str(tmp_path / f"m{i}")}) for i in range(5)
        ]
        process.stdin.write(lines([INITIALIZED, *slow]))
        process.stdin.flush()
        wait_for(tmp_path / "m4.started")
        process.stdout.close()
        process.stdin.close()
        process.wait(timeout=20)
        err = process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, err.decode()[-3000:]
    assert b"Traceback" not in err, err.decode()[-3000:]


@POSIX
def test_stdio_holds_back_when_the_client_does_not_read() -> None:
    """6 MB of answers to a client that reads nothing for a second (the pipe holds 64 KiB):
    the server's writes wait for the pipe, nothing fails, every answer arrives whole."""
    process = popen(stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdin and process.stdout
    text = "x" * 20_000
    calls = [call(i, "echo", {"text": text}) for i in range(1, 301)]
    stdin = process.stdin
    feeding = threading.Thread(
        target=lambda: stdin.write(lines([INITIALIZE, INITIALIZED, *calls])), daemon=True
    )
    try:
        feeding.start()
        time.sleep(1.0)
        # stdin stays open until the last answer: end of input cancels calls in flight
        answers = [json.loads(process.stdout.readline()) for _ in range(301)]
        feeding.join(timeout=30)
        stdin.close()
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
    results = {a["id"]: a["result"] for a in answers if a["id"] != 0}
    assert sorted(results) == list(range(1, 301))
    assert all(r["structuredContent"] == {"text": text} for r in results.values())


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="CPU time read from /proc")
def test_stdio_stops_reading_while_its_answers_wait() -> None:
    """A client that writes 6,000 requests and reads nothing: the server stops reading once
    1,024 wait to be answered (its memory bounded, the client's writes held back by the
    pipe), and waits without spinning the CPU; once read, every request is answered."""
    process = popen(stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdin and process.stdout
    stdin, count, written = process.stdin, 6000, [0]

    def feed() -> None:
        stdin.write(lines([INITIALIZE, INITIALIZED]))
        for i in range(1, count + 1):
            stdin.write(lines([call(i, "echo", {"text": "x" * 1000})]))
            written[0] = i
        stdin.flush()

    feeding = threading.Thread(target=feed, daemon=True)
    try:
        feeding.start()
        seen, deadline = -1, time.monotonic() + 60
        while seen != written[0] and written[0] < count and time.monotonic() < deadline:
            seen = written[0]
            time.sleep(2)
        assert written[0] < count / 2, "the server read every request while none was answered"
        # a quiet second among ten: one still catching up on a loaded machine is no spin,
        # while a spinning server gets a share of a core in every window
        used = []
        for _ in range(10):
            before = _cpu_seconds(process.pid)
            time.sleep(1)
            used.append(_cpu_seconds(process.pid) - before)
            if used[-1] < 0.03:
                break
        assert min(used) < 0.03, f"the server spins while it waits: {used}"
        answers = [json.loads(process.stdout.readline()) for _ in range(count + 1)]
        feeding.join(timeout=30)
        stdin.close()
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
    assert sorted(a["id"] for a in answers) == list(range(count + 1))


def test_stdio_from_a_file_answers_all_to_a_client_slow_to_read(tmp_path: Path) -> None:
    """``server < requests.jsonl`` (the SDK's transport writing), its client reading only
    after 5 s: the file's end comes when at most 1,024 requests wait, so none is cancelled
    at end of input (all 20,000 were read at once, and those unanswered 2 s later lost)."""
    count = 20_000
    requests = tmp_path / "requests.jsonl"
    calls = [call(i, "echo", {"text": "x"}) for i in range(1, count + 1)]
    requests.write_bytes(lines([INITIALIZE, INITIALIZED, *calls]))
    with requests.open("rb") as stdin:
        process = popen(stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        time.sleep(5)
        out, _ = process.communicate(timeout=90)
    assert process.returncode == 0
    assert sorted(json.loads(line)["id"] for line in out.splitlines()) == list(range(count + 1))


@POSIX
def test_stdio_over_sockets() -> None:
    """Hosts written in Node (libuv) give a child socket pairs, not pipes, as stdin and
    stdout: the event-loop transport serves them too."""
    ours_in, theirs_in = socket.socketpair()
    ours_out, theirs_out = socket.socketpair()
    process = popen(stdin=theirs_in.fileno(), stdout=theirs_out.fileno(), stderr=subprocess.DEVNULL)
    theirs_in.close()
    theirs_out.close()
    try:
        ours_in.sendall(lines([INITIALIZE, call(1, "echo", {"text": "hi"})]))
        ours_in.shutdown(socket.SHUT_WR)
        with ours_out.makefile("rb") as wire:
            answers = [json.loads(line) for line in wire]
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
        ours_in.close()
        ours_out.close()
    assert [a["id"] for a in answers] == [0, 1]
    assert answers[1]["result"]["structuredContent"] == {"text": "hi"}


def test_stdio_from_a_file_falls_back_to_the_sdk_transport(tmp_path: Path) -> None:
    """A regular file cannot be read by an asyncio pipe transport: the SDK's transport
    serves it."""
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(lines([INITIALIZE]))
    with requests.open("rb") as stdin:
        process = popen(stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err.decode()[-3000:]
    answers = [json.loads(line) for line in out.splitlines()]
    assert [a["id"] for a in answers] == [0]
    assert answers[0]["result"]["serverInfo"]["name"] == "fixture"


def test_stdio_from_a_file_answers_lines_it_cannot_read(tmp_path: Path) -> None:
    """The SDK's transport drops a line that is no JSON-RPC message: served from a file
    (as on Windows), such lines are answered -32700 or -32600 as on pipes, with the id when
    there is one (null for an id that is an object, true or null); a malformed response is
    not answered."""
    unreadable = [
        (b"{not json", -32700, None),
        (b'{"jsonrpc":"2.0","id":1,"meth', -32700, None),
        (b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":"\\ud800"}}', -32700, None),
        (b"[1,2]", -32600, None),
        (b'{"jsonrpc":"2.0","id":2}', -32600, 2),
        (b'{"jsonrpc":"1.0","id":"x","method":"tools/list"}', -32600, "x"),
        (b'{"jsonrpc":"2.0","id":6,"method":"tools/call","params":"x"}', -32600, 6),
        # an id neither text nor a number: the SDK read a notification, and never answered
        (b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":true,"method":"tools/list"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', -32600, None),
    ]
    ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
    response = b'{"jsonrpc":"2.0","id":14,"result":5,"error":{}}'
    requests = tmp_path / "requests.jsonl"
    body = b"".join(line + b"\n" for line, _, _ in unreadable)
    requests.write_bytes(lines([INITIALIZE, INITIALIZED]) + body + response + b"\n" + lines([ping]))
    with requests.open("rb") as stdin:
        process = popen(stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err.decode()[-3000:]
    answers = [json.loads(line) for line in out.splitlines()]
    errors = [(a["error"]["code"], a["id"]) for a in answers if "error" in a]
    assert errors == [(code, id_) for _, code, id_ in unreadable], out.decode()
    assert [a["id"] for a in answers if "result" in a] == [0, 9]


@POSIX
def test_stdio_on_a_terminal_that_hangs_up() -> None:
    """stdin and stdout a terminal (the SDK's transport) that closes: reading fails with
    EIO, the end of input, and the server exits 0 without a traceback."""
    import pty

    controller, terminal = pty.openpty()
    process = popen(stdin=terminal, stdout=terminal, stderr=subprocess.PIPE)
    os.close(terminal)
    try:
        os.write(controller, lines([INITIALIZE]))
        answer = b""
        while b"serverInfo" not in answer:
            answer += os.read(controller, 1 << 16)
        os.close(controller)
        assert process.wait(timeout=20) == 0
        assert process.stderr is not None and b"Traceback" not in process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()


@POSIX
def test_stdio_on_a_terminal_that_hangs_up_mid_call(tmp_path: Path) -> None:
    """The terminal closes while a call runs: writing its answer fails with EIO in the
    SDK's stdout writer, which ended the server with a traceback and exit status 1."""
    import pty

    controller, terminal = pty.openpty()
    process = popen(stdin=terminal, stdout=terminal, stderr=subprocess.PIPE)
    os.close(terminal)
    marker = tmp_path / "hung"
    try:
        slow = call(7, "slow", {"seconds": 1, "marker": str(marker)})
        os.write(controller, lines([INITIALIZE, INITIALIZED, slow]))
        wait_for(marker.with_suffix(".started"))
        os.close(controller)
        assert process.wait(timeout=20) == 0
        assert process.stderr is not None and b"Traceback" not in process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()


def test_a_request_before_initialize_is_told_to_initialize() -> None:
    """SDK 2.3 answers a bare -32602 "Invalid request parameters"; the runtime -32600 with
    the reason (what streamable HTTP answers a request without a session, with a 400), and
    the connection still initializes."""
    stdio = Stdio()
    try:
        answer = stdio.call({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=60)
        assert answer["error"]["code"] == -32600, answer
        assert "send initialize first" in answer["error"]["message"], answer
        stdio.initialize()
        stdio.echo_works()
        assert stdio.close() == 0, stdio.stderr.decode()[-3000:]
    finally:
        stdio.kill()
