"""The model every later stage sees, built once by ``model.build``: defaults filled in,
Python names derived, JSON Schemas self-contained. Templates never see the raw manifest."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from mcpgen import identifiers
from mcpgen.literals import compact_json
from mcpgen.model import settings
from mcpgen.model.params import Param, params
from mcpgen.model.resources import Prompt, Resource, wire
from mcpgen.model.settings import Auth, Ci, Deploy, HttpSettings, Observability, read
from mcpgen.openapi.result import Operation
from mcpgen.problems import Location

Json = Any


@dataclass(frozen=True, eq=False)
class Origins:
    """Model class name -> (field path, path in the source document) of its schema."""

    paths: dict[str, tuple[str, tuple[str | int, ...]]] = field(default_factory=dict)
    locate: Callable[[tuple[str | int, ...]], Location] | None = None

    def get(self, name: str) -> tuple[str, Location] | None:
        found = self.paths.get(name)
        if found is None or self.locate is None:
            return None
        return found[0], self.locate(found[1])


# the ``otel`` extra: imported only when OTEL_* is set or for GET /metrics (runtime/telemetry*.py)
OTEL_DEPENDENCIES = (
    "opentelemetry-sdk>=1.45,<2",
    "opentelemetry-exporter-otlp-proto-http>=1.45,<2",
)
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


@dataclass(frozen=True, kw_only=True)
class Server:
    name: str
    version: str = "0.1.0"
    title: str | None = None
    description: str | None = None
    instructions: str | None = None
    website_url: str | None = None
    package: str
    distribution: str
    script: str
    class_prefix: str
    python_requires: str = ">=3.11"
    dependencies: tuple[str, ...] = ()

    @property
    def package_version(self) -> str:
        """The version pip sees (PEP 440); ``version`` is what clients are told."""
        return identifiers.package_version(self.version)

    @property
    def env_prefix(self) -> str:
        """The prefix of the run-time environment variables: ``my-server`` -> ``MY_SERVER_``."""
        return identifiers.env_base(self.name) + "_"


@dataclass(frozen=True)
class Capabilities:
    tools_list_changed: bool
    resources_list_changed: bool
    resources_subscribe: bool
    prompts_list_changed: bool
    logging: bool
    completions: bool
    page_size: int


@dataclass(frozen=True, kw_only=True)
class Tool:
    name: str
    title: str | None = None
    description: str | None = None
    input_schema: Json
    output_schema: Json | None = None
    annotations: Json | None = None
    context: bool = False
    scopes: tuple[str, ...] = ()
    timeout: float | None = None
    enabled: bool = True
    icons: tuple[Json, ...] = ()
    meta: Json | None = None
    ident: str
    client_method: str = ""  # the typed client's method (a mode's own tool has none)
    input_model: str = ""
    output_model: str | None = None
    http: Operation | None = None  # how to call the upstream operation (OpenAPI tools)
    mode: str | None = None  # the search or code mode whose own tool this is
    strict_model_exact: bool = False  # strict validation of the input model implies its schema
    strict_output_exact: bool = False  # ... of the output model (``fastpath``)
    advertised: Json | None = None  # what tools/list shows instead (``compact.advertise``)
    # the build cache's keys of the input and output schemas (``remembered``), which the
    # models' plan is keyed by too
    schema_keys: tuple[Json, Json] | None = None
    # ``optional`` or ``required``: the tool runs as an MCP task when asked (docs/tasks.md)
    task: str | None = None

    @property
    def mode_tool(self) -> bool:  # one of the search or code mode's own tools
        return self.mode is not None

    @cached_property
    def full_definition(self) -> dict[str, Json]:
        """The tool with its full schemas and texts (what validation uses)."""
        names = "name title description input_schema output_schema annotations icons"
        definition = wire(self, names)
        if self.meta:
            definition["_meta"] = self.meta
        if self.task:
            definition["execution"] = {"taskSupport": self.task}
        return definition

    @cached_property
    def definition(self) -> dict[str, Json]:
        """The tool as tools/list advertises it: compact for an imported operation."""
        full = self.full_definition
        if not self.advertised:
            return full
        keys = dict.fromkeys(("name", "title", "description", "inputSchema", "outputSchema", *full))
        shown = {key: self.advertised.get(key, full.get(key)) for key in keys}
        return {key: value for key, value in shown.items() if value is not None}

    @property
    def full_parts(self) -> dict[str, Json]:
        """The parts of ``full_definition`` the advertised one shows otherwise."""
        parts = ("title", "description", "inputSchema", "outputSchema")
        full = self.full_definition
        return {k: full[k] for k in parts if k in full and self.definition.get(k) != full[k]}

    @cached_property
    def wire_json(self) -> str:
        """``definition`` as compact JSON: what tools/list sends (and what it costs)."""
        return compact_json(self.definition)


@dataclass(frozen=True, kw_only=True)
class Completion:
    target: Literal["prompt", "resource"]
    ref: str  # prompt name or URI template
    argument: str
    values: tuple[str, ...] = ()
    handler: bool = False
    context: bool = False  # the handler gets ``ctx``
    ident: str


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
    upstream: Json | None = None  # base URL, credentials, meta-tool mode (OpenAPI sources)
    # ``transports.offer``: what ``--transport`` accepts (the package carries only these)
    transports: tuple[str, ...] = settings.OFFERED_TRANSPORTS
    code_mode: Json | None = None  # openapi.codeMode: the sandbox's limits (runtime names)
    deploy: Deploy | None = None  # deployment files to render (``deploy:``), if any
    ci: Ci = field(default_factory=Ci)
    observability: Observability = field(default_factory=Observability)
    origins: Origins = field(default_factory=Origins, compare=False)

    @property
    def mode(self) -> str:
        """``tools``, ``search`` or ``code`` (``auto`` was resolved: ``mode_reason``)."""
        return str((self.upstream or {}).get("mode") or "tools")

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
        own = (read(Tool, d, ident=d["name"], mode=self.mode) for d in mode_tools(self.mode))
        return self.handled_tools + tuple(own)

    @property
    def shares_state(self) -> bool:
        """Replicas are planned (a Redis URL, or deployment files): the Redis backend goes in."""
        return self.http.redis_url is not None or self.deploy is not None

    @property
    def extras(self) -> dict[str, list[str]]:
        """Optional dependencies besides ``test``."""
        return {"otel": list(OTEL_DEPENDENCIES)}

    @property
    def test_dependencies(self) -> list[str]:
        """The ``test`` extra (cryptography: the tests' OAuth keys, ``testing_oauth``)."""
        oauth = self.auth.type == "oauth"
        return [d for d in TEST_DEPENDENCIES if oauth or not d.startswith("cryptography")]

    def client_params(self, tool: Tool) -> list[Param]:
        """The typed client's keyword arguments for ``tool``, required first."""
        return self._client_params[tool.name]

    @cached_property
    def _client_params(self) -> dict[str, list[Param]]:
        shared = frozenset(self.shared_defs)
        return {t.name: params(t.input_schema, t.input_model, shared) for t in self.tools}

    @cached_property
    def client_typing(self) -> list[str]:
        """The ``typing`` names the typed client's annotations use."""
        annotations = " ".join(p.annotation for ps in self._client_params.values() for p in ps)
        return sorted(set(re.findall(r"\b(Any|Literal)\b", annotations)))

    @property
    def client_models(self) -> bool:
        """Whether the typed client names the ``models`` module (outputs, ``$ref`` inputs)."""
        return any(t.output_model for t in self.tools) or any(
            "models." in p.annotation for ps in self._client_params.values() for p in ps
        )

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
    def resource_templates(self) -> tuple[Resource, ...]:
        return tuple(r for r in self.resources if r.is_template)

    def to_data(self) -> dict[str, Json]:
        """A JSON-ready view of the model (``mcpgen inspect --json``)."""
        data = asdict(replace(self, origins=Origins()))  # the source document is not copied
        data.pop("origins")
        for tool in data["tools"]:
            del tool["schema_keys"]  # (the build cache's)
        return data
