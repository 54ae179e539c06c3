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
    """One path, query, header or cookie parameter of an operation.

    ``name`` is the name on the wire; ``argument`` the property of the tool's flat input
    schema that carries it (the same unless it clashed with another input; see README).
    ``style``/``explode`` are as written (Swagger 2.0 ``collectionFormat`` converted), None
    for the OpenAPI default of the location. ``content_type``: the media type a parameter
    described by ``content`` is serialized in, not by style. ``part``: the multipart body
    property on whose parts this header is sent (its ``encoding`` declares it).
    ``allow_reserved``: a query or path value's reserved characters are sent bare.
    ``read_only``: where an object value's ``readOnly`` properties are, left out of what is
    sent (as a body's).
    """

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


@dataclass(frozen=True)
class Body:
    """The request body of an operation.

    ``argument`` is None when the body's properties are spread into the input schema
    (``properties`` then lists their names on the wire, ``arguments`` the input property
    holding each, in the same order); otherwise it is the input property holding the whole
    body. ``content_type`` is one of :data:`BODY_CONTENT_TYPES`; ``media_type`` is the media
    type as the document wrote it (``application/vnd.github+json``...), to send as
    ``Content-Type``. ``parts`` says how form and multipart properties are sent, by wire
    name: ``file`` (a base64 argument sent as bytes) and the document's ``encoding``
    (``contentType``, ``style``, ``explode``); a property not named uses the defaults.
    ``read_only``: where the body's ``readOnly`` properties are, at any depth (the server
    sets them): left out of what is sent (``plans.Plans``); ``write_only``: its ``writeOnly``
    ones (a password), redacted from any answer echoing them, as a credential sent is.
    """

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
    # 202 + Location: poll the Location (``interval``, ``timeout`` in seconds; docs/tasks.md)
    poll: dict[str, float] | None = None
    # where an answer has ``writeOnly`` properties, at any depth (``plans.Plans``), by status:
    # left out
    write_only: dict[str, Json] = field(default_factory=dict)


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
    return data


@dataclass
class Merged:
    """What an OpenAPI import adds to a manifest besides its tool and resource entries, kept
    beside the raw document (never inside it: the manifest's schema has no private keys).
    ``tools[i]``: the operation behind the document's ``tools[i]``; likewise ``resources``;
    ``resource_inputs[i]``: the schemas a resource template's variables are checked against;
    ``upstream``: the wrapped API (base URL, security schemes, credentials, mode)."""

    tools: dict[int, Operation] = field(default_factory=dict)
    resources: dict[int, Operation] = field(default_factory=dict)
    resource_inputs: dict[int, Json] = field(default_factory=dict)
    upstream: Json | None = None


@dataclass(frozen=True)
class OpenAPIImport:
    """Everything imported from one OpenAPI document.

    ``tools`` are manifest tool entries (a key without a value is left out: no ``output``
    without a JSON response); ``operations[i]`` belongs to ``tools[i]``. Operations imported
    ``as: resource``/``resourceTemplate`` are the ``resources``, with their
    ``resource_operations``. Schemas share structure between tools (a definition used by
    ten tools is one object): treat them as read-only, and dump YAML with aliases disabled.
    """

    tools: list[dict[str, Json]]
    operations: list[Operation]
    servers: list[dict[str, Json]]
    security_schemes: dict[str, dict[str, Json]]
    problems: list[Problem]
    resources: list[dict[str, Json]] = field(default_factory=list)
    resource_operations: list[Operation] = field(default_factory=list)
    # a resource template's input schema (its variables are checked against it), or None
    resource_inputs: list[Json | None] = field(default_factory=list)
    version: str = ""  # "2.0", "3.0" or "3.1"
    info: dict[str, Json] = field(default_factory=dict)  # title, version, description
    # where an operation was written: (file index, path) -> location (for located problems)
    locate: Callable[[int, tuple[str | int, ...]], Location] | None = field(
        default=None, compare=False
    )
    # the override key (``openapi.overrides.<key>.name``) that renamed a tool or resource:
    # ("tools", index) or ("resources", index) -> key; the checks blame the rename
    renamed: dict[tuple[str, int], str] = field(default_factory=dict)
    # every definition the tools' own ``$defs`` hold, by name (sorted): a caller may put these
    # in the manifest's shared ``$defs`` instead, and then handles each once
    defs: dict[str, Json] = field(default_factory=dict)
    # where each of ``defs`` was written: (file index, path), to locate its problems
    def_origins: dict[str, tuple[int, tuple[str | int, ...]]] = field(default_factory=dict)
