"""OpenAPI as a source: a whole spec, or a manifest's ``openapi:`` section, merged into one
raw manifest document *before* anything is checked.

The importer (``mcpgen.openapi``) does the hard part; this module adds its tools and
resources to the manifest data, each with an overlay that locates it at its operation in
the spec, so that the structural and semantic checks see every tool, whatever its source,
and every problem points at the file the user wrote. How to call each operation travels in
a private ``x-mcpgen-http`` key the model picks up.
"""

from __future__ import annotations

import re
from dataclasses import asdict
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mcpgen import identifiers as names
from mcpgen.load import MAX_DOCUMENT_BYTES, Document, Overlay, Positions, load_file
from mcpgen.openapi import OpenAPIImport, Operation, import_openapi
from mcpgen.openapi.options import OPTIONS_FILE
from mcpgen.openapi.sources import pointer
from mcpgen.problems import Level, Location, Problem, Problems
from mcpgen.runtime.credential_config import env_name

Json = Any
HTTP_KEY = "x-mcpgen-http"
INPUT_KEY = "x-mcpgen-input"
UPSTREAM_KEY = "x-mcpgen-upstream"
GENERIC_HOST_WORDS = frozenset({"api", "www", "rest", "v1", "v2", "v3", "gateway", "service"})
GENERIC_TLDS = frozenset({"com", "org", "net", "io", "dev", "ai", "co", "app", "cloud", "us", "eu"})


def operation_data(operation: Operation) -> dict[str, Json]:
    """How the generated server makes the call, as JSON for ``_spec.json``."""
    data: dict[str, Json] = {
        "method": operation.method,
        "path": operation.path,
        "params": [
            {k: v for k, v in asdict(p).items() if v is not None} for p in operation.parameters
        ],
        "security": operation.security,
        "responseType": operation.response_content_type,
        "wrapped": operation.wrapped_output,
    }
    if operation.tags:
        data["tags"] = list(operation.tags)
    if operation.body is not None:
        data["body"] = asdict(operation.body)
    return data


def upstream_data(imported: OpenAPIImport, server_name: str, options: dict[str, Json]) -> Json:
    prefix = names.env_base(server_name) + "_API"  # GITHUB_API_BASE_URL beside GITHUB_PORT
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
    """A short, readable server name for an imported API: a short title (``Petstore``), else
    the API's host without its generic parts (``api.github.com`` -> ``github``), else the
    file's name."""
    title = str(info.get("title") or "")
    words = names.words(re.sub(r"'s\b", "", title))
    if 0 < len(words) <= 3 and sum(len(w) for w in words) <= 24:
        return _valid("-".join(words))
    for server in servers:
        host = urlsplit(str(server.get("url") or "")).hostname or ""
        parts = [p for p in host.split(".") if p and not p.isdigit()]
        if len(parts) > 1 and parts[-1] in GENERIC_TLDS | {"uk", "de", "fr", "jp"}:
            parts = parts[:-1]
        parts = [p for p in parts if p not in GENERIC_HOST_WORDS]
        if parts and host not in ("localhost", "127.0.0.1"):
            return _valid(parts[-1])
    if words:
        return _valid("-".join(words[:3]))
    return _valid(names.kebab(path.stem))


def _valid(name: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-")[:48] or "api"
    return name if name[0].isalpha() else f"api-{name}"


def synthesize(spec: Document, name: str | None = None) -> tuple[Document, Problems]:
    """A whole OpenAPI document given as the build source: the manifest it stands for."""
    imported = import_openapi(spec, {})
    problems = Problems()
    problems.extend(imported.problems)
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
    info_at = spec.locate(("info",))
    doc.overlays[("server",)] = Overlay(lambda: info_at, "#/info")
    attach(doc, imported, {})
    return doc, problems


def merge(doc: Document) -> Problems:
    """A manifest with an ``openapi:`` section: import the named document into ``doc``."""
    problems = Problems()
    options = doc.data.get("openapi")
    if not isinstance(options, dict) or not isinstance(options.get("source"), str):
        return problems  # the structural check says what is wrong
    where = doc.locate(("openapi", "source"))
    source = doc.base_dir / options["source"]
    try:
        inside = doc.base_dir.resolve() in source.resolve().parents
    except (OSError, ValueError, RuntimeError):
        inside = False
    if not inside:
        problems.add(
            Problem(Level.ERROR, where, "openapi.source", "must stay inside the manifest's folder")
        )
        return problems
    try:
        spec = load_file(source, MAX_DOCUMENT_BYTES)
    except Exception as exc:  # InputError: already located in the spec file
        problems.extend(getattr(exc, "problems", []))
        return problems
    imported = import_openapi(spec, options)
    for problem in imported.problems:
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
        problems.add(
            Problem(
                Level.ERROR,
                doc.locate(("$defs",)),
                "$defs",
                f"definition(s) {', '.join(conflicts)} are also components of {options['source']} "
                "with different content; rename the manifest's",
            )
        )
        return problems
    attach(doc, imported, options)
    if not imported.tools and not imported.resources:
        problems.add(
            Problem(
                Level.WARNING,
                where,
                "openapi.source",
                "no operation was imported (check include/exclude)",
            )
        )
    return problems


def _without_defs(schema: Json) -> Json:
    if isinstance(schema, dict) and "$defs" in schema:
        return {k: v for k, v in schema.items() if k != "$defs"}
    return schema


def attach(doc: Document, imported: OpenAPIImport, options: dict[str, Json]) -> None:
    """Add the imported tools and resources to ``doc`` (after the declared ones), each with
    the overlay that locates it in the spec. The definitions the importer bundled into every
    tool are hoisted to the manifest's shared ``$defs`` (same names): each is then checked
    and turned into a model once, not once per tool."""
    data = doc.data
    locate = imported.locate

    def overlay_at(src: int, path: tuple[str | int, ...]) -> Overlay:
        at = pointer(path) if src == 0 else f"{pointer(path)} (file {src})"

        def where() -> Location:
            return locate(src, path) if locate is not None else Location(doc.file, 1, 1)

        return Overlay(where, at)

    def overlay(operation: Operation) -> Overlay:
        return overlay_at(*operation.origin)

    shared = data.setdefault("$defs", {})
    for name, schema in imported.defs.items():
        if name not in shared:
            shared[name] = schema
            src, path = imported.def_origins.get(name, (0, ()))
            doc.overlays[("$defs", name)] = overlay_at(src, path)

    tools = data.setdefault("tools", [])
    for tool, operation in zip(imported.tools, imported.operations, strict=True):
        entry = {**tool, HTTP_KEY: operation_data(operation)}
        for key in ("input", "output"):
            if key in entry:
                entry[key] = _without_defs(entry[key])
        doc.overlays[("tools", len(tools))] = overlay(operation)
        tools.append(entry)
    resources = data.setdefault("resources", [])
    for resource, operation in zip(imported.resources, imported.resource_operations, strict=True):
        entry = {**resource, HTTP_KEY: operation_data(operation)}
        if INPUT_KEY in resource:
            entry[INPUT_KEY] = _without_defs(resource[INPUT_KEY])
        doc.overlays[("resources", len(resources))] = overlay(operation)
        resources.append(entry)
    data[UPSTREAM_KEY] = upstream_data(imported, str(data["server"]["name"]), options)
