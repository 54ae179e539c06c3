"""Example arguments for inputs with a ``pattern`` (also behind a ``$ref`` into ``$defs``):
the generated tests call such tools instead of skipping them, so ``pytest --stubs=fail``
catches a handler left as a stub."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from mcpgen.cli import main
from mcpgen.model.examples import invalid_example, pattern_example, valid_example

PATTERNS = [
    r"^[A-Z]{2}-\d{4}$",
    r"^[a-z0-9]+(?:-[a-z0-9]+)*$",
    r"^\+?[1-9]\d{1,14}$",
    r"^#[0-9a-fA-F]{6}$",
    r"^\S+@\S+\.\S+$",
    r"^(?:GET|POST|PUT)$",
    r"^[^/\s]+/[^/\s]+$",
    r"^(\w)\w*\1$",
    r"v\d+",
    r"^[A-Za-z_][A-Za-z0-9_]{2,31}$",
]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_a_pattern_gets_a_matching_string(pattern: str) -> None:
    found = pattern_example(pattern)
    assert found is not None and re.search(pattern, found), found
    assert pattern_example(pattern) == found  # deterministic


def test_length_bounds_and_the_format_are_kept() -> None:
    longer = pattern_example(r"^[a-z]+$", 5, 8)
    assert longer is not None and 5 <= len(longer) <= 8 and longer.isalpha()
    assert pattern_example(r"^[A-Z]{3}$", 0, 2) is None  # no string fits
    assert pattern_example(r"^\d{4}-", 0, None, "2024-01-01") == "2024-01-01"
    assert pattern_example("(unclosed") is None
    long = pattern_example(r"^[a-z]+$", 100)
    assert long is not None and len(long) == 100


def test_nested_repetition_does_not_keep_the_build_waiting() -> None:
    import time

    start = time.monotonic()
    for pattern in (r"^(a+)+$", r"^((a+)+)+b$", r"^(a|aa)+$", r"^(\w+\s?)+$"):
        found = pattern_example(pattern, 100)
        assert found is None or (len(found) >= 100 and re.search(pattern, found))
    assert time.monotonic() - start < 10  # without the length cap: hours


def test_huge_lengths_and_counts_give_no_example_rather_than_gigabytes() -> None:
    """``minLength: 1e9`` took 9 GB and minutes to build; nested ``minItems`` multiply."""
    deep: dict[str, object] = {"type": "integer"}
    for _ in range(6):
        deep = {"type": "array", "items": deep, "minItems": 100}
    for schema in (
        {"type": "string", "minLength": 10**9},
        {"type": "array", "items": {"type": "string"}, "minItems": 10**9},
        deep,
    ):
        arguments = {"type": "object", "properties": {"a": schema}, "required": ["a"]}
        assert valid_example(arguments) is None
    small = {"type": "array", "items": {"type": "string", "minLength": 3}, "minItems": 2.0}
    assert valid_example(small) == ["xxxxxxx", "xxxxxxx"]


SCHEMA = {
    "type": "object",
    "properties": {
        "sku": {"$ref": "#/$defs/Sku"},
        "order": {"$ref": "#/$defs/Order"},
        "note": {"type": "string", "maxLength": 3},
    },
    "required": ["sku", "order", "note"],
    "additionalProperties": False,
    "$defs": {
        "Sku": {"type": "string", "pattern": r"^[A-Z]{3}-\d{3}$"},
        "Order": {
            "type": "object",
            "properties": {"ref": {"type": "string", "pattern": "^ord_[a-z0-9]{8}$"}},
            "required": ["ref"],
        },
    },
}


def test_nested_patterns_give_a_valid_and_an_invalid_example() -> None:
    example = valid_example(SCHEMA)
    assert example is not None
    assert Draft202012Validator(SCHEMA).is_valid(example)
    assert re.fullmatch(r"[A-Z]{3}-\d{3}", example["sku"])
    bad = invalid_example(SCHEMA)
    assert bad is not None and not Draft202012Validator(SCHEMA).is_valid(bad)


MANIFEST = """\
mcpgen: 1
server: {name: codes, description: Codes.}
$defs:
  Sku: {type: string, pattern: "^[A-Z]{3}-[0-9]{3}$"}
tools:
  - name: lookup
    description: Look a product up.
    input:
      type: object
      properties: {sku: {$ref: "#/$defs/Sku"}}
      required: [sku]
  - name: colour
    description: Name a colour.
    input:
      type: object
      properties: {hex: {type: string, pattern: "^#[0-9a-f]{6}$"}}
      required: [hex]
  - name: odd
    description: No example arguments can be made for it.
    input:
      type: object
      properties: {x: {not: {type: string}}}
      required: [x]
"""
HANDLER = """from __future__ import annotations

from ... import ToolReturn
from ...models import {model}


async def handle(args: {model}) -> ToolReturn:
    return "ok"
"""


@pytest.mark.slow
def test_stubs_fail_catches_a_stub_behind_a_pattern(tmp_path: Path) -> None:
    manifest = tmp_path / "mcpgen.yaml"
    manifest.write_text(MANIFEST, encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["build", str(manifest), "-o", str(out)])
    assert result.exit_code == 0, result.output
    cases = json.loads((out / "tests" / "cases.json").read_text())
    assert cases["valid"]["lookup"] is not None and cases["valid"]["colour"] is not None
    assert cases["invalid"]["lookup"] is not None
    tools = out / "src" / "codes_mcp" / "handlers" / "tools"
    (tools / "colour.py").write_text(HANDLER.format(model="ColourInput"), "utf-8")
    env = {**os.environ, "PYTHONPATH": str(out / "src"), "MCP_TEST_TRANSPORTS": "memory"}
    command = [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "--stubs=fail"]
    command += ["tests", "-k", "tool_answers or invalid_arguments"]
    done = subprocess.run(
        command, cwd=out, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    found = re.findall(r"::(\w+)\[memory-[\w-]+-(\w+)\] (PASSED|FAILED|SKIPPED)", done.stdout)
    outcome = {f"{test}[{tool}]": result for test, tool, result in found}
    assert len(found) == 2 * len(set(found)) == 2 * len(outcome), done.stdout[-3000:]  # 2 eras
    # lookup is still a stub: --stubs=fail fails it; so does odd's, read from its source
    assert outcome == {
        "test_invalid_arguments_are_rejected[colour]": "PASSED",
        "test_invalid_arguments_are_rejected[lookup]": "PASSED",
        "test_invalid_arguments_are_rejected[odd]": "SKIPPED",
        "test_tool_answers[colour]": "PASSED",
        "test_tool_answers[lookup]": "FAILED",
        "test_tool_answers[odd]": "FAILED",
    }, done.stdout[-3000:]
    assert "lookup: its handler is not written yet" in done.stdout
    assert "odd: its handler is not written yet" in done.stdout
    assert "every object is valid input" not in done.stdout
