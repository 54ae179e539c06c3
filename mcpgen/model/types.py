"""The intermediate model: what every later stage (render, write) sees.

Built once from a validated manifest by ``normalize``. Immutable and normalized: defaults
are filled in, Python names are derived once, JSON Schemas are self-contained. Templates
never see the raw manifest.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from mcpgen.problems import Location

Json = Any
ContentKind = Literal["text", "blob"]


# Every distribution a generated package imports (``mcpgen/runtime`` and the generated files;
# tests/test_dependencies.py scans the imports of every example against these).
RUNTIME_DEPENDENCIES = (
    "mcp>=2.3,<2.4",
    "mcp-types>=2.3,<2.4",
    "pydantic>=2.11,<3",
    "jsonschema>=4.23,<5",
    "anyio>=4.5,<5",
    "httpx2>=2.16,<3",
    "starlette>=0.40",
    "sse-starlette>=2.1",
    "uvicorn>=0.30",
    "websockets>=13",
    "jinja2>=3.1,<4",
    "pyjwt[crypto]>=2.10",
    "uritemplate>=4.1,<5",
)
SANDBOX_DEPENDENCY = "pydantic-monty>=1.4,<2"
TEST_DEPENDENCIES = (
    "pytest>=8",
    "pytest-timeout>=2.3",
    "mypy>=1.15",
    "types-jsonschema",
    "cryptography>=42",
)


def mode_tools(mode: str) -> list[dict[str, Json]]:
    """The definitions of a mode's own tools, from the runtime's data file."""
    path = Path(__file__).resolve().parents[1] / "runtime" / "modes.json"
    data: dict[str, list[dict[str, Json]]] = json.loads(path.read_text("utf-8"))
    return data.get(mode, [])


def canonical_json(value: Json) -> str:
    """Compact, key-sorted JSON: the form used for hashing and drift detection."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class Server:
    name: str
    version: str
    title: str | None
    description: str | None
    instructions: str | None
    website_url: str | None
    package: str
    distribution: str
    script: str
    class_prefix: str
    python_requires: str
    dependencies: tuple[str, ...]


@dataclass(frozen=True)
class Capabilities:
    tools_list_changed: bool
    resources_list_changed: bool
    resources_subscribe: bool
    prompts_list_changed: bool
    logging: bool
    completions: bool
    page_size: int


@dataclass(frozen=True)
class Tool:
    name: str
    title: str | None
    description: str | None
    input_schema: Json
    output_schema: Json | None
    annotations: Json | None
    context: bool
    scopes: tuple[str, ...]
    timeout: float | None
    enabled: bool
    icons: tuple[Json, ...]
    meta: Json | None
    ident: str
    input_model: str
    output_model: str | None
    http: Json | None = None  # how to call the upstream operation (OpenAPI tools)
    # Strict validation of the input model implies the input schema (see ``fastpath``): the
    # server may skip jsonschema when the strict model accepts a call's arguments.
    strict_model_exact: bool = False
    # What tools/list shows instead of the full parts (``model.compact.advertise``; a key
    # with the value None is left out); validation keeps the full schemas.
    advertised: Json | None = None

    @property
    def mode_tool(self) -> bool:
        """One of the search or code mode's own tools (not in ``_spec.json``)."""
        return isinstance(self.http, dict) and "mode" in self.http

    @property
    def client_method(self) -> str:
        from mcpgen.identifiers import client_method

        return client_method(self.ident)

    @cached_property
    def params(self) -> list[Any]:
        """The typed client's keyword arguments (``model.params.Param``), required first."""
        from mcpgen.model.params import params

        return params(self.input_schema)

    @cached_property
    def full_definition(self) -> dict[str, Json]:
        """The tool with its full schemas and texts (what validation uses)."""
        result: dict[str, Json] = {"name": self.name}
        if self.title is not None:
            result["title"] = self.title
        if self.description is not None:
            result["description"] = self.description
        result["inputSchema"] = self.input_schema
        if self.output_schema is not None:
            result["outputSchema"] = self.output_schema
        if self.annotations:
            result["annotations"] = self.annotations
        if self.icons:
            result["icons"] = list(self.icons)
        if self.meta:
            result["_meta"] = self.meta
        return result

    @cached_property
    def definition(self) -> dict[str, Json]:
        """The tool as tools/list advertises it (MCP wire names): compact for an imported
        operation (``advertised``), else as written."""
        if not self.advertised:
            return self.full_definition
        full = self.full_definition
        result: dict[str, Json] = {}
        for key in ("name", "title", "description", "inputSchema", "outputSchema", *full):
            value = self.advertised.get(key, full.get(key)) if key != "name" else self.name
            if value is not None and key not in result:
                result[key] = value
        return result

    @property
    def full_parts(self) -> dict[str, Json]:
        """The parts of ``full_definition`` the advertised definition shows otherwise (the
        server validates with these schemas, and searches these texts)."""
        shown = self.definition
        return {
            key: value
            for key, value in self.full_definition.items()
            if key in ("title", "description", "inputSchema", "outputSchema")
            and shown.get(key) != value
        }

    @cached_property
    def wire_json(self) -> str:
        """``definition`` as compact JSON: what tools/list sends (and what it costs)."""
        return json.dumps(self.definition, ensure_ascii=False, separators=(",", ":"))

    @cached_property
    def definition_json(self) -> str:
        """``definition`` as JSON (``json.dumps`` separators, non-ASCII kept), made once per
        build for both the context cost and ``_spec.json``: a big API's tools are megabytes."""
        return json.dumps(self.definition, ensure_ascii=False)


