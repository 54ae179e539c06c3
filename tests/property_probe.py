"""Import generated servers and list what they serve, in memory (run by property_harness).

Usage: ``python property_probe.py PACKAGE=PROJECT_FOLDER ...``. For each project: import the
package, its server, client, models and every handler module; start the server in memory
with the generated typed client, once in each protocol era; list tools, resources, resource
templates and prompts and compare them with the project's ``mcp-surface.json`` (what clients
see, by its own word; its capabilities are the handshake era's, and the 2026 era offers tasks
as the ``io.modelcontextprotocol/tasks`` extension instead, docs/tasks.md).
Prints one JSON line per package: ``{"package": ..., "error": null or the reason}``.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import pkgutil
import sys
import traceback
from pathlib import Path
from typing import Any

LOCK_ONLY = {"scopes", "size", "enabled"}
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"


def _wire(item: Any) -> dict[str, Any]:
    data: dict[str, Any] = item.model_dump(mode="json", by_alias=True, exclude_none=True)
    return data


def _expected(lock: dict[str, Any], kind: str, legacy: bool) -> list[dict[str, Any]]:
    """The lock's entries a client sees; the 2026 Tool has no ``execution`` (docs/tasks.md)."""
    hidden = LOCK_ONLY if legacy else LOCK_ONLY | {"execution"}
    return [
        {k: v for k, v in entry.items() if k not in hidden}
        for entry in lock.get(kind, [])
        if entry.get("enabled", True) is not False
    ]


def _normal(kind: str, item: dict[str, Any]) -> dict[str, Any]:
    """The lock's spelling of a listed item: a prompt always has its (maybe empty)
    arguments, each one saying whether it is required (the wire may leave both out)."""
    if kind == "prompts":
        arguments = [{"required": False, **a} for a in item.get("arguments") or []]
        item = {**item, "arguments": arguments}
    return item


def _same(kind: str, key: str, listed: list[Any], lock: dict[str, Any], legacy: bool) -> None:
    got = sorted((_normal(kind, _wire(x)) for x in listed), key=lambda d: str(d[key]))
    want = sorted(_expected(lock, kind, legacy), key=lambda d: str(d[key]))
    if [g[key] for g in got] != [w[key] for w in want]:
        raise AssertionError(
            f"{kind}: listed {[g[key] for g in got]}, lock {[w[key] for w in want]}"
        )
    for g, w in zip(got, want, strict=True):
        for field, value in w.items():
            if g.get(field) != value:
                raise AssertionError(
                    f"{kind} {g[key]!r}: {field} listed {g.get(field)!r}, lock {value!r}"
                )


async def check(package: str, project: Path) -> None:
    importlib.import_module(package)
    server = importlib.import_module(f"{package}.server")
    client_module = importlib.import_module(f"{package}.client")
    importlib.import_module(f"{package}.models")
    handlers = importlib.import_module(f"{package}.handlers")
    for info in pkgutil.walk_packages(handlers.__path__, f"{package}.handlers."):
        importlib.import_module(info.name)
    from mcp.client import Client  # noqa: F401  (the SDK imports before any server runs)

    testing = importlib.import_module(f"{package}._runtime.testing")
    base = importlib.import_module(f"{package}._runtime.client").BaseClient
    classes = [
        v
        for v in vars(client_module).values()
        if isinstance(v, type) and issubclass(v, base) and v.__module__ == client_module.__name__
    ]
    if len(classes) != 1:
        raise AssertionError(f"expected one typed client class, found {classes}")
    lock = json.loads((project / "mcp-surface.json").read_text("utf-8"))
    for mode in ("legacy", "auto"):
        try:
            await _compare(classes[0], server, testing, lock, mode)
        except BaseException as error:
            raise AssertionError(f"in mode {mode!r}") from error


def _capabilities(lock: dict[str, Any], legacy: bool) -> dict[str, Any]:
    caps: dict[str, Any] = dict(lock.get("capabilities", {}))
    if not legacy and caps.pop("tasks", None) is not None:
        caps["extensions"] = {TASKS_EXTENSION: {}}
    return caps


async def _compare(typed_client: Any, server: Any, testing: Any, lock: Any, mode: str) -> None:
    async with typed_client.connect(server.create_server(), mode=mode) as typed:
        client = typed.client
        legacy = mode == "legacy"
        caps = _capabilities(lock, legacy)
        served = _wire(client.server_capabilities)
        if sorted(served) != sorted(caps) or any(served[k] != caps[k] for k in caps):
            raise AssertionError(f"capabilities served {served}, lock {caps}")
        if "tools" in caps:
            _same(
                "tools", "name", await testing.all_pages(client.list_tools, "tools"), lock, legacy
            )
        elif lock.get("tools"):
            raise AssertionError("the lock lists tools but no tools capability")
        if "resources" in caps:
            listed = await testing.all_pages(client.list_resources, "resources")
            _same("resources", "uri", listed, lock, legacy)
            listed = await testing.all_pages(client.list_resource_templates, "resource_templates")
            _same("resourceTemplates", "uriTemplate", listed, lock, legacy)
        if "prompts" in caps:
            _same(
                "prompts",
                "name",
                await testing.all_pages(client.list_prompts, "prompts"),
                lock,
                legacy,
            )


def main(args: list[str]) -> None:
    pairs = [arg.split("=", 1) for arg in args]
    for _, project in pairs:
        sys.path.insert(0, str(Path(project) / "src"))
    for package, project in pairs:
        try:
            asyncio.run(check(package, Path(project)))
            error = None
        except BaseException:  # every failure is a finding, reported as data
            error = traceback.format_exc(limit=8)
        print(json.dumps({"package": package, "error": error}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
