"""File arguments and multipart part headers of a request body (docs/openapi.md, "Files"
and "Multipart part headers"): a file input keeps its base64 schema and its description
says it also takes a resource's URI (``runtime/files.py`` tells them apart); a multipart
property's ``encoding.headers`` become optional header arguments (``Param.part``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpgen.load import JsonPath
from mcpgen.openapi.media import annotate, examples_of, text_of
from mcpgen.openapi.parts import BodyInfo, Input
from mcpgen.runtime.wire_body import PART_RESERVED

if TYPE_CHECKING:
    from mcpgen.openapi.inputs import InputImport

Json = Any
FILE_NOTE = (
    "The file's bytes, base64-encoded; or a URI: of a resource of this server that holds "
    "them, or a data: URI (a URI has a scheme and a colon, base64 has none)."
)


def described(info: BodyInfo | None) -> BodyInfo | None:
    """``info`` with each file input's description saying it takes base64 or a URI."""
    if info is None:
        return None
    whole_file = info.content_type == "application/octet-stream" and not info.spread
    for item in info.inputs:
        how = info.parts.get(item.wire) or {}
        if whole_file or (info.spread and how.get("file")):
            item.schema = _note(item.schema)
    return info


def _note(schema: Json) -> Json:
    if not isinstance(schema, dict):
        return schema
    if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
        return {**schema, "items": _note(schema["items"])}
    text = schema.get("description")
    note = f"{text.rstrip()} ({FILE_NOTE})" if isinstance(text, str) and text.strip() else None
    return {**schema, "description": note or FILE_NOTE}


def part_headers(
    imp: InputImport, src: int, path: JsonPath, prop: str, headers: Any
) -> list[Input]:
    """The header arguments a multipart property's ``encoding.headers`` declare: optional,
    named as on the wire, sent on each part of ``prop`` when given."""
    found: list[Input] = []
    for name, raw in imp.mapping(src, path, headers, "'headers'").items():
        if not isinstance(name, str) or not name:
            continue
        if name.lower() in PART_RESERVED:
            imp.warn(src, (*path, name), f"part header {name!r} is ignored: mcpgen sets it")
            continue
        followed = imp.sources.follow(src, (*path, name), raw)
        if followed is None:
            continue
        hsrc, hpath, node = followed
        if not isinstance(node, dict):
            imp.warn(hsrc, hpath, "a header must be a mapping; ignored")
            continue
        schema, deps = imp.converter.convert(hsrc, (*hpath, "schema"), node.get("schema", {}))
        text = text_of(node.get("description"))
        about = f"The {name} header of the multipart part {prop!r}." + (f" {text}" if text else "")
        schema = annotate(schema, about, node.get("deprecated"), examples_of(node))
        found.append(Input("header", name, schema, False, {"part": prop}, deps))
    return found
