"""OpenAPI as a source (a whole spec, or a manifest's ``openapi:`` section) merged into one raw
manifest document, each entry located in the spec (``docs/architecture.md``, "merge")."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mcpgen import identifiers as names
from mcpgen.check.schemas import pointer
from mcpgen.load import (
    MAX_DOCUMENT_BYTES,
    Document,
    JsonPath,
    Overlay,
    Positions,
    dotted,
    load_file,
)
from mcpgen.openapi import OpenAPIImport, import_openapi
from mcpgen.openapi.options import OPTIONS_FILE
from mcpgen.openapi.result import Merged
from mcpgen.openapi.security import UPSTREAM_VARIABLES
from mcpgen.problems import Level, Location, Problem, Problems
from mcpgen.runtime.credential_config import env_name

Json = Any
GENERIC_HOST_WORDS = frozenset({"api", "www", "rest", "v1", "v2", "v3", "gateway", "service"})
SECOND_LEVEL = frozenset({"co", "com", "org", "net", "gov", "ac", "edu"})  # before a country's
GENERIC_TLDS = frozenset({"com", "org", "net", "io", "dev", "ai", "co", "app", "cloud", "us", "eu"})


def upstream_prefix(base: str, schemes: dict[str, Json]) -> str:
    """What the wrapped API's variables start with: ``GITHUB_API`` (a name ending in "api"
    is kept unless a variable would then be one of the server's own settings)."""
    if not (base == "API" or base.endswith("_API")):
        return base + "_API"
    from dataclasses import fields

    from mcpgen.runtime.settings import Settings

    own = {f.name.upper() for f in fields(Settings)} | {"TOKENS"}
    own |= {"INTROSPECTION_CLIENT_ID", "INTROSPECTION_CLIENT_SECRET"}  # runtime/introspection
    suffixes = {*UPSTREAM_VARIABLES, *map(env_name, schemes)}
    clash = any(s == o or o.startswith(s + "_") for s in suffixes for o in own)
    return base + "_API" if clash else base


def upstream_data(imported: OpenAPIImport, server_name: str, options: dict[str, Json]) -> Json:
    prefix = upstream_prefix(names.env_base(server_name), imported.security_schemes)
    base_url = options.get("baseUrl")
    if base_url is None and imported.servers:
        base_url = imported.servers[0].get("url")
    mode = options.get("mode") or ("search" if options.get("metaTools") else "auto")
    return {
        "baseUrl": base_url or "http://127.0.0.1",
        "baseUrlEnv": options.get("baseUrlEnv", f"{prefix}_BASE_URL"),
        "envPrefix": prefix,
        "securitySchemes": imported.security_schemes,
        "credentialEnv": {
            name: f"{prefix}_{env_name(name)}" for name in sorted(imported.security_schemes)
        },
        "credentials": options.get("credentials") or {},
        "mode": mode,
        "contextBudget": options.get("contextBudget"),
    }


def short_name(info: dict[str, Json], servers: list[dict[str, Json]], path: Path) -> str:
    """A short server name for an imported API: a short title, else the API's host without
    its generic parts (``api.github.com`` -> ``github``), else the file's name."""
    title = str(info.get("title") or "")
    words = names.words(re.sub(r"'s\b", "", title))
    if 0 < len(words) <= 3 and sum(len(w) for w in words) <= 24:
        return _valid("-".join(words))
    for server in servers:
        host = urlsplit(str(server.get("url") or "")).hostname or ""
        parts = [p for p in host.split(".") if p and not p.isdigit()]
        if len(parts) > 2 and len(parts[-1]) == 2 and parts[-2] in SECOND_LEVEL:
            parts = parts[:-2]  # shop.com.au, api.example.ac.jp
        while len(parts) > 1 and parts[-1] in GENERIC_TLDS | {"uk", "de", "fr", "jp"}:
            parts = parts[:-1]
        parts = [p for p in parts if p not in GENERIC_HOST_WORDS]
        if parts and host not in ("localhost", "127.0.0.1"):
            return _valid(parts[-1])
    return _valid("-".join(words[:3]) if words else names.kebab(path.stem))


