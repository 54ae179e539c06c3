"""The generated client is typed: mypy --strict accepts correct use and rejects a wrong
argument type."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "generated_examples" / "calculator" / "src"

GOOD = """
from calculator_mcp.client import CalculatorClient, CalculatorSyncClient
from calculator_mcp.models import DivideOutput


async def main() -> float:
    async with CalculatorClient.stdio() as client:
        result: DivideOutput = await client.divide(a=1.0, b=2.0, precision=3)
        converted = await client.convert_units(value=1.0, from_="km", to="m")
        return result.quotient + converted.value


def blocking() -> float:
    with CalculatorSyncClient.stdio() as client:
        result: DivideOutput = client.divide(a=1.0, b=2.0, precision=3)
        return result.quotient
"""

BAD = """
from calculator_mcp.client import CalculatorClient, CalculatorSyncClient


async def main() -> None:
    async with CalculatorClient.stdio() as client:
        await client.divide(a="one", b=2.0)
        await client.convert_units(value=1.0, from_="parsec", to="m")


def blocking() -> None:
    with CalculatorSyncClient.stdio() as client:
        client.divide(a=1.0, b="two")
        text: str = client.divide(a=1.0, b=2.0)
"""


def mypy(source: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "script.py"
    script.write_text(source)
    env = {**os.environ, "MYPYPATH": str(SRC)}
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(script)],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip


def test_correct_use_type_checks(tmp_path: Path) -> None:
    done = mypy(GOOD, tmp_path)
    assert done.returncode == 0, done.stdout


def test_wrong_argument_types_are_rejected(tmp_path: Path) -> None:
    done = mypy(BAD, tmp_path)
    assert done.returncode == 1
    assert (
        'Argument "a" to "divide" of "CalculatorClient" has incompatible type "str"' in done.stdout
    )
    assert (
        '"convert_units" of "CalculatorClient" has incompatible type "Literal[\'parsec\']"'
        in done.stdout
    )
    # the blocking client has the same signatures (and return types) as the async one
    assert 'Argument "b" has incompatible type "str"; expected "float"' in done.stdout
    assert 'expression has type "DivideOutput", variable has type "str"' in done.stdout
