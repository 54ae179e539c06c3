"""Code mode's sandbox against escape attempts: each is refused within its limit, the host unharmed.

Every attempt runs through ``CodeMode.execute`` as a model's code would. An attempt must
come back as a tool error (or a harmless value) without reaching the host: no file
written, no connection made, no environment read, no host object's internals, and within
the limit it ran into. The last tests run the bombs back to back and then check the
server process itself: its memory, its threads, that an ordinary run still works, and
that closing code mode leaves no sandbox process behind.
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pydantic_monty  # noqa: F401 (a test dependency: never skipped)
import pytest

from mcpgen.runtime.codemode import CodeMode, Limits
from mcpgen.runtime.search import OperationDoc, SearchIndex

pytestmark = pytest.mark.timeout(120)

SECRET = "codemode-secret-" + uuid.uuid4().hex
LIMITS = Limits(
    timeout=8.0,
    cpu_seconds=1.0,
    memory=32 * 1024 * 1024,
    recursion=100,
    calls=5,
    output=8 * 1024,
    code=16 * 1024,
    sleep_seconds=0.5,
)
DOCS = [
    OperationDoc(
        "ping",
        title="Ping the API",
        method="GET",
        path="/ping",
        input_schema={"type": "object", "properties": {"n": {"type": "integer"}}},
    ),
    OperationDoc("slow", title="A slow operation", method="GET", path="/slow"),
]


class Host:
    """The dispatch point's stand-in; it holds a secret the sandbox must never see."""

    def __init__(self) -> None:
        self.calls = 0
        self.secret = SECRET

    async def __call__(
        self, name: str, arguments: dict[str, Any], ctx: Any
    ) -> types.CallToolResult:
        self.calls += 1
        if name == "slow":
            await anyio.sleep(60)
        data = {"pong": arguments.get("n")}
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(data))],
            structured_content=data,
        )


def execute(code: str, limits: Limits = LIMITS) -> tuple[types.CallToolResult, float, Host]:
    host = Host()

    async def main() -> tuple[types.CallToolResult, float]:
        mode = CodeMode(SearchIndex(DOCS), host, limits)
        try:
            await mode.execute("1")  # the worker is up: time only the attempt
            start = time.monotonic()
            result = await mode.execute(code)
            return result, time.monotonic() - start
        finally:
            await mode.aclose()

    result, elapsed = anyio.run(main)
    return result, elapsed, host


def answer(result: types.CallToolResult) -> str:
    first = result.content[0]
    assert isinstance(first, types.TextContent)
    return first.text


def refused(code: str, *errors: str, limits: Limits = LIMITS) -> tuple[str, float]:
    """Run ``code``: it must fail with one of ``errors`` and show nothing of the host."""
    result, elapsed, _ = execute(code, limits)
    text = answer(result)
    assert result.is_error, f"not refused: {text}"
    assert any(e in text for e in errors), text
    assert SECRET not in text
    assert "/work/" not in text and "site-packages" not in text and '.py"' not in text
    return text, elapsed


# -- imports, files, network, environment -------------------------------------------------

IMPORTS = [
    "import subprocess\nsubprocess.run(['id'])",
    "import socket",
    "import ctypes",
    "import importlib\nimportlib.import_module('os')",
    "import builtins\nbuiltins.open('/etc/passwd')",
    "import sys\nsys.modules['os']",
    "import os\nos.system('id')",
    "import os\nos.popen('id')",
    "import shutil\nshutil.rmtree('/')",
    "import urllib.request",
    "import http.client",
    "import pydantic_monty",
    "__import__('os').system('id')",
    "__builtins__.__import__('os')",
]


@pytest.mark.parametrize("code", IMPORTS)
def test_imports_that_reach_the_host_are_refused(code: str) -> None:
    refused(
        code,
        "ModuleNotFoundError",
        "ImportError",
        "AttributeError",
        "NameError",
        "PermissionError",
        "RuntimeError",
    )


def test_files_cannot_be_read_or_written(tmp_path: Path) -> None:
    target = tmp_path / "written-from-the-sandbox"
    secret_file = tmp_path / "secret.txt"
    secret_file.write_text(SECRET)
    for code in (
        f"open({str(secret_file)!r}).read()",
        f"from pathlib import Path\nPath({str(secret_file)!r}).read_text()",
        "open('/etc/passwd').read()",
        "open('/proc/self/environ').read()",
        f"open({str(target)!r}, 'w').write('x')",
        f"from pathlib import Path\nPath({str(target)!r}).write_text('x')",
        "import os\nos.listdir('/')",
    ):
        refused(code, "PermissionError", "OSError", "RuntimeError", "AttributeError")
    assert not target.exists()