def _valid(name: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-")[:48] or "api"
    return name if name[0].isalpha() else f"api-{name}"


def synthesize(spec: Document, name: str | None = None) -> tuple[Document, Problems]:
    """A whole OpenAPI document given as the build source: the manifest it stands for."""
    imported = import_openapi(spec, {}, keep=True)
    problems = Problems(list(imported.problems))
    server_name = name or short_name(imported.info, imported.servers, Path(spec.file))
    title = str(imported.info.get("title") or server_name)
    data: dict[str, Json] = {
        "mcpgen": 1,
        "server": {
            "name": server_name,
            "version": str(imported.info.get("version") or "0.1.0"),
            "title": title,
        },
        "tools": [],
    }
    if imported.info.get("description"):
        data["server"]["description"] = str(imported.info["description"])
    doc = Document(spec.file, spec.base_dir, data, "", Positions(spec.file))
    doc.overlays[("server",)] = Overlay(_fixed(spec.locate(("info",))), "#/info")
    attach(doc, imported, {})
    return doc, problems


def merge(doc: Document) -> Problems:
    """A manifest with an ``openapi:`` section: import the named document into ``doc``."""
    problems = Problems()
    options, server = doc.data.get("openapi"), doc.data.get("server")
    if not isinstance(options, dict) or not isinstance(options.get("source"), str):
        return problems  # the structural check says what is wrong
    if not isinstance(server, dict) or "name" not in server:
        return problems  # (the API's variables are named after the server)
    where = doc.locate(("openapi", "source"))
    source = doc.base_dir / options["source"]

    def refuse(message: str) -> Problems:  # located here, at the manifest's line
        problems.add(Problem(Level.ERROR, where, "openapi.source", message))
        return problems

    try:
        inside = doc.base_dir.resolve() in source.resolve().parents
    except (OSError, ValueError, RuntimeError):
        inside = False
    if not inside:
        return refuse("must stay inside the manifest's folder")
    if source.is_dir():
        return refuse(f"{options['source']!r} is a folder, not a file")
    if not source.is_file():
        return refuse(f"file {options['source']!r} not found next to the manifest")
    try:
        spec = load_file(source, MAX_DOCUMENT_BYTES)
    except Exception as exc:  # InputError: already located in the spec file
        problems.extend(getattr(exc, "problems", []))
        return problems
    imported = import_openapi(spec, options, keep=True)
    for problem in imported.problems:
        if problem.location.file == OPTIONS_FILE and problem.path is not None:
            continue  # the manifest schema's: the structural check reports it in the manifest
        if problem.location.file == OPTIONS_FILE:  # an options problem: locate it in the manifest
            path = tuple(
                int(p) if p.isdigit() else p for p in re.split(r"[.\[\]]+", problem.field) if p
            )
            problem = Problem(problem.level, doc.locate(path), problem.field, problem.message)
        problems.add(problem)
    declared_defs = doc.data.get("$defs", {}) if isinstance(doc.data.get("$defs"), dict) else {}
    conflicts = sorted(
        n for n, schema in imported.defs.items() if declared_defs.get(n, schema) != schema
    )
    if conflicts:
        message = (
            f"definition(s) {', '.join(conflicts)} are also components of {options['source']} "
            "with different content; rename the manifest's"
        )
        problems.add(Problem(Level.ERROR, doc.locate(("$defs",)), "$defs", message))
        return problems
    attach(doc, imported, options)
    if not (imported.tools or imported.resources or problems.has_errors()):
        message = "no operation was imported (check include/exclude)"
        problems.add(Problem(Level.WARNING, where, "openapi.source", message))
    return problems


def _without_defs(schema: Json) -> Json:
    if isinstance(schema, dict) and "$defs" in schema:
        return {k: v for k, v in schema.items() if k != "$defs"}
    return schema


def _fixed(location: Location) -> Callable[[], Location]:
    return lambda: location


def attach(doc: Document, imported: OpenAPIImport, options: dict[str, Json]) -> None:
    """Add the imported entries to ``doc``, located in the spec, their definitions shared."""
    data, file = doc.data, doc.file
    locate = imported.locate or (lambda src, path: Location(file, 1, 1))

    def overlay_at(src: int, path: tuple[str | int, ...]) -> Overlay:
        at = pointer(path) if src == 0 else f"{pointer(path)} (file {src})"
        # located when asked; no reference to ``doc`` (a cycle would keep the spec alive)
        return Overlay(functools.partial(locate, src, path), at)

    shared = data.setdefault("$defs", {})
    for name, schema in imported.defs.items():
        if name not in shared:
            shared[name] = schema
            src, path = imported.def_origins.get(name, (0, ()))
            doc.overlays[("$defs", name)] = overlay_at(src, path)

    merged = doc.imported = Merged()
    tools = data.setdefault("tools", [])
    for tool, operation in zip(imported.tools, imported.operations, strict=True):
        entry = {k: _without_defs(v) if k in ("input", "output") else v for k, v in tool.items()}
        doc.overlays[("tools", len(tools))] = overlay_at(*operation.origin)
        merged.tools[len(tools)] = operation
        tools.append(entry)
    resources = data.setdefault("resources", [])
    for resource, operation, schema in zip(
        imported.resources, imported.resource_operations, imported.resource_inputs, strict=True
    ):
        if schema is not None:
            merged.resource_inputs[len(resources)] = _without_defs(schema)
        doc.overlays[("resources", len(resources))] = overlay_at(*operation.origin)
        merged.resources[len(resources)] = operation
        resources.append(dict(resource))
    for (kind, index), key in imported.renamed.items():  # a bad name is the rename's
        at: JsonPath = ("openapi", "overrides", key, "name")
        start = len(data[kind]) - len(imported.tools if kind == "tools" else imported.resources)
        where = _fixed(doc.locate(at))  # located now: a closure over ``doc`` is a cycle
        doc.overlays[(kind, start + index, "name")] = Overlay(where, "", dotted(at))
    merged.upstream = upstream_data(imported, str(data["server"]["name"]), options)