@dataclass(frozen=True)
class StaticContent:
    kind: ContentKind
    value: str  # text, or base64 for blobs


@dataclass(frozen=True)
class Variable:
    """A URI template variable (or prompt argument) and the keyword argument a handler and
    the typed client take it as."""

    name: str
    python: str
    optional: bool = False

    @property
    def required(self) -> bool:
        return not self.optional


@dataclass(frozen=True)
class Resource:
    name: str
    title: str | None
    description: str | None
    mime_type: str | None
    size: int | None
    uri: str | None
    uri_template: str | None
    variables: tuple[str, ...]
    content: StaticContent | None
    context: bool
    subscribe: bool
    annotations: Json | None
    icons: tuple[Json, ...]
    ident: str
    http: Json | None = None
    scopes: tuple[str, ...] = ()
    input_schema: Json | None = None  # an imported resource: its operation's parameters

    @property
    def is_template(self) -> bool:
        return self.uri_template is not None

    @property
    def parameters(self) -> tuple[Variable, ...]:
        """The template's variables: handler and client keyword arguments (query ones optional)."""
        import re

        from mcpgen.identifiers import kwarg

        query = {
            name.split(":")[0].rstrip("*")
            for body in re.findall(r"\{[?&]([^}]*)\}", self.uri_template or "")
            for name in body.split(",")
        }
        return tuple(Variable(v, kwarg(v), v in query) for v in self.variables)

    @property
    def client_method(self) -> str:
        return "read_" + self.ident

    @property
    def example_uri(self) -> str:
        """A URI this resource answers for (the tests read it): example values for the
        template's variables, optional (query) ones left out."""
        if self.uri_template is None:
            return str(self.uri)
        import re
        from urllib.parse import quote

        from mcpgen.model.examples import valid_example

        example = valid_example(self.input_schema) if self.input_schema else None
        values = example if isinstance(example, dict) else {}

        def expand(match: re.Match[str]) -> str:
            body = match.group(1)
            operator = body[0] if body[0] in "+#./;?&" else ""
            names = [n.split(":")[0].rstrip("*") for n in (body[1:] if operator else body).split(",")]
            if operator in "?&" and operator:
                return ""
            parts = [quote(str(values.get(n, "example")), safe="" if operator in "./;" or not operator else "/") for n in names]
            if operator == ";":
                return "".join(f";{n}={p}" for n, p in zip(names, parts, strict=True))
            lead = {"": "", "+": "", "#": "#", ".": ".", "/": "/"}[operator]
            return lead + (lead if operator in "./" else ",").join(parts)

        return re.sub(r"\{([^{}]+)\}", expand, self.uri_template)

    @property
    def has_handler(self) -> bool:
        return self.content is None and self.http is None

    @property
    def definition(self) -> dict[str, Json]:
        """The resource (or template) as resources/list or resources/templates/list shows it."""
        result: dict[str, Json] = {}
        if self.uri_template is not None:
            result["uriTemplate"] = self.uri_template
        else:
            result["uri"] = self.uri
        result["name"] = self.name
        for key, value in (
            ("title", self.title),
            ("description", self.description),
            ("mimeType", self.mime_type),
            ("size", self.size),
            ("annotations", self.annotations),
        ):
            if value is not None:
                result[key] = value
        if self.icons:
            result["icons"] = list(self.icons)
        return result


