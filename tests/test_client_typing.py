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


def mypy(source: str, tmp_path: Path, src: Path = SRC) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "script.py"
    script.write_text(source)
    env = {**os.environ, "MYPYPATH": str(src)}
    return subprocess.run(
        # the package's own settings: modules it does not carry are missing on purpose (the
        # session's shared cache, tests/conftest.py: the SDK and pydantic are read once)
        [sys.executable, "-m", "mypy", "--strict", "--config-file",
         str(src.parent / "pyproject.toml"), str(script)],
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


MANIFEST = """\
mcpgen: 1
server: {name: booking}
$defs:
  Address:
    type: object
    properties:
      street: {type: string}
      city: {type: string}
    required: [street]
  Code:
    type: string
    pattern: "^[A-Z]{3}$"
tools:
  - name: book
    description: Book a trip.
    input:
      type: object
      properties:
        address: {$ref: "#/$defs/Address"}
        stops: {type: array, items: {$ref: "#/$defs/Address"}}
        code: {$ref: "#/$defs/Code"}
        passengers: {type: integer, minimum: 1, default: 1}
        cabin: {type: string, enum: [economy, first], default: economy}
        note: {type: string}
      required: [address, code]
    output:
      type: object
      properties: {id: {type: string}}
      required: [id]
"""

BOOKING_GOOD = """
from booking_mcp.client import BookingClient
from booking_mcp.models import Address


async def main() -> str:
    async with BookingClient.stdio() as client:
        one = await client.book(address=Address(street="Main St 1"), code="CDG", passengers=2)
        two = await client.book(address={"street": "Quai 2"}, code="ORY", stops=[Address(street="x")])
        return one.id + two.id
"""

BOOKING_BAD = """
from booking_mcp.client import BookingClient


async def main() -> None:
    async with BookingClient.stdio() as client:
        await client.book(address=3, code="CDG")
        await client.book(address={"street": "x"}, code="CDG", passengers=None)
"""


def built(tmp_path: Path, manifest: str) -> dict[str, str]:
    """``manifest`` built into ``tmp_path/out`` by mcpgen; the environment it ran in."""
    (tmp_path / "mcpgen.yaml").write_text(manifest)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    made = subprocess.run(
        [sys.executable, "-m", "mcpgen", "build", "mcpgen.yaml", "-o", "out"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    return env


def test_ref_parameters_are_their_models_and_defaults_are_typed(tmp_path: Path) -> None:
    """A user's manifest with shared definitions and defaults: the generated client types
    a ``$ref`` parameter as its model (or the dict it stands for) and a defaulted one as
    its type with the default, not ``Any`` and ``X | None``."""
    built(tmp_path, MANIFEST)
    client = (tmp_path / "out" / "src" / "booking_mcp" / "client.py").read_text()
    assert "        address: models.Address | dict[str, Any],\n" in client
    assert "        code: models.Code,\n" in client
    assert "        stops: list[models.Address | dict[str, Any]] | None = None,\n" in client
    assert "        passengers: int = 1,\n" in client
    assert '        cabin: Literal["economy", "first"] = "economy",\n' in client
    assert "        note: str | None = None,\n" in client
    src = tmp_path / "out" / "src"
    out = tmp_path / "out"  # its pyproject.toml names the runtime modules left out
    good = mypy(BOOKING_GOOD, out, src)
    assert good.returncode == 0, good.stdout
    bad = mypy(BOOKING_BAD, out, src)
    assert bad.returncode == 1
    assert 'Argument "address" to "book" of "BookingClient" has incompatible type "int"' in (
        bad.stdout
    )
    assert 'Argument "passengers" to "book" of "BookingClient" has incompatible type "None"' in (
        bad.stdout
    )


NULLABLE_MANIFEST = """
mcpgen: 1
server: {name: nullable, version: 0.1.0}
tools:
  - name: echo
    description: Says what it got.
    input:
      type: object
      properties:
        opt: {type: [string, "null"], default: x}
        limit: {type: integer, default: 5}
    output:
      type: object
      properties: {opt: {type: [string, "null"]}, limit: {type: integer}}
      required: [opt, limit]
"""

NULLABLE_HANDLER = """
from ...models import EchoInput, EchoOutput


async def handle(args: EchoInput) -> EchoOutput:
    return EchoOutput(opt=args.opt, limit=args.limit)
"""

NULLABLE_CALLS = """
import asyncio
from nullable_mcp.client import NullableClient
from nullable_mcp.server import create_server


async def main(mode):
    async with NullableClient.connect(create_server(), mode=mode) as client:
        for kwargs in ({}, {"opt": None}, {"opt": "y", "limit": 7}):
            result = await client.echo(**kwargs)
            print(mode, result.opt, result.limit)


for mode in ("auto", "legacy"):
    asyncio.run(main(mode))
"""


def test_a_nullable_argument_with_a_default_is_sent_as_null(tmp_path: Path) -> None:
    """``opt: str | None = "x"``: ``opt=None`` is the value null, not "left out" (which
    made the server use its default "x")."""
    env = built(tmp_path, NULLABLE_MANIFEST)
    src = tmp_path / "out" / "src"
    (src / "nullable_mcp" / "handlers" / "tools" / "echo.py").write_text(NULLABLE_HANDLER)
    ran = subprocess.run(
        [sys.executable, "-c", NULLABLE_CALLS],
        env={**env, "PYTHONPATH": str(src)}, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    for mode in ("auto", "legacy"):
        assert f"{mode} x 5\n{mode} None 5\n{mode} y 7\n" in ran.stdout
