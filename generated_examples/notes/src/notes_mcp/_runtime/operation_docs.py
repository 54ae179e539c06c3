"""What search and code mode know about each operation: :class:`OperationDoc`, made from
a generated server's ``_spec.json``, and the texts of its fields that search ranks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

FIELDS = ("name", "path", "summary", "tags", "action", "params", "description")
DESCRIPTION_CHARS = 800  # the start of a description says what the operation does
PARAM_DESCRIPTION_CHARS = 120

# What the HTTP method says the operation does (the "action" field).
_ACTIONS = {"POST": "create", "PUT": "update", "PATCH": "update", "DELETE": "delete"}


@dataclass(frozen=True)
class OperationDoc:
    """What search and code mode know about one operation (one tool of the server).

    ``title`` is the display title, ``summary`` the one-line summary (OpenAPI's
    ``summary``; defaults to the title, else the description's first line), ``description``
    the long text. ``parameters`` lists (name, description) of every argument the tool
    takes; ``input_schema``/``output_schema`` are the tool's JSON Schemas. ``wrapped`` says
    that the tool's structured result is ``{"result": value}`` around a value that is not an
    object (code mode hands the code the value itself).
    """

    name: str
    title: str = ""
    summary: str = ""
    description: str = ""
    tags: Sequence[str] = ()
    method: str = ""
    path: str = ""
    parameters: Sequence[tuple[str, str]] = ()
    input_schema: Mapping[str, Any] | None = None
    output_schema: Mapping[str, Any] | None = None
    wrapped: bool = False

    @property
    def line(self) -> str:
        """One line saying what the operation does."""
        text = self.summary or self.title or _first_line(self.description)
        return text.strip()


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def docs_from_spec(spec: Mapping[str, Any]) -> list[OperationDoc]:
    """The operations of a generated server's ``_spec.json`` (format 2): every tool entry
    with an ``http`` route (``method``, ``path``, ``wrapped``, ``tags``), with the full
    texts and schemas (``full``) where tools/list advertises compact ones."""
    return [
        doc_from_tool({**entry["definition"], **(entry.get("full") or {})}, entry["http"])
        for entry in spec.get("tools") or ()
        if entry.get("http") is not None
    ]


def doc_from_tool(tool: Mapping[str, Any], route: Mapping[str, Any] | None = None) -> OperationDoc:
    """One :class:`OperationDoc` from a tool definition (as tools/list shows it) and its route."""
    route = route or {}
    schema = tool.get("inputSchema") or {}
    properties = schema.get("properties") or {}
    parameters = [
        (str(name), str(prop.get("description") or "") if isinstance(prop, Mapping) else "")
        for name, prop in properties.items()
    ]
    title = str(tool.get("title") or "")
    description = str(tool.get("description") or "")
    return OperationDoc(
        name=str(tool["name"]),
        title=title,
        summary=title or _first_line(description),
        description=description,
        tags=tuple(str(t) for t in route.get("tags") or ()),
        method=str(route.get("method") or ""),
        path=str(route.get("path") or ""),
        parameters=tuple(parameters),
        input_schema=schema,
        output_schema=tool.get("outputSchema"),
        wrapped=bool(route.get("wrapped")),
    )


def field_texts(doc: OperationDoc) -> dict[str, str]:
    params = " ".join(
        f"{name} {description[:PARAM_DESCRIPTION_CHARS]}" for name, description in doc.parameters
    )
    summary = doc.summary or doc.title
    if doc.title and doc.title != summary:
        summary = f"{summary} {doc.title}"
    return {
        "name": doc.name,
        "path": doc.path,
        "summary": summary,
        "tags": " ".join(doc.tags),
        "action": _action(doc),
        "params": params,
        "description": doc.description[:DESCRIPTION_CHARS],
    }


def _action(doc: OperationDoc) -> str:
    """The CRUD verb the method implies: a GET of one item "get", of a collection "list"."""
    method = doc.method.upper()
    if method == "GET":
        return "get" if doc.path.rstrip("/").endswith("}") else "list"
    return _ACTIONS.get(method, "")
