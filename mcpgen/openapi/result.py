"""What the OpenAPI importer hands to the rest of mcpgen: plain, immutable data."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from mcpgen.problems import Location, Problem

Json = Any

# the body kinds mcpgen sends, in the order a media type is preferred (``media.choose_media``)
BODY_CONTENT_TYPES = (
    "application/json",
    "application/x-www-form-urlencoded",
    "multipart/form-data",
    "text/plain",
    "application/octet-stream",
)


@dataclass(frozen=True)
class Param:
    """One path, query, header or cookie parameter of an operation: ``name`` on the wire,
    ``argument`` the input property carrying it; ``style``/``explode`` as written (None: the
    location's default); ``content_type``: a ``content`` parameter's media type; ``part``:
    the multipart property on whose parts this header is sent; ``allow_reserved``: reserved
    characters sent bare; ``read_only``: an object value's ``readOnly`` plan (not sent);
    ``secret``: its schema says ``format: password`` or ``writeOnly`` (a PIN in the URL)."""

    name: str
    location: str
    argument: str
    required: bool
    style: str | None = None
    explode: bool | None = None
    content_type: str | None = None
    part: str | None = None
    allow_reserved: bool | None = None
    read_only: dict[str, Json] | None = None
    secret: bool | None = None


@dataclass(frozen=True)
class Body:
    """The request body of an operation: ``argument`` holds it whole, or is None when its
    properties are spread (``properties``: their wire names, ``arguments``: the input
    property of each). ``content_type``: one of :data:`BODY_CONTENT_TYPES`; ``media_type``:
    as written, sent as ``Content-Type``. ``parts``: how form and multipart properties are
    sent, by wire name (``file``, and ``encoding``'s ``contentType``, ``style``,
    ``explode``). ``read_only``/``write_only``: the ``plans.Plans`` of its ``readOnly``
    properties (left out of what is sent) and ``writeOnly`` ones (redacted from answers)."""

    argument: str | None
    content_type: str
    required: bool
    properties: list[str] = field(default_factory=list)
    arguments: list[str] = field(default_factory=list)
    media_type: str = ""
    parts: dict[str, dict[str, Json]] = field(default_factory=dict)
    read_only: dict[str, Json] = field(default_factory=dict)
    write_only: dict[str, Json] = field(default_factory=dict)


@dataclass(frozen=True)
class Operation:
    """How to call the HTTP operation behind one tool (or resource)."""

    tool: str
    method: str  # upper case: GET, POST, ...
    path: str  # the path template as written: /pets/{petId}
    operation_id: str | None
    parameters: list[Param]
    body: Body | None
    response_content_type: str | None
    wrapped_output: bool
    security: list[dict[str, list[str]]]
    tags: list[str]
    origin: tuple[int, tuple[str | int, ...]] = (0, ())  # (file index, path) of the operation
    server: str | None = None  # its own server's URL (else the API's base URL), maybe relative
    poll: dict[str, float] | None = None  # 202 + Location: ``interval``, ``timeout`` (s)
    write_only: dict[str, Json] = field(default_factory=dict)  # answers' plans, by status
    error_types: list[str] = field(default_factory=list)  # in ``Accept`` after the success's


def operation_data(operation: Operation) -> dict[str, Json]:
    """How the generated server makes the call, as JSON for ``_spec.json``."""
    data: dict[str, Json] = {
        "method": operation.method,
        "path": operation.path,
        "params": [  # (a readOnly plan is shared, never changed: nothing to copy deeply)
            {k: v for k, v in vars(p).items() if v is not None} for p in operation.parameters
        ],
        "security": operation.security,
        "responseType": operation.response_content_type,
        "wrapped": operation.wrapped_output,
    }
    if operation.tags:
        data["tags"] = list(operation.tags)
    if operation.body is not None:
        body = asdict(operation.body)
        data["body"] = {k: v for k, v in body.items() if v != {}}  # (parts, the plans)
    if operation.server is not None:
        data["server"] = operation.server
    if operation.poll:
        data["poll"] = dict(operation.poll)
    if operation.write_only:
        data["writeOnly"] = operation.write_only
    if operation.error_types:
        data["errorTypes"] = list(operation.error_types)
    return data


@dataclass
class Merged:
    """What an OpenAPI import adds to a manifest besides its entries (the operation behind
    ``tools[i]``...), kept beside the raw document."""

    tools: dict[int, Operation] = field(default_factory=dict)
    resources: dict[int, Operation] = field(default_factory=dict)
    resource_inputs: dict[int, Json] = field(default_factory=dict)
    upstream: Json | None = None


@dataclass(frozen=True)
class OpenAPIImport:
    """Everything imported from one OpenAPI document (schemas share structure between tools:
    treat them as read-only, and dump YAML with aliases disabled)."""

    tools: list[dict[str, Json]]
    operations: list[Operation]
    servers: list[dict[str, Json]]
    security_schemes: dict[str, dict[str, Json]]
    problems: list[Problem]
    resources: list[dict[str, Json]] = field(default_factory=list)
    resource_operations: list[Operation] = field(default_factory=list)
    resource_inputs: list[Json | None] = field(default_factory=list)
    version: str = ""  # "2.0", "3.0" or "3.1"
    info: dict[str, Json] = field(default_factory=dict)  # title, version, description
    # (file index, path) -> location, for located problems
    locate: Callable[[int, tuple[str | int, ...]], Location] | None = field(
        default=None, compare=False
    )
    # ("tools" | "resources", index) -> the override key that renamed it
    renamed: dict[tuple[str, int], str] = field(default_factory=dict)
    defs: dict[str, Json] = field(default_factory=dict)  # every tool's ``$defs``, sorted
    def_origins: dict[str, tuple[int, tuple[str | int, ...]]] = field(default_factory=dict)
