"""A project -> its MCP Registry ``server.json``, checked against ``schemas/`` (2025-12-11)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlsplit

from mcpgen.host_entry import ProjectError
from mcpgen.model.relax import shorten

from .project import Json, Project

SCHEMA_BASE = "https://static.modelcontextprotocol.io/schemas/"  # then DATE/server.schema.json
SCHEMA_URL = SCHEMA_BASE + "2025-12-11/server.schema.json"
SCHEMA_PATH = Path(__file__).parent / "schemas" / "server.schema.json"
NAME = re.compile(r"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$")
PLACEHOLDER_NAMESPACE = "io.github.YOUR-GITHUB-USER"


def problems(document: Json) -> list[str]:
    """Every way ``document`` breaks the schema, as ``path: message`` lines."""
    import jsonschema

    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    errors = jsonschema.Draft7Validator(schema).iter_errors(document)
    ordered = sorted(errors, key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}" for e in ordered]


def check_replaceable(path: Path, project: Project) -> None:
    """Refuse a file at ``path`` unless it is a server.json for ``project``: a registry
    ``$schema`` and a PyPI package of its distribution (not its name: it may be edited)."""
    if not path.exists():
        return
    try:
        document = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError, RecursionError):  # a folder, not UTF-8, not JSON
        document = None
    match document:
        case {"$schema": str(url), "packages": list(packages)}:
            ours = url.startswith(SCHEMA_BASE) and url.endswith("/server.schema.json")
            pypi = {"registryType": "pypi", "identifier": project.distribution}
            if ours and any(isinstance(p, dict) and pypi.items() <= p.items() for p in packages):
                return
    raise ProjectError(
        f"{path}: exists and is not a server.json mcpgen wrote for this project; move it away "
        "or give --server-json PATH (nothing written)"
    )


def _variables(project: Project) -> list[dict[str, Json]]:
    out = []
    for var in project.needed_env("stdio"):
        item: dict[str, Json] = {"name": var.name, "format": "string"}
        item |= {"description": var.description} if var.description else {}
        item |= {"isRequired": var.required, "isSecret": var.secret}
        if var.default is not None and not var.secret:
            item["default"] = var.default
        out.append(item)
    return out


def server_json(
    project: Project,
    name: str | None = None,
    mcpb_url: str | None = None,
    mcpb_sha256: str | None = None,
    repository: str | None = None,
) -> Json:
    """The registry entry: the PyPI package (run with ``uvx``) and, with ``mcpb_url``, the
    bundle; ``name``: the registry name (default: a placeholder namespace)."""
    registry_name = name or f"{PLACEHOLDER_NAMESPACE}/{project.name}"
    if not NAME.match(registry_name):
        raise ProjectError(
            f"registry name {registry_name!r} must be NAMESPACE/NAME in reverse-DNS form, "
            "for example io.github.alice/weather"
        )
    common: dict[str, Json] = {"version": project.version, "transport": {"type": "stdio"}}
    if variables := _variables(project):
        common["environmentVariables"] = variables
    arguments = [{"type": "named", "name": "--transport", "value": "stdio"}]
    pypi = {"registryType": "pypi", "identifier": project.distribution, "runtimeHint": "uvx"}
    packages = [{**pypi, "packageArguments": arguments, **common}]
    if mcpb_url is not None:
        bundle = {"registryType": "mcpb", "identifier": mcpb_url, "fileSha256": mcpb_sha256}
        packages.append({**bundle, **common})
    document: dict[str, Json] = {
        "$schema": SCHEMA_URL,
        "name": registry_name,
        "title": shorten(project.title, 100),
        "description": shorten(project.description or project.title, 100),
        "version": project.version,
    }
    website = project.server.get("websiteUrl")
    if isinstance(website, str) and website:
        document["websiteUrl"] = website
    if repository:  # its source: the host's name without its top-level domain ("github")
        host = urlsplit(repository).hostname or ""
        source = host.split(".")[-2] if "." in host else host
        document["repository"] = {"url": repository, "source": source or "git"}
    document["packages"] = packages
    if found := problems(document):
        raise ProjectError("server.json would not validate: " + "; ".join(found))
    return document
