"""Handler for the convert_units tool: user code, kept across regenerations."""

from __future__ import annotations

from ... import ToolError
from ...models import ConvertUnitsInput, ConvertUnitsOutput

METRES = {"m": 1.0, "km": 1000.0, "mi": 1609.344, "ft": 0.3048}


def _to_kelvin(value: float, unit: str) -> float:
    return {"K": value, "C": value + 273.15, "F": (value - 32) * 5 / 9 + 273.15}[unit]


def _from_kelvin(value: float, unit: str) -> float:
    return {"K": value, "C": value - 273.15, "F": (value - 273.15) * 9 / 5 + 32}[unit]


async def handle(args: ConvertUnitsInput) -> ConvertUnitsOutput:
    source, target = args.from_, args.to
    if source in METRES and target in METRES:
        value = args.value * METRES[source] / METRES[target]
    elif source not in METRES and target not in METRES:
        value = _from_kelvin(_to_kelvin(args.value, source), target)
    else:
        raise ToolError(f"cannot convert {source} to {target}: one is a length, one a temperature")
    return ConvertUnitsOutput(value=round(value, 6), unit=target)