@dataclass(frozen=True)
class PromptArgument:
    name: str
    title: str | None
    description: str | None
    required: bool


@dataclass(frozen=True)
class PromptMessage:
    role: Literal["user", "assistant"]
    kind: Literal["text", "resource", "image", "audio"]
    text: str | None = None  # a template, for kind == "text"
    uri: str | None = None
    mime_type: str | None = None
    content: StaticContent | None = None

    def to_data(self) -> dict[str, Json]:
        data: dict[str, Json] = {"role": self.role, "kind": self.kind}
        if self.text is not None:
            data["text"] = self.text
        if self.uri is not None:
            data["uri"] = self.uri
        if self.mime_type is not None:
            data["mimeType"] = self.mime_type
        if self.content is not None:
            data[self.content.kind] = self.content.value
        return data


@dataclass(frozen=True)
class Prompt:
    name: str
    title: str | None
    description: str | None
    arguments: tuple[PromptArgument, ...]
    messages: tuple[PromptMessage, ...]
    handler: bool
    context: bool
    enabled: bool
    icons: tuple[Json, ...]
    ident: str
    class_name: str
    scopes: tuple[str, ...] = ()

    @property
    def client_method(self) -> str:
        return "prompt_" + self.ident

    @property
    def parameters(self) -> tuple[Variable, ...]:
        """The arguments as the typed client's keyword arguments, required ones first."""
        from mcpgen.identifiers import kwarg

        given = [Variable(a.name, kwarg(a.name), not a.required) for a in self.arguments]
        return tuple(sorted(given, key=lambda v: v.optional))

    @property
    def definition(self) -> dict[str, Json]:
        result: dict[str, Json] = {"name": self.name}
        if self.title is not None:
            result["title"] = self.title
        if self.description is not None:
            result["description"] = self.description
        if self.arguments:
            result["arguments"] = [
                {
                    k: v
                    for k, v in (
                        ("name", a.name),
                        ("title", a.title),
                        ("description", a.description),
                        ("required", a.required),
                    )
                    if v is not None
                }
                for a in self.arguments
            ]
        if self.icons:
            result["icons"] = list(self.icons)
        return result


@dataclass(frozen=True)
class Completion:
    target: Literal["prompt", "resource"]
    ref: str  # prompt name or URI template
    argument: str
    values: tuple[str, ...]
    handler: bool
    ident: str


@dataclass(frozen=True)
class HttpSettings:
    """Defaults for the HTTP transports; each one can be changed at run time by a flag or by
    the environment variable ``{env_prefix}{NAME}`` (see the generated ``_http.py``)."""

    host: str
    port: int
    path: str
    stateless: bool
    json_response: bool
    allowed_hosts: tuple[str, ...]
    allowed_origins: tuple[str, ...]
    cors_origins: tuple[str, ...]
    max_body_size: int
    rate_limit: float  # requests per second per client; 0 = no limit
    rate_burst: int
    retry_interval: int  # milliseconds; 0 = no retry field
    event_store_size: int  # 0 = no resumability
    shutdown_timeout: float
    env_prefix: str  # e.g. "CALCULATOR_"
    max_sessions: int = 1000
    session_idle_timeout: float = 600.0


@dataclass(frozen=True)
class Auth:
    """How HTTP clients authenticate. Secrets never appear here: static keys are read from
    the environment variable ``env``; OAuth needs only public data (issuer, audience, keys,
    the introspection endpoint: its client secret is read from the environment)."""

    type: Literal["none", "bearer", "apiKey", "oauth"]
    header: str
    env: str
    issuer: str | None
    audience: str | None
    jwks_url: str | None
    jwks_file: str | None
    introspection_url: str | None
    hide_unauthorized_tools: bool
    algorithms: tuple[str, ...]
    leeway: float
    scopes_supported: tuple[str, ...]  # every scope some tool needs, sorted

    @property
    def enabled(self) -> bool:
        return self.type != "none"


