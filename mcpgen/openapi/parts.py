"""What the importer's parts share: the operations found, their inputs, the base class."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from mcpgen.load import Document, JsonPath
from mcpgen.openapi.result import Operation
from mcpgen.openapi.sources import Sources
from mcpgen.problems import Problems

if TYPE_CHECKING:
    from mcpgen.openapi.schema import SchemaConverter

Json = Any


@dataclass
class Candidate:
    """One operation of the document, before it is built."""

    src: int
    path: JsonPath  # of the operation object
    method: str  # lower case
    url: str
    node: dict[str, Json]
    item_params: list[tuple[int, JsonPath, Json]]
    operation_id: str | None
    tags: list[str]
    server: str | None = None  # the operation's own (``InputImport.own_server``)


@dataclass
class Input:
    """One input of an operation (a parameter or a body property) as a tool argument."""

    location: str  # path, query, header, cookie, body
    wire: str
    schema: Json
    required: bool
    param: dict[str, Any] = field(default_factory=dict)  # Param fields besides names
    deps: set[str] = field(default_factory=set)  # the definitions its schema refers to


@dataclass
class BodyInfo:
    """An operation's request body: one argument, or its properties spread."""

    inputs: list[Input]
    deps: set[str]
    spread: bool
    content_type: str
    media_type: str
    required: bool
    parts: dict[str, dict[str, Json]] = field(default_factory=dict)  # Body.parts
    # an optional body spread: the properties it requires, all given or none
    together: list[str] = field(default_factory=list)
    headers: list[Input] = field(default_factory=list)  # multipart part headers (part_headers)
    read_only: dict[str, Json] = field(default_factory=dict)  # Body.read_only
    write_only: dict[str, Json] = field(default_factory=dict)  # Body.write_only


@dataclass
class Answers:
    """What an operation's responses make of its tool (``InputImport.responses``)."""

    output: Json  # the output schema (None: the tool advertises none)
    media: str | None  # the success response's media type (``Operation.response_content_type``)
    wrapped: bool  # the output schema wraps the answer: ``{"result": ...}``
    write_only: dict[str, Json]  # each status's ``writeOnly`` plan (``Operation.write_only``)
    # each error response's media type (its content's chosen one), once, in the document's
    # order, but the success's: ``Accept`` names them after it (``Operation.error_types``)
    error_types: list[str] = field(default_factory=list)


@dataclass
class Built:
    """An operation built: how to call it and the tool entry that offers it."""

    operation: Operation
    tool: dict[str, Json]


class ImportBase:
    """The document being imported and the located-problem helpers every part uses."""

    def __init__(self, doc: Document, options: dict[str, Any] | None, problems: Problems) -> None:
        self.doc = doc
        self.raw_options = options
        self.problems = problems
        self.sources = Sources(doc, problems)
        self.error, self.warn = self.sources.error, self.sources.warn  # located problems
        self.data: dict[str, Any] = {}
        self.answer_plans: dict[Any, Any] = {}  # each answer schema's writeOnly plan, by place
        self.version = ""  # "2.0", "3.0" or "3.1" once known
        self.keep = False  # each operation's result kept in the build cache (``kept``)

    def follow_mapping(
        self, src: int, path: JsonPath, node: Any, what: str
    ) -> tuple[int, JsonPath, dict[str, Any]] | None:
        """Follow ``node``'s ``$ref``s to the mapping they end at (file, path, mapping)."""
        followed = self.sources.follow(src, path, node)
        if followed is not None and not isinstance(followed[2], dict):
            self.error(followed[0], followed[1], f"{what} must be a mapping")
            return None
        return followed

    def parameter_entries(
        self, src: int, path: JsonPath, node: dict[str, Any]
    ) -> list[tuple[int, JsonPath, Json]]:
        """The ``parameters`` of a path item or operation, each as (file, path, value)."""
        where = (*path, "parameters")
        given = self.listing(src, where, node.get("parameters"), "'parameters'")
        return [(src, (*where, i), p) for i, p in enumerate(given)]

    def mapping(self, src: int, path: JsonPath, value: Any, what: str) -> dict[str, Any]:
        if value is not None and not isinstance(value, dict):
            self.error(src, path, f"{what} must be a mapping")
        return value if isinstance(value, dict) else {}

    def listing(self, src: int, path: JsonPath, value: Any, what: str) -> list[Any]:
        if value is not None and not isinstance(value, list):
            self.error(src, path, f"{what} must be a list")
        return value if isinstance(value, list) else []


class Importer(Protocol):
    """What ``swagger2`` and ``kept`` use of the importer (``inputs.InputImport``,
    ``importer._Importer``), which imports them."""

    data: dict[str, Any]
    raw_options: dict[str, Any] | None
    problems: Problems
    sources: Sources
    converter: SchemaConverter

    def error(self, src: int, path: JsonPath, message: str) -> None: ...

    def warn(self, src: int, path: JsonPath, message: str) -> None: ...

    def parameter(
        self, src: int, path: JsonPath, param: dict[str, Any], location: str, name: str
    ) -> Input: ...

    def body_info(
        self,
        src: int,
        path: JsonPath,
        media: str,
        node: dict[str, Any],
        holder: dict[str, Any],
        examples: list[Any],
    ) -> BodyInfo: ...
