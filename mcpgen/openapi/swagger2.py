"""What Swagger 2.0 writes differently from OpenAPI 3 (parameters, bodies, media types,
servers): each function is the 2.0 branch of one importer step."""

from __future__ import annotations

from typing import Any

from mcpgen.load import JsonPath
from mcpgen.openapi.media import category, choose_media
from mcpgen.openapi.parts import BodyInfo, Candidate, Importer

Json = Any
Located = tuple[int, JsonPath, dict[str, Any]]
LOCATIONS = ("path", "query", "header", "body", "formData")
_PARAM_KEYS = (
    "type", "format", "items", "default", "maximum", "exclusiveMaximum", "minimum",
    "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems",
    "uniqueItems", "enum", "multipleOf", "x-nullable",
)  # fmt: skip
_COLLECTION_FORMATS = {
    "csv": ("form", False),
    "ssv": ("spaceDelimited", False),
    "pipes": ("pipeDelimited", False),
    "multi": ("form", True),
    "tsv": ("form", False),
}


def parameter_schema(
    imp: Importer, src: int, path: JsonPath, param: dict[str, Any], location: str
) -> tuple[Json, set[str], tuple[str, bool] | None]:
    """(schema, definitions, (style, explode) of an array) of a 2.0 non-body parameter."""
    raw_schema = _items({k: v for k, v in param.items() if k != "items" or v is not None})
    styled: tuple[str, bool] | None = None
    if param.get("type") == "array":
        fmt = param.get("collectionFormat")
        fmt = fmt if isinstance(fmt, str) else "csv"
        where = (*path, "collectionFormat")
        if fmt not in _COLLECTION_FORMATS:
            imp.warn(src, where, f"unknown collectionFormat {fmt!r}")
            fmt = "csv"
        if fmt == "tsv":
            imp.warn(src, where, "tab-separated arrays are not supported; sent comma-separated")
        style, explode = _COLLECTION_FORMATS[fmt]
        styled = (
            "simple" if location in ("path", "header") and style == "form" else style
        ), explode
    schema, deps = imp.converter.convert(src, path, raw_schema)
    return schema, deps, styled


def request_body(
    imp: Importer, cand: Candidate, body_params: list[Located], form_params: list[Located]
) -> BodyInfo | None:
    """The body of a 2.0 operation: its one ``body`` parameter, or its ``formData`` ones."""
    consumes = cand.node.get("consumes", imp.data.get("consumes"))
    consumes = [c for c in consumes if isinstance(c, str)] if isinstance(consumes, list) else []
    if body_params and form_params:
        src, path, _ = form_params[0]
        imp.error(src, path, "an operation cannot have both 'body' and 'formData' parameters")
    if len(body_params) > 1:
        imp.error(*body_params[1][:2], "an operation can have only one 'body' parameter")
    if body_params:
        src, path, param = body_params[0]
        media = choose_media(dict.fromkeys(consumes)) if consumes else "application/json"
        return imp.body_info(src, path, media, param, param, [])
    if not form_params:
        return None
    files = [p.get("type") == "file" for _, _, p in form_params]
    multipart = "multipart/form-data" in consumes or any(files)
    media = "multipart/form-data" if multipart else "application/x-www-form-urlencoded"
    inputs = [
        imp.parameter(src, path, param, "body", param["name"]) for src, path, param in form_params
    ]
    parts: dict[str, dict[str, Json]] = {}
    for item, file in zip(inputs, files, strict=True):
        how = {k: item.param[k] for k in ("style", "explode") if item.param.get(k) is not None}
        if multipart and file:
            how["file"] = True
        if how:
            parts[item.wire] = how
    deps = set().union(*(i.deps for i in inputs))
    return BodyInfo(inputs, deps, True, media, media, any(i.required for i in inputs), parts)


def response_schema(
    imp: Importer, cand: Candidate, src: int, path: JsonPath, node: dict[str, Any]
) -> tuple[int, JsonPath, str | None, Json]:
    """(file, path of the schema, media type, schema node) of a 2.0 response."""
    produces = cand.node.get("produces", imp.data.get("produces"))
    produces = [p for p in produces if isinstance(p, str)] if isinstance(produces, list) else []
    schema = node.get("schema")
    if schema is None:
        return src, path, None, None
    if isinstance(schema, dict) and schema.get("type") == "file":
        binary = [p for p in produces if category(p) != "application/json"]
        return src, path, (binary or ["application/octet-stream"])[0], None
    media = choose_media(dict.fromkeys(produces)) if produces else "application/json"
    return src, (*path, "schema"), media, schema


def servers(imp: Importer) -> list[dict[str, Json]]:
    """The base URLs of a 2.0 document, from ``host``, ``basePath`` and ``schemes``."""
    host, base = imp.data.get("host"), imp.data.get("basePath", "")
    base = base if isinstance(base, str) else ""
    if base and not base.startswith("/"):
        imp.warn(0, ("basePath",), "basePath must start with '/'")
        base = "/" + base
    if not isinstance(host, str) or not host:
        return [{"url": base or "/"}]
    schemes = imp.data.get("schemes")
    schemes = [s for s in ("https", "http") if isinstance(schemes, list) and s in schemes]
    # https first whatever the order: the first is the base URL, and credentials go with it
    return [{"url": f"{s}://{host}{base}"} for s in (schemes or ["https"])]


def _items(items: Any) -> Any:
    """A Swagger 2.0 Items Object as a schema (collection formats inside are dropped)."""
    if not isinstance(items, dict):
        return items
    result = {k: items[k] for k in _PARAM_KEYS if k in items}
    if "items" in result:
        result["items"] = _items(result["items"])
    return result
