"""The data file a generated server is built from (``_spec.json``), read by its runtime.

Every string from the manifest that a client will see travels here as JSON, never as code.
The layout is what ``mcpgen/runtime/spec.py`` reads (``format`` 3): schemas share their
definitions through one top-level ``$defs`` (``share_defs``; the runtime undoes it at load).
"""

from __future__ import annotations

import json
from typing import Any

from mcpgen.identifiers import handler_path
from mcpgen.model.prompts import Prompt
from mcpgen.model.resources import Resource
from mcpgen.model.types import Manifest, Tool
from mcpgen.openapi.result import operation_data
from mcpgen.runtime.credential_config import env_suffixes, parse_sources
from mcpgen.runtime.spec import SPEC_FORMAT, share_defs

Json = Any
READABLE_TOOLS = 200  # above this many tools, _spec.json is compact (10x faster to write)


def _json(value: Json) -> Json:
    return list(value) if isinstance(value, tuple) else value


def _present(pairs: tuple[tuple[str, Json], ...]) -> dict[str, Json]:
    return {key: value for key, value in pairs if value is not None}


def tool_entry(tool: Tool, package: str) -> dict[str, Json]:
    entry: dict[str, Json] = {"definition": tool.definition, "ident": tool.ident}
    full = tool.full_parts
    if full:  # advertised compact: the server validates (and searches) with the full parts
        entry["full"] = full
    if tool.scopes:
        entry["scopes"] = list(tool.scopes)
    if tool.timeout is not None:
        entry["timeout"] = tool.timeout
    if tool.task:
        entry["task"] = tool.task
    if not tool.enabled:
        entry["enabled"] = False
    if tool.http is not None:
        entry["http"] = operation_data(tool.http)
    else:
        entry["handler"] = f"src/{package}/{handler_path('tools', tool.ident)}"
        if tool.strict_model_exact:
            entry["model"] = tool.input_model
    return entry


def resource_entry(resource: Resource, package: str) -> dict[str, Json]:
    entry: dict[str, Json] = {"definition": resource.definition}
    if resource.scopes:
        entry["scopes"] = list(resource.scopes)
    if resource.content is not None:
        entry["content"] = {resource.content.kind: resource.content.value}
    if resource.http is not None:
        entry["http"] = operation_data(resource.http)
        if resource.input_schema is not None:
            entry["input"] = resource.input_schema
    elif resource.has_handler:
        entry["handler"] = f"src/{package}/{handler_path('resources', resource.ident)}"
    if resource.variables:
        entry["variables"] = list(resource.variables)
    return entry


def prompt_entry(prompt: Prompt, package: str) -> dict[str, Json]:
    entry: dict[str, Json] = {"definition": prompt.definition}
    if prompt.scopes:
        entry["scopes"] = list(prompt.scopes)
    if prompt.handler:
        entry["handler"] = f"src/{package}/{handler_path('prompts', prompt.ident)}"
    else:
        entry["messages"] = [m.to_data() for m in prompt.messages]
    if not prompt.enabled:
        entry["enabled"] = False
    return entry


def environment(manifest: Manifest) -> list[dict[str, Json]]:
    """Every environment variable the server reads that a deployment may have to set."""
    found: list[dict[str, Json]] = []

    def add(
        name: str,
        description: str,
        *,
        secret: bool = False,
        required: bool = False,
        default: str | None = None,
        transports: tuple[str, ...] = (),
        credential: bool = False,
    ) -> None:
        entry = {
            "name": name,
            "description": description,
            "secret": secret,
            "required": required,
            "default": default,
        }
        if credential:  # of the wrapped API: a host sets it with its pair (id and secret)
            entry["credential"] = True
        if transports:
            entry["transports"] = list(transports)
        found.append(entry)

    prefix = manifest.http.env_prefix
    # the variables of the offered network transports (none when only stdio is offered)
    network = tuple(t for t in manifest.transports if t != "stdio")
    if manifest.shares_state:  # the package carries the Redis backend
        add(
            prefix + "REDIS_URL",
            "Redis shared by replicas (events, rate limits, token caches, ctx.store); set it from a secret store when it holds a password",
            default=manifest.http.redis_url,
            transports=network,
        )
    if network:  # what only the network transports read
        add(
            prefix + "STATE_SECRET",
            "at least 32 random characters, the same on every replica: seals requestState and shared values",
            secret=True,
            transports=network,
        )
        auth = manifest.auth
        if auth.type in ("bearer", "apiKey"):
            add(
                auth.env,
                "the keys HTTP clients may present (comma separated)",
                secret=True,
                required=True,
                transports=network,
            )
        if auth.type == "oauth" and auth.introspection_url:
            add(
                prefix + "INTROSPECTION_CLIENT_ID",
                "client id for token introspection",
                transports=network,
            )
            add(
                prefix + "INTROSPECTION_CLIENT_SECRET",
                "client secret for token introspection",
                secret=True,
                transports=network,
            )
    upstream = manifest.upstream
    if upstream:
        add(upstream["baseUrlEnv"], "base URL of the wrapped API", default=upstream["baseUrl"])
        schemes = upstream.get("securitySchemes", {})
        sources = parse_sources(schemes, upstream.get("credentials"), None)
        for scheme, source in sources.items():
            base = upstream["credentialEnv"][scheme]
            for suffix, meaning, secret in env_suffixes(source):
                add(base + suffix, f"{meaning} ({scheme})", secret=secret, credential=True)
    return found


