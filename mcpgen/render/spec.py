"""The data file a generated server is built from (``_spec.json``), read by its runtime.

Every string from the manifest that a client will see travels here as JSON, never as code.
The layout is what ``mcpgen/runtime/spec.py`` reads (``format`` 3): schemas share their
definitions through one top-level ``$defs`` (``share_defs``; the runtime undoes it at load).
"""

from __future__ import annotations

import json
from dataclasses import fields
from typing import Any

from mcpgen import cache, vendoring
from mcpgen.identifiers import handler_path
from mcpgen.literals import READABLE_ITEMS, compact_json, one_per_line
from mcpgen.model.resources import Prompt, Resource
from mcpgen.model.settings import camel
from mcpgen.model.types import Completion, Manifest, Tool
from mcpgen.openapi.result import operation_data
from mcpgen.runtime.credential_config import parse_sources, variables
from mcpgen.runtime.spec import OWN_DEFS, SCHEMA_KEYS, SHARED_DEFS, SHARED_NAMES, SPEC_FORMAT

Json = Any
READABLE_TOOLS = READABLE_ITEMS  # above this many tools, _spec.json is compact (10x faster)


def _json(value: Json) -> Json:
    return list(value) if isinstance(value, tuple) else value


def _kept(**entry: Json) -> dict[str, Json]:
    return {key: value for key, value in entry.items() if value is not None}


def tool_entry(tool: Tool, package: str) -> dict[str, Json]:
    own = tool.http is None  # else an imported operation
    return _kept(
        definition=tool.definition,
        ident=tool.ident,
        # advertised compact: the server validates (and searches) with the full parts
        full=tool.full_parts or None,
        scopes=list(tool.scopes) or None,
        timeout=tool.timeout,
        task=tool.task or None,
        enabled=None if tool.enabled else False,
        http=None if tool.http is None else operation_data(tool.http),
        handler=f"src/{package}/{handler_path('tools', tool.ident)}" if own else None,
        model=tool.input_model if own and tool.strict_model_exact else None,
        outputModel=(tool.output_model or None) if own and tool.strict_output_exact else None,
    )


def resource_entry(resource: Resource, package: str) -> dict[str, Json]:
    content, api = resource.content, resource.http
    handler = f"src/{package}/{handler_path('resources', resource.ident)}"
    return _kept(
        definition=resource.definition,
        scopes=list(resource.scopes) or None,
        content=None if content is None else {content.kind: content.value},
        http=None if api is None else operation_data(api),
        input=None if api is None else resource.input_schema,
        handler=handler if api is None and resource.has_handler else None,
        variables=list(resource.variables) or None,
    )


def prompt_entry(prompt: Prompt, package: str) -> dict[str, Json]:
    handler = f"src/{package}/{handler_path('prompts', prompt.ident)}"
    return _kept(
        definition=prompt.definition,
        scopes=list(prompt.scopes) or None,
        handler=handler if prompt.handler else None,
        messages=None if prompt.handler else [m.to_data() for m in prompt.messages],
        enabled=None if prompt.enabled else False,
    )


def completion_entry(completion: Completion, package: str) -> dict[str, Json]:
    entry = _camel(completion, "target ref argument")
    if completion.handler:
        entry["handler"] = f"src/{package}/{handler_path('completions', completion.ident)}"
    else:
        entry["values"] = list(completion.values)
    return entry


def _variable(
    name: str,
    description: str,
    secret: bool = False,
    required: bool = False,
    default: str | None = None,
    **more: Json,
) -> dict[str, Json]:
    """One entry of ``environment``; ``more``: ``transports`` (only these read it) or
    ``credential`` (of the wrapped API: a host sets it with its pair, id and secret)."""
    entry = {"name": name, "description": description, "secret": secret, "required": required}
    return {**entry, "default": default, **more}


def environment(manifest: Manifest) -> list[dict[str, Json]]:
    """Every environment variable the server reads that a deployment may have to set."""
    found: list[dict[str, Json]] = []
    prefix = manifest.http.env_prefix
    network = [t for t in manifest.transports if t != "stdio"]
    where: dict[str, Json] = {"transports": network} if network else {}
    if manifest.shares_state:  # the package carries the Redis backend
        what = "Redis shared by replicas (events, rate limits, token caches, ctx.store); set it from a secret store when it holds a password"
        found.append(
            _variable(prefix + "REDIS_URL", what, default=manifest.http.redis_url, **where)
        )
    if network:  # what only the network transports read
        what = "at least 32 random characters, the same on every replica: seals requestState and shared values"
        found.append(_variable(prefix + "STATE_SECRET", what, secret=True, **where))
        auth = manifest.auth
        if auth.type in ("bearer", "apiKey"):
            keys = "the keys HTTP clients may present (comma separated)"
            found.append(_variable(auth.env, keys, secret=True, required=True, **where))
        if auth.type == "oauth" and auth.introspection_url:
            what = "client id for token introspection"
            found.append(_variable(prefix + "INTROSPECTION_CLIENT_ID", what, **where))
            what = "client secret for token introspection"
            found.append(_variable(prefix + "INTROSPECTION_CLIENT_SECRET", what, True, **where))
    upstream = manifest.upstream
    if upstream:
        url = "base URL of the wrapped API"
        found.append(_variable(upstream["baseUrlEnv"], url, default=upstream["baseUrl"]))
        schemes = upstream.get("securitySchemes", {})
        sources = parse_sources(schemes, upstream.get("credentials"), None)
        for name, scheme, meaning, secret in variables(
            sources, upstream["credentialEnv"].__getitem__
        ):
            found.append(_variable(name, f"{meaning} ({scheme})", secret, credential=True))
    return found


