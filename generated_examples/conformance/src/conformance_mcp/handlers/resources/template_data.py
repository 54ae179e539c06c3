"""Content of test://template/{id}/data (user code, kept across regenerations)."""

from __future__ import annotations

import json

from ... import ResourceReturn


async def read(id_: str) -> ResourceReturn:
    return json.dumps({"id": id_, "templateTest": True, "data": f"Data for ID: {id_}"})