def spec_data(manifest: Manifest) -> dict[str, Json]:
    server = manifest.server
    caps = manifest.capabilities
    http = manifest.http
    auth = manifest.auth
    data: dict[str, Json] = {
        "format": SPEC_FORMAT,
        "server": _present(
            (
                ("name", server.name),
                ("version", server.version),
                ("title", server.title),
                ("description", server.description),
                ("instructions", server.instructions),
                ("websiteUrl", server.website_url),
                ("package", server.package),
                ("script", server.script),
            )
        ),
        "capabilities": {
            "toolsListChanged": caps.tools_list_changed,
            "resourcesListChanged": caps.resources_list_changed,
            "resourcesSubscribe": caps.resources_subscribe,
            "promptsListChanged": caps.prompts_list_changed,
            "logging": caps.logging,
            "completions": caps.completions,
            "pageSize": caps.page_size,
        },
        # the runtime's Settings defaults, by field name: the model's names are the same
        "settings": {
            "env_prefix": http.env_prefix,
            "transport": manifest.default_transport,
            **{k: _json(v) for k, v in vars(http).items() if k != "env_prefix"},
        },
        "transports": list(manifest.transports),
        "auth": _present(
            (
                ("type", auth.type),
                ("header", auth.header),
                ("env", auth.env if auth.type in ("bearer", "apiKey") else None),
                ("issuer", auth.issuer),
                ("audience", auth.audience),
                ("jwksUrl", auth.jwks_url),
                ("jwksFile", auth.jwks_file),
                ("introspectionUrl", auth.introspection_url),
                ("hideUnauthorized", auth.hide_unauthorized_tools),
                ("algorithms", list(auth.algorithms)),
                ("leeway", auth.leeway),
                ("scopesSupported", list(auth.scopes_supported)),
            )
        ),
        "mode": manifest.mode,
        "environment": environment(manifest),
        "resources": [resource_entry(r, server.package) for r in manifest.resources],
        "prompts": [prompt_entry(p, server.package) for p in manifest.prompts],
        "completions": [
            {
                "target": c.target,
                "ref": c.ref,
                "argument": c.argument,
                **(
                    {"handler": f"src/{server.package}/{handler_path('completions', c.ident)}"}
                    if c.handler
                    else {"values": list(c.values)}
                ),
            }
            for c in manifest.completions
        ],
    }
    if manifest.upstream is not None:
        data["upstream"] = manifest.upstream
        if auth.enabled and auth.header.lower() != "authorization":
            # the header this server's own callers authenticate with: never an upstream source
            data["upstream"] = {**manifest.upstream, "serverAuthHeader": auth.header}
    if manifest.code_mode:
        data["codeMode"] = manifest.code_mode
    if manifest.observability.metrics != "protected":
        data["observability"] = {"metrics": manifest.observability.metrics}
    data["tools"] = [tool_entry(t, server.package) for t in manifest.tools]  # last: the biggest
    return data


def search_json(data: dict[str, Json]) -> str | None:
    """The search index of a server in search or code mode (``_search.json``), computed here
    so that the server loads it at start instead of building it: the runtime's own
    ``SearchIndex.to_data`` over the operations of ``_spec.json`` data. It carries a
    fingerprint of what it was made from; a server whose operations differ builds its own."""
    if data.get("mode") not in ("search", "code"):
        return None
    from mcpgen.runtime.search import SearchIndex, docs_from_spec

    index = SearchIndex(docs_from_spec(data))
    return json.dumps(index.to_data(), ensure_ascii=False, separators=(",", ":")) + "\n"


def spec_json(manifest: Manifest, data: dict[str, Json] | None = None) -> str:
    """Indented for a readable diff; an API with thousands of operations gets compact JSON
    (Python's fast encoder does not indent) with one tool per line."""
    data = share_defs(spec_data(manifest) if data is None else data)
    if len(manifest.tools) <= READABLE_TOOLS:
        return json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    lines = []
    for index, (key, value) in enumerate(data.items()):
        comma = "," if index < len(data) - 1 else ""
        name = json.dumps(key)
        if isinstance(value, list) and value:
            items = [json.dumps(item, ensure_ascii=False) for item in value]
            lines.append(f"{name}: [\n" + ",\n".join(items) + f"\n]{comma}")
        else:
            lines.append(f"{name}: {json.dumps(value, ensure_ascii=False)}{comma}")
    return "{\n" + "\n".join(lines) + "\n}\n"
