"""What a tool's invalid arguments (and results) cost the server, attacked over the wire (round 23, m5).

The calculator example's ``add`` takes ``numbers``, an array of numbers. Its answer to
invalid arguments lists at most ten problems, yet each problem quoted the value it was
about whole, and every problem was found and kept before ten were picked:

- one 4 MB body of 800,000 array items, every other one a string: 400,000 problems held
  at once (the server went from 70 MB to 1.4 GB and spent half a minute of CPU on it);
- one string of 1.9 million backslashes (3.8 MB of JSON): quoted twice, each time with
  its backslashes doubled by ``repr`` and again by JSON, a 15 MB answer (and that much
  text in the model's context).

A result its output schema refuses was checked the same way: ``echo`` (below) passes on
what it was given, which its input schema takes and its output schema does not.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sec_harness import WORKTREE, Built, Mcp, Server, ServerPool, build, tool_text

pytestmark = [pytest.mark.security, pytest.mark.timeout(180)]


@pytest.fixture(scope="module")
def calculator(workdir: Path, pool: ServerPool) -> Server:
    manifest = (WORKTREE / "manifests" / "calculator.yaml").read_text(encoding="utf-8")
    built: Built = build(workdir / "calculator_errors", manifest, "calculator_mcp")
    return pool.start(built)


def peak_mib(server: Server) -> int:
    """The server process's peak resident memory so far (VmHWM), in MiB."""
    status = Path(f"/proc/{server.process.pid}/status").read_text(encoding="utf-8")
    return int(status.split("VmHWM:")[1].split()[0]) >> 10


def add(server: Server, numbers: list[object]) -> tuple[str, int]:
    """The text of ``add``'s tool error for ``numbers``, and the answer's size in bytes."""
    client = Mcp(server.url, timeout=150)
    answer = client.post(
        client.message("tools/call", {"name": "add", "arguments": {"numbers": numbers}})
    )
    assert answer.status == 200, answer.text[:300]
    response = answer.only
    assert response["result"]["isError"], json.dumps(response)[:300]
    return tool_text(response), len(answer.text)


def test_many_invalid_items_are_not_all_kept(calculator: Server) -> None:
    """400,000 invalid items in one request under the body limit: the answer names ten of
    them, and the server never holds the other problems (its peak memory stays within a
    few hundred MB of where it was; it reached 1.4 GB)."""
    before = peak_mib(calculator)
    text, _ = add(calculator, [0.5, "a"] * 400_000)
    assert text.count("is not of type 'number'") == 10, text[:500]
    assert peak_mib(calculator) - before < 400, (before, peak_mib(calculator))
    assert "result" in Mcp(calculator.url).rpc("tools/list")


@pytest.mark.parametrize("value", ["\\" * 1_900_000, "x" * 3_000_000])
def test_a_problem_quotes_a_long_value_in_part(calculator: Server, value: str) -> None:
    """A long invalid value is quoted by its start and its length, not whole (once per
    problem, backslashes doubled twice): the answer stays small and still says what is wrong
    with the value and where."""
    text, size = add(calculator, [value])
    assert size < 10_000, (size, text[:300])
    assert "numbers.0: " in text and "is not of type 'number'" in text, text
    assert "is too short" in text, text


ECHO = """
mcpgen: 1
server: {name: echo, version: 0.1.0, package: echo_mcp, description: Echoes.}
transports: {offer: [stdio, http]}
tools:
  - name: echo
    description: Gives back the items it is given.
    input:
      type: object
      properties: {items: {type: array}}
      required: [items]
    output:
      type: object
      properties: {items: {type: array, items: {type: number}}}
      required: [items]
"""
ECHO_HANDLER = """
    from typing import Any


    async def handle(args: Any) -> Any:
        return {"items": args.items}
"""


@pytest.fixture(scope="module")
def echo(workdir: Path, pool: ServerPool) -> Server:
    built = build(workdir / "echo_errors", ECHO, "echo_mcp", handlers={"echo": ECHO_HANDLER})
    return pool.start(built)


def test_a_result_with_many_invalid_items_is_refused_cheaply(echo: Server) -> None:
    """400,000 items the output schema refuses: a tool error naming the first, and the
    server never holds the problems of the others."""
    before = peak_mib(echo)
    client = Mcp(echo.url, timeout=150)
    items: list[object] = [0.5, "a"] * 400_000
    answer = client.post(
        client.message("tools/call", {"name": "echo", "arguments": {"items": items}})
    )
    response = answer.only
    assert response["result"]["isError"], json.dumps(response)[:300]
    assert "does not match its output schema (items.1: 'a' is not of type" in tool_text(response)
    assert peak_mib(echo) - before < 400, (before, peak_mib(echo))


UNION = """
mcpgen: 1
server: {name: union, version: 0.1.0, package: union_mcp, description: Sums.}
transports: {offer: [stdio, http]}
tools:
  - name: total
    description: Adds the numbers it is given, if any.
    input:
      type: object
      properties:
        numbers:
          anyOf:
            - {type: array, items: {type: number}, uniqueItems: true}
            - {type: "null"}
      required: [numbers]
"""
UNION_HANDLER = """
    from typing import Any


    async def handle(args: Any) -> Any:
        return str(sum(args.numbers or []))
"""


@pytest.fixture(scope="module")
def union(workdir: Path, pool: ServerPool) -> Server:
    built = build(workdir / "union_errors", UNION, "union_mcp", handlers={"total": UNION_HANDLER})
    assert (built.root / "src" / "union_mcp" / "_runtime" / "bounded.py").is_file()
    return pool.start(built)


def total(server: Server, numbers: list[object], refused: bool = True) -> str:
    client = Mcp(server.url, timeout=150)
    answer = client.post(
        client.message("tools/call", {"name": "total", "arguments": {"numbers": numbers}})
    )
    response = answer.only
    assert response["result"].get("isError", False) is refused, json.dumps(response)[:300]
    return tool_text(response)


def test_an_any_of_does_not_keep_every_problem_of_its_branches(union: Server) -> None:
    """r7's: 400,000 invalid items under an ``anyOf`` branch got around the cap of ten:
    jsonschema kept every problem of the branch in the error's context (20 s on the event
    loop, +580 MB). The server now keeps three."""
    before = peak_mib(union)
    text = total(union, [0.5, "a"] * 400_000)
    assert "numbers: [0.5, 'a'," in text and "is not valid under any of the given" in text
    assert peak_mib(union) - before < 400, (before, peak_mib(union))


def test_unique_items_in_a_generated_server(union: Server) -> None:
    """The linear ``uniqueItems`` (``bounded.py``, carried for this schema) in a generated
    server: ``1`` and ``1.0`` are the same item; r7's string among 8,000 numbers (21 s of
    jsonschema's pairwise comparisons) is refused as before."""
    assert "is not valid under any of the given" in total(union, [1, 2, 1.0])
    assert total(union, [1, 2, 3.5], refused=False) == "6.5"
    assert "is not valid under any of the given" in total(
        union, ["a", *(i + 0.5 for i in range(8000))]
    )
