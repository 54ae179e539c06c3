"""Transport edges: stdio writing from a file input to a pipe whose reader is gone (the
server exits 0, no traceback: it was exit 1 and an ExceptionGroup when the SDK wrote), and
``first_headers`` over any iterable of header pairs, the first value winning."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from rtstdio import INITIALIZE, INITIALIZED, call, lines, popen

from mcpgen.runtime.lifecycle import first_headers

pytestmark = [pytest.mark.timeout(120)]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX pipes")
def test_stdio_from_a_file_to_a_closed_pipe_exits_cleanly(tmp_path: Path) -> None:
    """``server < requests.jsonl | head -c 0``: the client gone before the first answer,
    the server exits 0 without a traceback, as it does on pipes."""
    requests = tmp_path / "requests.jsonl"
    calls = [call(i, "echo", {"text": "x"}) for i in range(1, 200)]
    requests.write_bytes(lines([INITIALIZE, INITIALIZED, *calls]))
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        with requests.open("rb") as stdin:
            process = popen(stdin=stdin, stdout=write_end, stderr=subprocess.PIPE)
            _, err = process.communicate(timeout=60)
    finally:
        os.close(write_end)
    assert b"Traceback" not in err, err.decode()[-3000:]
    assert process.returncode == 0, err.decode()[-3000:]


def test_first_headers_reads_an_iterable_that_is_no_sequence() -> None:
    """ASGI: ``headers`` is an Iterable of [name, value] pairs; the first value wins."""
    pairs = [(b"host", b"a.example"), (b"origin", b"http://o"), (b"host", b"b.example")]
    headers = first_headers({"headers": (pair for pair in pairs)})
    assert (headers[b"host"], headers[b"origin"]) == (b"a.example", b"http://o")


def test_first_headers_first_value_wins() -> None:
    """Duplicates, an empty list, a name in capitals (ASGI servers lower-case names; the
    readers look lower-case names up): same on main and v2."""
    pairs = [[b"host", b"a"], [b"Host", b"B"], [b"host", b"c"], [b"content-length", b"1"]]
    headers = first_headers({"headers": pairs})
    assert (headers[b"host"], headers[b"content-length"]) == (b"a", b"1")
    assert first_headers({"headers": []}) == {}