@dataclass(frozen=True)
class Manifest:
    """The whole normalized description of one server."""

    source: str
    server: Server
    capabilities: Capabilities
    tools: tuple[Tool, ...]
    resources: tuple[Resource, ...]
    prompts: tuple[Prompt, ...]
    completions: tuple[Completion, ...]
    shared_defs: Json
    default_transport: str
    http: HttpSettings
    auth: Auth
    openapi: Json | None = None
    upstream: Json | None = None  # base URL, credentials, meta-tool mode (OpenAPI sources)
    code_mode: Json | None = None  # openapi.codeMode: the sandbox's limits (runtime names)
    # Where the schema behind each model class was written: for located build errors.
    origins: dict[str, tuple[str, Location]] = field(default_factory=dict, compare=False)

    @property
    def mode(self) -> str:
        """How a wrapped API's operations reach clients: ``tools`` (one tool each),
        ``search`` (search/describe/call tools) or ``code`` (search_docs and execute);
        ``auto`` was resolved when the model was built (``mode_reason`` says why)."""
        if not self.upstream:
            return "tools"
        return str(self.upstream.get("mode") or "tools")

    @property
    def mode_reason(self) -> str | None:
        return self.upstream.get("modeReason") if self.upstream else None

    @property
    def meta_tools(self) -> bool:
        return self.mode != "tools"

    @property
    def advertised_tools(self) -> tuple[Tool, ...]:
        """The tools tools/list shows: every tool, or the declared tools and the mode's own."""
        if self.mode == "tools":
            return self.tools
        own = mode_tools(self.mode)
        declared = tuple(t for t in self.tools if not t.http)
        return declared + tuple(
            Tool(
                name=d["name"], title=d.get("title"), description=d.get("description"),
                input_schema=d["inputSchema"], output_schema=d.get("outputSchema"),
                annotations=d.get("annotations"), context=False, scopes=(), timeout=None,
                enabled=True, icons=(), meta=None, ident=d["name"], input_model="",
                output_model=None, http={"mode": self.mode},
            )
            for d in own
        )  # fmt: skip

    @property
    def dependencies(self) -> list[str]:
        """What the generated package imports (its runtime included), and the user's own."""
        found = list(RUNTIME_DEPENDENCIES)
        if self.mode == "code":
            found.append(SANDBOX_DEPENDENCY)
        return [*found, *self.server.dependencies]

    @property
    def test_dependencies(self) -> list[str]:
        return list(TEST_DEPENDENCIES)

    @property
    def wiring_returns(self) -> list[str]:
        """The return types ``server.py``'s wiring functions use."""
        kinds = (
            ("PromptReturn", self.handled_prompts),
            ("ResourceReturn", self.handled_resources),
            ("ToolReturn", self.handled_tools),
        )
        return [name for name, items in kinds if items]

    @property
    def client_typing(self) -> list[str]:
        """The ``typing`` names the typed client's annotations use."""
        import re

        used = {w for t in self.tools for p in t.params for w in re.findall(r"\b(Any|Literal)\b", p.annotation)}
        return sorted(used)

    @property
    def handled_tools(self) -> tuple[Tool, ...]:
        """Tools whose code the user writes (not imported operations)."""
        return tuple(t for t in self.tools if not t.http)

    @property
    def handled_resources(self) -> tuple[Resource, ...]:
        return tuple(r for r in self.resources if r.has_handler)

    @property
    def handled_prompts(self) -> tuple[Prompt, ...]:
        return tuple(p for p in self.prompts if p.handler)

    @property
    def handled_completions(self) -> tuple[Completion, ...]:
        return tuple(c for c in self.completions if c.handler)

    @property
    def fixed_resources(self) -> tuple[Resource, ...]:
        return tuple(r for r in self.resources if not r.is_template)

    @property
    def resource_templates(self) -> tuple[Resource, ...]:
        return tuple(r for r in self.resources if r.is_template)

    def to_data(self) -> dict[str, Json]:
        """A JSON-ready view of the model (``mcpgen inspect --json``)."""
        from dataclasses import asdict

        data = asdict(self)
        data.pop("origins")
        return data
