"""OpenAPI as a source: a spec (or a manifest's ``openapi:`` section) becomes manifest data.

The importer (``mcpgen.openapi``) does the hard part; this module turns its result into
the manifest form the rest of the pipeline already knows, attaching to each imported tool
how to call its HTTP operation (a private ``x-mcpgen-http`` key the model picks up).
"""

from __future__ import annotations

import re
from dataclasses import asdict
from pathlib import Path
from typing import Any

from mcpgen import identifiers as names
from mcpgen.load import MAX_DOCUMENT_BYTES, Document, Positions, load_file
from mcpgen.openapi import OpenAPIImport, Operation, import_openapi
from mcpgen.openapi.options import OPTIONS_FILE
from mcpgen.problems import Level, Problem, Problems

Json = Any
HTTP_KEY = "x-mcpgen-http"
UPSTREAM_KEY = "x-mcpgen-upstream"


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
    if operation.body is not None:
        data["body"] = asdict(operation.body)
    return data


def upstream_data(imported: OpenAPIImport, server_name: str, options: dict[str, Json]) -> Json:
    prefix = names.snake(server_name).upper().strip("_")
    base_url = options.get("baseUrl")
    if base_url is None and imported.servers:
        base_url = imported.servers[0].get("url")
    return {
        "baseUrl": base_url or "http://127.0.0.1",
        "baseUrlEnv": options.get("baseUrlEnv", f"{prefix}_BASE_URL"),
        "envPrefix": prefix,
        "securitySchemes": imported.security_schemes,
        "credentialEnv": {
            name: f"{prefix}_{re.sub('[^A-Za-z0-9]', '_', name).upper()}"
            for name in sorted(imported.security_schemes)
        },
        "metaTools": bool(options.get("metaTools", False)),
    }


def _server_name(info: dict[str, Json], path: Path) -> str:
    title = str(info.get("title") or path.stem)
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", names.kebab(title)).strip("-")[:48] or "api"
    return name if name[0].isalpha() else f"api-{name}"


def manifest_from_spec(doc: Document, strict: bool) -> tuple[Document | None, Problems]:
    """A whole OpenAPI document given as the build source."""
    imported = import_openapi(doc, {})
    problems = Problems()
    problems.extend(imported.problems)
    if problems.has_errors(strict):
        return None, problems
    name = _server_name(imported.info, Path(doc.file))
    data: dict[str, Json] = {
        "mcpgen": 1,
        "server": {
            "name": name,
            "version": str(imported.info.get("version") or "0.1.0"),
            "title": str(imported.info.get("title") or name),
        },
        "tools": [],
    }
    if imported.info.get("description"):
        data["server"]["description"] = str(imported.info["description"])
    attach(data, imported, {})
    # The synthesized manifest has no text of its own: problems are located in the spec.
    return Document(doc.file, doc.base_dir, data, "", Positions(doc.file)), problems


def merge_manifest_openapi(doc: Document, strict: bool) -> Problems:
    """A manifest with an ``openapi:`` section: import the named document into ``doc``."""
    problems = Problems()
    options: dict[str, Json] = doc.data["openapi"]
    where = doc.locate(("openapi", "source"))
    source = doc.base_dir / options["source"]
    try:
        root = doc.base_dir.resolve()
        inside = root in source.resolve().parents
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
    if problems.has_errors(strict):
        return problems
    declared = {t["name"] for t in doc.data.get("tools", [])}
    clash = sorted(declared & {t["name"] for t in imported.tools})
    if clash:
        problems.add(
            Problem(
                Level.ERROR,
                where,
                "openapi",
                f"imported tool(s) {', '.join(clash)} clash with declared tools; "
                "rename them with openapi.overrides",
            )
        )
        return problems
    declared_defs = doc.data.get("$defs", {})
    conflicts = sorted(
        name for name, schema in imported.defs.items() if declared_defs.get(name, schema) != schema
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
    attach(doc.data, imported, options)
    return problems


def _without_defs(schema: Json) -> Json:
    if isinstance(schema, dict) and "$defs" in schema:
        return {k: v for k, v in schema.items() if k != "$defs"}
    return schema


def attach(data: dict[str, Json], imported: OpenAPIImport, options: dict[str, Json]) -> None:
    """Add the imported tools and resources to ``data``. The definitions the importer
    bundled into every tool are hoisted to the manifest's shared ``$defs`` (same names):
    each is then checked and turned into a model once, not once per tool."""
    shared = data.setdefault("$defs", {})
    for name, schema in imported.defs.items():
        shared.setdefault(name, schema)
    tools = data.setdefault("tools", [])
    for tool, operation in zip(imported.tools, imported.operations, strict=True):
        entry = {**tool, HTTP_KEY: operation_data(operation)}
        for key in ("input", "output"):
            if key in entry:
                entry[key] = _without_defs(entry[key])
        tools.append(entry)
    resources = data.setdefault("resources", [])
    for resource, operation in zip(imported.resources, imported.resource_operations, strict=True):
        resources.append({**resource, HTTP_KEY: operation_data(operation)})
    data[UPSTREAM_KEY] = upstream_data(imported, data["server"]["name"], options)