def test_the_network_is_unreachable() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        listener.settimeout(0.2)
        port = listener.getsockname()[1]
        refused(
            f"import socket\nsocket.create_connection(('127.0.0.1', {port}))",
            "ModuleNotFoundError",
        )
        refused(
            f"import urllib.request\nurllib.request.urlopen('http://127.0.0.1:{port}/')",
            "ModuleNotFoundError",
        )
        with pytest.raises(TimeoutError):
            listener.accept()  # nobody connected


def test_the_environment_is_not_visible(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEMODE_TEST_SECRET", SECRET)
    for code in (
        "import os\nos.getenv('CODEMODE_TEST_SECRET')",
        "import os\nos.environ['CODEMODE_TEST_SECRET']",
        "import os\ndict(os.environ)",
    ):
        refused(code, "RuntimeError", "KeyError", "PermissionError", "AttributeError")


# -- introspection: the host function, builtins, frames ----------------------------------

INTROSPECTION = [
    "ping.__globals__",
    "ping.__code__",
    "ping.__closure__",
    "getattr(ping, '__globals__')",
    "getattr(ping, '__self__')",
    "ping.__module__",
    "().__class__.__bases__[0].__subclasses__()",
    "type(()).__mro__",
    "object.__subclasses__()",
    "(lambda: 0).__globals__",
    "print.__self__",
    "import sys\nsys._getframe()",
    "vars()",
    "globals()['__builtins__']",
    "getattr(getattr(ping, '__class__'), '__subclasses__')()",
]


@pytest.mark.parametrize("code", INTROSPECTION)
def test_introspection_finds_no_way_out(code: str) -> None:
    text, _ = refused(code, "AttributeError", "NameError")
    assert "Host" not in text and "CodeMode" not in text and "stub" not in text


def test_an_operation_function_is_opaque() -> None:
    result, _, host = execute("[repr(ping), str(type(ping))]")
    assert result.structured_content is not None
    shown = json.dumps(result.structured_content["result"])
    assert "ping" in shown
    assert "0x" not in shown and "stub" not in shown and "codemode" not in shown
    assert host.calls == 0


@pytest.mark.parametrize(
    "code",
    [
        "eval(\"__import__('os')\")",
        "exec('import os\\nos.system(\"id\")')",
        "compile('import os', 'x', 'exec')",
        "eval('ping.__globals__')",
        "exec('open(\"/etc/passwd\").read()')",
    ],
)
def test_eval_exec_and_compile_stay_in_the_sandbox(code: str) -> None:
    refused(
        code,
        "NameError",
        "ModuleNotFoundError",
        "AttributeError",
        "PermissionError",
        "RuntimeError",
    )


# -- bombs ------------------------------------------------------------------------------


def test_an_infinite_loop_stops_at_the_cpu_limit() -> None:
    _, elapsed = refused("while True:\n    pass", "TimeoutError")
    assert elapsed < LIMITS.cpu_seconds + 2.0
    _text, elapsed = refused(
        "try:\n    while True:\n        pass\nexcept BaseException:\n    'caught'",
        "TimeoutError",
    )
    assert elapsed < LIMITS.cpu_seconds + 2.0


def test_a_slow_operation_stops_at_the_wall_clock_limit() -> None:
    limits = Limits(timeout=1.5, cpu_seconds=1.0)
    text, elapsed = refused("slow()", "TimeoutError", limits=limits)
    assert "1.5 s" in text
    assert elapsed < 1.5 + 1.5


def test_sleeping_stops_at_the_sleep_budget() -> None:
    _text, elapsed = refused("import time\ntime.sleep(3600)", "TimeoutError")
    assert elapsed < 2.0


@pytest.mark.parametrize(
    "code",
    [
        "'x' * 10**10",
        "[0] * 10**9",
        "x = []\nwhile True:\n    x.append('y' * 10000)",
        "d = {}\ni = 0\nwhile True:\n    d[i] = str(i) * 100\n    i += 1",
        "s = 'a'\nwhile True:\n    s = s + s",
        "2 ** (10 ** 9)",
    ],
)
def test_memory_bombs_stop_at_the_memory_limit(code: str) -> None:
    _text, elapsed = refused(code, "MemoryError", "TimeoutError", "OverflowError")
    assert elapsed < LIMITS.cpu_seconds + 2.0


@pytest.mark.parametrize(
    "code",
    [
        "def f():\n    return f()\nf()",
        "def a():\n    return b()\ndef b():\n    return a()\na()",
        "eval('(' * 100000 + ')' * 100000)",
    ],
)
def test_recursion_bombs_stop_at_the_depth_limit(code: str) -> None:
    refused(code, "RecursionError", "SyntaxError", "MemoryError", "TimeoutError")


def test_deeply_nested_data_comes_back_cut_short() -> None:
    result, elapsed, _ = execute("x = []\nfor _ in range(100000):\n    x = [x]\nx")
    assert not result.is_error
    assert result.structured_content is not None
    depth, node = 0, result.structured_content["result"]
    while isinstance(node, list):
        depth, node = depth + 1, node[0]
    assert depth <= 66 and node == "..."
    assert elapsed < LIMITS.cpu_seconds + 2.0


def test_huge_output_stops_at_the_output_limit() -> None:
    text, _ = refused("print('x' * 10**6)", "MemoryError")
    assert f"limited to {LIMITS.output} bytes" in text
    text, _ = refused("while True:\n    print('spam')", "MemoryError", "TimeoutError")
    assert len(text.encode()) <= LIMITS.output + 2000
    text, _ = refused("'y' * 100000", "over the")  # a huge result, not printed
    assert len(text) < 1000


def test_too_many_operation_calls_stop_at_the_call_limit() -> None:
    for code in (
        "for i in range(1000):\n    ping(n=i)",
        "for i in range(1000):\n    try:\n        ping(n=i)\n    except Exception:\n        pass",
    ):
        result, _, host = execute(code)
        assert result.is_error
        assert f"more than {LIMITS.calls} operation calls" in answer(result)
        assert host.calls == LIMITS.calls


def test_oversized_code_is_refused_before_it_runs() -> None:
    result, _, _ = execute("x = 1\n" * 10000)
    assert result.is_error and "longer than" in answer(result)


# -- the host, after all of it ---------------------------------------------------------------


def _status(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(field)


def _children() -> set[int]:
    me = os.getpid()
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == me:
            found.add(int(entry.name))
    return found


BOMBS = [
    "while True:\n    pass",
    "'x' * 10**10",
    "x = []\nwhile True:\n    x.append('y' * 100000)",
    "def f():\n    return f()\nf()",
    "print('x' * 10**7)",
    "for i in range(100):\n    ping(n=i)",
    "import os\nos.system('id')",
    "s = 'a'\nwhile True:\n    s = s + s",
]


@pytest.mark.timeout(180)
def test_the_host_is_unharmed_and_keeps_working() -> None:
    host = Host()
    before_children = _children()

    async def main() -> tuple[list[types.CallToolResult], types.CallToolResult, int, int]:
        mode = CodeMode(SearchIndex(DOCS), host, LIMITS)
        try:
            await mode.execute("1")
            rss_before = _status("VmRSS")
            threads_before = _status("Threads")
            results = []
            for _ in range(2):
                for code in BOMBS:
                    results.append(await mode.execute(code))
            after = await mode.execute(
                "total = 0\nfor i in range(3):\n    total += ping(n=i)['pong']\ntotal"
            )
            grown = _status("VmRSS") - rss_before
            threads = _status("Threads") - threads_before
            return results, after, grown, threads
        finally:
            await mode.aclose()

    results, after, grown_kb, extra_threads = anyio.run(main)
    assert all(r.is_error for r in results)
    assert after.structured_content == {"stdout": "", "result": 3}
    assert grown_kb < 40 * 1024, f"the server grew by {grown_kb} kB"
    assert extra_threads <= 2
    deadline = time.monotonic() + 10
    while _children() - before_children and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _children() - before_children, "a sandbox process outlived code mode"


def test_concurrent_runs_share_the_workers() -> None:
    host = Host()

    async def main() -> list[types.CallToolResult]:
        mode = CodeMode(SearchIndex(DOCS), host, Limits(timeout=20, cpu_seconds=2, workers=2))
        results: list[types.CallToolResult] = []
        try:

            async def one(i: int) -> None:
                code = "while True:\n    pass" if i == 0 else f"ping(n={i})['pong']"
                results.append(await mode.execute(code))

            async with anyio.create_task_group() as group:
                for i in range(6):
                    group.start_soon(one, i)
        finally:
            await mode.aclose()
        return results

    results = anyio.run(main)
    assert sum(r.is_error for r in results) == 1
    assert sorted(
        r.structured_content["result"] for r in results if r.structured_content is not None
    ) == [1, 2, 3, 4, 5]