def _camel(obj: Any, names: str = "", **renamed: str) -> dict[str, Json]:
    """The attributes ``names`` (space separated; default: every field) of a model part as
    JSON: camelCase keys (or the ``renamed`` ones), tuples as lists, None left out."""
    found = ((name, getattr(obj, name)) for name in names.split() or [f.name for f in fields(obj)])
    return {renamed.get(n, camel(n)): _json(v) for n, v in found if v is not None}


def spec_data(manifest: Manifest) -> dict[str, Json]:
    server = manifest.server
    http = manifest.http
    auth = manifest.auth
    data: dict[str, Json] = {
        "format": SPEC_FORMAT,
        "server": _camel(
            server, "name version title description instructions website_url package script"
        ),
        "capabilities": _camel(manifest.capabilities),
        # the runtime's Settings defaults, by field name: the model's names are the same
        "settings": {
            "env_prefix": http.env_prefix,
            "transport": manifest.default_transport,
            **{k: _json(v) for k, v in vars(http).items() if k != "env_prefix"},
        },
        "transports": list(manifest.transports),
        "auth": _camel(auth, hide_unauthorized_tools="hideUnauthorized"),
        "mode": manifest.mode,
        "environment": environment(manifest),
        "resources": [resource_entry(r, server.package) for r in manifest.resources],
        "prompts": [prompt_entry(p, server.package) for p in manifest.prompts],
        "completions": [completion_entry(c, server.package) for c in manifest.completions],
    }
    if auth.type not in ("bearer", "apiKey"):
        del data["auth"]["env"]  # the keys of other types are not in the environment
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
    """The search index of a server in search or code mode (``_search.json``, the runtime's
    ``SearchIndex.to_data``), so that the server loads it instead of building it at start.
    The terms of each text are kept in the build cache, by the runtime's code: a rebuild
    analyzes only the texts that changed (GitHub, one description changed: ~40 ms)."""
    if data.get("mode") not in ("search", "code"):
        return None
    from mcpgen.runtime.search import SearchIndex, docs_from_spec
    from mcpgen.runtime.search_words import Analyzer

    store = cache.cache_dir()
    path = store / f"search-terms-{vendoring.runtime_digest()}.json" if store else None
    kept, used = cache.read_pack(path), {}

    class Remembered(Analyzer):
        def terms(self, text: str) -> list[str]:
            found = kept.get(text)
            used[text] = found if isinstance(found, str) else " ".join(super().terms(text))
            return used[text].split()

    class Index(SearchIndex):  # the runtime's index, its terms looked up first
        def _build(self) -> None:
            self.analyzer = Remembered(self.analyzer.stemming)
            super()._build()

    index = Index(docs_from_spec(data))
    if used != kept:
        cache.write(path, compact_json(used))
    return compact_json(index.to_data()) + "\n"


def share_defs(spec: dict[str, Any]) -> dict[str, Any]:
    """``spec`` with every schema's ``$defs`` kept once in ``spec["$defs"]`` (a big API's
    tools each carried the same definitions; the runtime's ``unshare_defs`` undoes it at
    load). A schema keeps the names of its definitions (``$defsShared``, where ``$defs``
    was) and, under ``$defsOwn``, any whose name another schema uses for other content."""
    table: dict[str, Any] = {}

    def shared(schema: Any) -> Any:
        defs = schema.get("$defs") if isinstance(schema, dict) else None
        if not isinstance(defs, dict) or not defs:
            return schema
        own = {n: v for n, v in defs.items() if table.setdefault(n, v) != v}
        names = {SHARED_NAMES: list(defs), **({OWN_DEFS: own} if own else {})}
        out: dict[str, Any] = {}
        for key, value in schema.items():  # (in the place of ``$defs``)
            out.update(names if key == "$defs" else {key: value})
        return out

    tools = []
    for tool in spec.get("tools", []):
        tool = dict(tool)
        for part in ("definition", "full"):
            if isinstance(tool.get(part), dict):
                tool[part] = {
                    k: shared(v) if k in SCHEMA_KEYS else v for k, v in tool[part].items()
                }
        tools.append(tool)
    resources = [
        {**r, "input": shared(r["input"])} if isinstance(r.get("input"), dict) else r
        for r in spec.get("resources", [])
    ]
    out = {**spec, "tools": tools, "resources": resources}
    if table:
        out[SHARED_DEFS] = table
    return out


def spec_json(manifest: Manifest, data: dict[str, Json] | None = None) -> str:
    """Indented for a readable diff; an API with thousands of operations gets one tool per
    line (``one_per_line``)."""
    data = share_defs(spec_data(manifest) if data is None else data)
    if len(manifest.tools) <= READABLE_TOOLS:
        return json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    return one_per_line(data)
