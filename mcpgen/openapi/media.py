"""Media types, examples and annotations: small rules the importer's parts share."""

from __future__ import annotations

from typing import Any

from mcpgen.openapi.result import BODY_CONTENT_TYPES

Json = Any


def category(media: str) -> str:
    """Which of the body kinds mcpgen sends a media type as."""
    base = media.split(";", 1)[0].strip().lower()
    if base in ("application/json", "*/*", "application/*", "text/json") or base.endswith("+json"):
        return "application/json"
    if base == "application/x-www-form-urlencoded":
        return "application/x-www-form-urlencoded"
    if base.startswith("multipart/"):
        return "multipart/form-data"
    if base.startswith("text/") or is_xml(base):
        return "text/plain"
    return "application/octet-stream"


def sent_type(media: str) -> str:
    """``media`` as a request's ``Content-Type``: a media range (``*/*``) as the kind sent;
    text without a ``charset`` says UTF-8."""
    base, _, given = media.partition(";")
    if "*" in base:
        return sent_type(category(media))
    if base.strip().lower().startswith("text/") and "charset=" not in given.lower():
        return media.rstrip("; ") + "; charset=utf-8"
    return media


def is_xml(media: str) -> bool:
    base = media.split(";", 1)[0].strip().lower()
    return base in ("application/xml", "text/xml") or base.endswith("+xml")


def choose_media(content: dict[str, Any]) -> str:
    """The media type to use: JSON first, then forms, text (XML last), then binary."""

    def rank(media: str) -> tuple[int, int, int]:
        kind = category(media)
        exact = 0 if media.split(";", 1)[0].strip().lower() == kind else 1
        return (BODY_CONTENT_TYPES.index(kind), int(is_xml(media)), exact)

    medias = [m for m in content if isinstance(m, str)]
    return min(medias, key=lambda m: (rank(m), medias.index(m)))


def text_of(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def examples_of(node: dict[str, Any]) -> list[Any]:
    """The ``example`` and ``examples`` values of a parameter or media type object."""
    found = [node["example"]] if "example" in node else []
    examples = node.get("examples")
    if isinstance(examples, dict):
        found.extend(e["value"] for e in examples.values() if isinstance(e, dict) and "value" in e)
    return found


def annotate(
    schema: Json, description: Any = None, deprecated: Any = None, examples: list[Any] | None = None
) -> Json:
    """``schema`` (not changed) with a description, deprecation and examples added."""
    described = isinstance(description, str) and bool(description)
    if not (described or deprecated is True or examples):
        return schema
    merged = {} if schema is True else {"not": {}} if schema is False else dict(schema)
    if described:
        merged.setdefault("description", description)
    if deprecated is True:
        merged.setdefault("deprecated", True)
    if examples:
        merged["examples"] = [*merged.get("examples", []), *examples]
    return merged


def tool_annotations(method: str) -> dict[str, bool]:
    """The MCP tool hints an HTTP method (lower case) implies."""
    return {
        "readOnlyHint": method in ("get", "head"),
        **({"destructiveHint": True} if method == "delete" else {}),
        "idempotentHint": method in ("get", "head", "put", "delete"),
        "openWorldHint": True,
    }
