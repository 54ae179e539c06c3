"""The stdio transport's cap on requests in flight (``runtime.stdio_pending.IN_FLIGHT``): past it,
new requests wait (parked, ``PARKED`` at most), while a cancellation and the client's
answers to the server's own requests (elicitation, sampling, roots) are still read and
delivered, since the requests in flight need them to end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rtstdio import INITIALIZE, INITIALIZED, Stdio, call, lines, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]
IN_FLIGHT = 1024  # runtime.stdio_pending.IN_FLIGHT
ASKING = {"elicitation": {}, "sampling": {}, "roots": {"listChanged": False}}
ANSWERS = {
    "elicitation/create": {"action": "accept", "content": {"color": "red", "size": "L"}},
    "sampling/createMessage": {
        "role": "assistant",
        "content": {"type": "text", "text": "hi"},
        "model": "m",
    },
    "roots/list": {"roots": [{"uri": "file:///work"}]},
}


def _cancel(request_id: Any) -> dict[str, Any]:
    params = {"requestId": request_id, "reason": "stop"}
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}


def _next_request(stdio: Stdio, timeout: float = 10) -> dict[str, Any]:
    """The next request the server sends the client (skipping notifications)."""
    while True:
        message = stdio.receive(timeout)
        if "method" in message and "id" in message:
            return message


def _fill(stdio: Stdio, slow: list[dict[str, Any]]) -> None:
    assert stdio.process.stdin is not None
    stdio.process.stdin.write(lines(slow))
    stdio.process.stdin.flush()


def test_a_cancel_behind_the_cap_is_read_at_once(tmp_path: Path) -> None:
    """1,024 slow calls fill the cap, one more waits behind it: the cancel for the first
    ends it at once (it was read only when a call in flight ended, 60 s later), and the
    call that waited then runs."""
    stdio = Stdio()
    try:
        stdio.initialize()
        first, last = tmp_path / "first", tmp_path / "last"
        slow = [call(1, "slow", {"seconds": 60, "marker": str(first)})]
        slow += [call(i, "slow", {"seconds": 60}) for i in range(2, IN_FLIGHT + 1)]
        _fill(stdio, [*slow, call("last", "slow", {"seconds": 0, "marker": str(last)})])
        wait_for(first.with_suffix(".started"))
        stdio.send(_cancel(1))
        assert wait_for(first.with_suffix(".cancelled"), 10) < 10
        assert _answer(stdio, "last")["result"]["content"][0]["text"] == "slept 0 s"
    finally:
        stdio.kill()


def test_answers_to_the_server_behind_the_cap_are_read() -> None:
    """``interview`` waits for an elicitation answer while 1,023 slow calls fill the cap
    and one more waits behind it: the client's answers to the server's elicitation,
    sampling and roots requests still reach ``interview``, which finishes."""
    stdio = Stdio()
    try:
        params = {**INITIALIZE["params"], "capabilities": ASKING}
        assert stdio.call({**INITIALIZE, "params": params}, 60)["result"]["protocolVersion"]
        stdio.send(INITIALIZED)
        stdio.send(call("interview", "interview", {}))
        asked = _next_request(stdio)
        _fill(stdio, [call(i, "slow", {"seconds": 60}) for i in range(1, IN_FLIGHT + 1)])
        for method in ANSWERS:  # elicitation, then sampling, then roots
            assert asked["method"] == method, asked
            stdio.send({"jsonrpc": "2.0", "id": asked["id"], "result": ANSWERS[method]})
            if method != "roots/list":
                asked = _next_request(stdio)
        answer = _answer(stdio, "interview")
        assert answer["result"]["structuredContent"]["model_said"] == "hi", answer
        assert answer["result"]["structuredContent"]["roots"] == ["file:///work"], answer
    finally:
        stdio.kill()


def _answer(stdio: Stdio, request_id: str) -> dict[str, Any]:
    """The answer to ``request_id`` (what comes before it skipped)."""
    while True:
        message = stdio.receive(10)
        if message.get("id") == request_id and "method" not in message:
            return message


def test_a_cancel_drops_a_request_waiting_behind_the_cap(tmp_path: Path) -> None:
    """A request parked behind the cap and then cancelled never runs nor is answered; the
    one parked after it runs once a call in flight ends."""
    stdio = Stdio()
    try:
        stdio.initialize()
        quick = tmp_path / "quick"
        full = [call("quick", "slow", {"seconds": 1, "marker": str(quick)})]
        full += [call(i, "slow", {"seconds": 60}) for i in range(1, IN_FLIGHT)]
        dropped, kept = tmp_path / "dropped", tmp_path / "kept"
        parked = [
            call("dropped", "slow", {"seconds": 0, "marker": str(dropped)}),
            call("kept", "slow", {"seconds": 0, "marker": str(kept)}),
        ]
        assert stdio.process.stdin is not None
        stdio.process.stdin.write(lines([*full, *parked, _cancel("dropped")]))
        stdio.process.stdin.flush()
        assert _answer(stdio, "kept")["result"]["content"][0]["text"] == "slept 0 s"
        assert quick.exists() and kept.exists() and not dropped.with_suffix(".started").exists()
        seen = stdio.exchange(json.dumps(call("after", "echo", {"text": "x"})).encode())
        assert all(m.get("id") != "dropped" for m in seen), seen
    finally:
        stdio.kill()
