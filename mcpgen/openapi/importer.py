"""OpenAPI 3.0 / 3.1 and Swagger 2.0 operations as manifest tools (see the package docstring)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from mcpgen import identifiers as names
from mcpgen.load import Document, JsonPath
from mcpgen.openapi import naming
from mcpgen.openapi.options import OVERRIDE_KEYS, Options, option_problem, parse_options
from mcpgen.openapi.result import Body, OpenAPIImport, Operation, Param
from mcpgen.openapi.schema import SchemaConverter
from mcpgen.openapi.security import SecurityImport
from mcpgen.openapi.sources import Sources
from mcpgen.problems import Level, Location, Problem, Problems

Json = Any
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_PATH_ITEM_KEYS = frozenset({"$ref", "summary", "description", "servers", "parameters", *METHODS})
_LOCATION_ORDER = {"path": 0, "query": 1, "header": 2, "cookie": 3}
_IGNORED_HEADERS = frozenset({"accept", "content-type", "authorization"})
_TEMPLATE = re.compile(r"\{([^{}]*)\}")
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_SWAGGER_PARAM_KEYS = (
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
_STD_DIALECT = "https://spec.openapis.org/oas/3.1/dialect/base"
_URI_VARNAME = re.compile(r"[^A-Za-z0-9_]")


def is_openapi(data: Any) -> bool:
    """Whether ``data`` is an OpenAPI 3.x or Swagger 2.0 document (by its top-level field)."""
    return isinstance(data, dict) and _version(data)[0] is not None


def _version(data: dict[str, Any]) -> tuple[str | None, str]:
    """("2.0" | "3.0" | "3.1" | None, the version as written)."""
    if "openapi" in data:
        raw = data["openapi"]
        text = str(raw) if isinstance(raw, str | float | int) and not isinstance(raw, bool) else ""
        match = re.match(r"^3\.(\d+)(?:\.\d+)?(?:-.+)?$", text)
        if match:
            return ("3.0" if match.group(1) == "0" else "3.1"), text
        return None, text
    if "swagger" in data:
        raw = data["swagger"]
        if raw in ("2.0", 2.0) and not isinstance(raw, bool):
            return "2.0", str(raw)
        return None, str(raw)
    return None, ""


@dataclass
class _Candidate:
    src: int
    path: JsonPath  # of the operation object
    method: str  # lower case
    url: str
    node: dict[str, Json]
    item_params: list[tuple[int, JsonPath, Json]]
    operation_id: str | None
    tags: list[str]


@dataclass
class _Input:
    location: str  # path, query, header, cookie, body
    wire: str
    schema: Json
    required: bool
    param: dict[str, Any] = field(default_factory=dict)  # Param fields besides names


@dataclass
class _Built:
    operation: Operation
    tool: dict[str, Json]
    candidate: _Candidate


def import_openapi(doc: Document, options: dict[str, Any] | None = None) -> OpenAPIImport:
    problems = Problems()
    try:
        return _Importer(doc, options, problems).run()
    except Exception as exc:  # a bug must not become a traceback: report it, located
        message = f"internal error while importing: {type(exc).__name__}: {exc}"
        problems.add(Problem(Level.ERROR, Location(doc.file), "", message))
        return OpenAPIImport([], [], [], {}, problems.sorted())


class _Importer(SecurityImport):
    def __init__(self, doc: Document, options: dict[str, Any] | None, problems: Problems) -> None:
        self.doc = doc
        self.raw_options = options
        self.problems = problems
        self.sources = Sources(doc, problems)
        self.data: dict[str, Any] = {}
        self.version = ""
        self.converter: SchemaConverter

    # -- helpers -------------------------------------------------------------------------
    def error(self, src: int, path: JsonPath, message: str) -> None:
        self.sources.error(src, path, message)

    def warn(self, src: int, path: JsonPath, message: str) -> None:
        self.sources.warn(src, path, message)

    def mapping(self, src: int, path: JsonPath, value: Any, what: str) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.error(src, path, f"{what} must be a mapping")
            return {}
        return value

    def listing(self, src: int, path: JsonPath, value: Any, what: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            self.error(src, path, f"{what} must be a list")
            return []
        return value

    def empty(self) -> OpenAPIImport:
        return OpenAPIImport([], [], [], {}, self.problems.sorted(), version=self.version)

    # -- the whole document --------------------------------------------------------------
    def run(self) -> OpenAPIImport:
        data = self.doc.data
        if not isinstance(data, dict):
            self.error(0, (), "an OpenAPI document is a mapping with 'openapi' or 'swagger'")
            return self.empty()
        self.data = data
        version, written = _version(data)
        if version is None:
            if "openapi" in data:
                self.error(0, ("openapi",), f"unsupported OpenAPI version {written!r} (3.0 or 3.1)")
            elif "swagger" in data:
                self.error(0, ("swagger",), f"unsupported Swagger version {written!r} (2.0)")
            else:
                self.error(0, (), "not an OpenAPI document: no 'openapi' or 'swagger' field")
            return self.empty()
        self.version = version
        top = "swagger" if version == "2.0" else "openapi"
        if not isinstance(data[top], str):
            self.warn(0, (top,), f"the version should be a string: '{written}'")
        if version == "3.1" and not written.startswith("3.1"):
            self.warn(0, ("openapi",), f"OpenAPI {written} is read as 3.1")
        dialect = data.get("jsonSchemaDialect")
        if dialect is not None and dialect != _STD_DIALECT:
            self.warn(0, ("jsonSchemaDialect",), "schemas are read as JSON Schema 2020-12")
        self.converter = SchemaConverter(self.sources, version)
        if self.sources.may_have_external_refs():
            self.converter.name_external(self.sources.scan_refs())
        options = parse_options(self.raw_options, self.problems)
        if "webhooks" in data:
            self.warn(0, ("webhooks",), "webhooks are requests the API makes; not imported")
        candidates = self.collect()
        self.check_operation_ids(candidates)
        chosen: list[tuple[_Candidate, str]] = []
        for cand in candidates:
            kind = options.kind(cand.method, cand.url, cand.tags, cand.operation_id)
            if kind != "exclude":
                chosen.append((cand, kind))
        wanted = [
            (naming.base_name(c.method, c.url, c.operation_id), c.method, c.url) for c, _ in chosen
        ]
        tool_names = naming.unique_names(wanted)
        tools: list[_Built] = []
        resources: list[tuple[dict[str, Json], Operation]] = []
        for (cand, kind), name in zip(chosen, tool_names, strict=True):
            try:
                built = self.build(cand, name)
            except Exception as exc:  # one operation's bug must not lose the others
                message = (
                    f"internal error while importing this operation: {type(exc).__name__}: {exc}"
                )
                self.error(cand.src, cand.path, message)
                continue
            if kind in ("resource", "resourceTemplate"):
                resource = self.as_resource(built, kind)
                if resource is not None:
                    resources.append((resource, built.operation))
                    continue
            tools.append(built)
        self.apply_overrides(options, tools, resources)
        for rule in options.all_rules():
            if rule.where not in options.used:
                self.problems.add(
                    option_problem(Level.WARNING, rule.where, "this rule matches no operation")
                )
        servers, schemes, info = self.servers(), self.security_schemes(), self.info()
        used: set[str] = set()
        for built in tools:
            for part in ("input", "output"):
                used.update(built.tool.get(part, {}).get("$defs", ()))
        return OpenAPIImport(
            tools=[b.tool for b in tools],
            operations=[b.operation for b in tools],
            servers=servers,
            security_schemes=schemes,
            problems=self.problems.sorted(),  # last: everything above may add problems
            resources=[r for r, _ in resources],
            resource_operations=[o for _, o in resources],
            version=version,
            info=info,
            locate=self.sources.location,
            defs={name: self.converter.defs[name] for name in sorted(used)},
            def_origins={
                n: self.converter.origin[n] for n in sorted(used) if n in self.converter.origin
            },
        )

    def info(self) -> dict[str, Json]:
        raw = self.data.get("info")
        if not isinstance(raw, dict):
            self.error(0, ("info",), "'info' (with 'title' and 'version') is required")
            return {}
        return {
            k: raw[k] for k in ("title", "version", "description") if isinstance(raw.get(k), str)
        }

    # -- operations ----------------------------------------------------------------------
    def collect(self) -> list[_Candidate]:
        paths = self.data.get("paths")
        if paths is None:
            if self.version != "3.1":
                self.error(0, (), "'paths' is required")
            return []
        result: list[_Candidate] = []
        for url, raw_item in self.mapping(0, ("paths",), paths, "'paths'").items():
            where: JsonPath = ("paths", url)
            if url.startswith("x-"):
                continue
            if not url.startswith("/"):
                self.error(0, where, f"path {url!r} must start with '/'")
                continue
            stripped = _TEMPLATE.sub("", url)
            if "{" in stripped or "}" in stripped:
                self.error(0, where, f"path {url!r} has unbalanced '{{' or '}}'")
                continue
            followed = self.sources.follow(0, where, raw_item)
            if followed is None:
                continue
            src, ipath, item = followed
            if not isinstance(item, dict):
                self.error(src, ipath, "a path item must be a mapping")
                continue
            for key in item:
                if key not in _PATH_ITEM_KEYS and not key.startswith("x-"):
                    self.warn(src, (*ipath, key), f"{key!r} is not an operation mcpgen imports")
            if "servers" in item:
                self.warn(src, (*ipath, "servers"), "path-level servers are not supported; ignored")
            params = self.listing(
                src, (*ipath, "parameters"), item.get("parameters"), "'parameters'"
            )
            item_params = [(src, (*ipath, "parameters", i), p) for i, p in enumerate(params)]
            for method in METHODS:
                if method not in item:
                    continue
                node = item[method]
                opath = (*ipath, method)
                if not isinstance(node, dict):
                    self.error(src, opath, "an operation must be a mapping")
                    continue
                op_id = node.get("operationId")
                if op_id is not None and not isinstance(op_id, str):
                    self.error(src, (*opath, "operationId"), "operationId must be a string")
                    op_id = None
                raw_tags = self.listing(src, (*opath, "tags"), node.get("tags"), "'tags'")
                tags = [t for t in raw_tags if isinstance(t, str)]
                result.append(_Candidate(src, opath, method, url, node, item_params, op_id, tags))
        return result

    def check_operation_ids(self, candidates: list[_Candidate]) -> None:
        seen: dict[str, _Candidate] = {}
        for cand in candidates:
            if cand.operation_id is None:
                continue
            first = seen.setdefault(cand.operation_id, cand)
            if first is not cand:
                self.warn(
                    cand.src,
                    (*cand.path, "operationId"),
                    f"operationId {cand.operation_id!r} is not unique "
                    f"(also {first.method.upper()} {first.url})",
                )

    def build(self, cand: _Candidate, name: str) -> _Built:
        inputs, body_info = self.parameters(cand)
        deps: set[str] = set()
        for item in inputs:
            deps.update(item.param.pop("deps", ()))
        body_inputs: list[_Input] = []
        body: Body | None = None
        if body_info is not None:
            body_inputs, body_deps = body_info.inputs, body_info.deps
            deps.update(body_deps)
        all_inputs = [*sorted(inputs, key=lambda i: _LOCATION_ORDER[i.location]), *body_inputs]
        arguments = naming.argument_names([(i.location, i.wire) for i in all_inputs])
        properties: dict[str, Json] = {}
        required: list[str] = []
        params: list[Param] = []
        for item, argument in zip(all_inputs, arguments, strict=True):
            properties[argument] = item.schema
            if item.required:
                required.append(argument)
            if item.location != "body":
                params.append(
                    Param(
                        name=item.wire,
                        location=item.location,
                        argument=argument,
                        required=item.required,
                        **item.param,
                    )
                )
        if body_info is not None:
            body_arguments = arguments[len(inputs) :]
            spread = body_info.spread
            body = Body(
                argument=None if spread else body_arguments[0],
                content_type=body_info.content_type,
                required=body_info.required,
                properties=[i.wire for i in body_inputs] if spread else [],
                arguments=list(body_arguments) if spread else [],
                media_type=body_info.media_type,
            )
        input_schema: dict[str, Json] = {"type": "object", "properties": properties}
        if required:
            input_schema["required"] = required
        defs = self.converter.closure(deps)
        if defs:
            input_schema["$defs"] = defs
        output, content_type, wrapped = self.responses(cand)
        operation = Operation(
            tool=name,
            method=cand.method.upper(),
            path=cand.url,
            operation_id=cand.operation_id,
            parameters=params,
            body=body,
            response_content_type=content_type,
            wrapped_output=wrapped,
            security=self.security(cand),
            tags=list(cand.tags),
            origin=(cand.src, tuple(cand.path)),
        )
        tool: dict[str, Json] = {"name": name}
        summary = cand.node.get("summary")
        description = cand.node.get("description")
        if isinstance(summary, str) and summary.strip():
            tool["title"] = summary.strip()
        text = description if isinstance(description, str) and description.strip() else summary
        if not (isinstance(text, str) and text.strip()):
            text = f"{cand.method.upper()} {cand.url}"
        if cand.node.get("deprecated") is True:
            text = f"Deprecated. {text.strip()}"
        tool["description"] = text.strip()
        tool["input"] = input_schema
        if output is not None:
            tool["output"] = output
        tool["annotations"] = _annotations(cand.method)
        if "callbacks" in cand.node:
            self.warn(cand.src, (*cand.path, "callbacks"), "callbacks are not supported; ignored")
        if "servers" in cand.node:
            self.warn(
                cand.src, (*cand.path, "servers"), "operation-level servers are not supported"
            )
        return _Built(operation, tool, cand)

    # -- parameters ----------------------------------------------------------------------
    def parameters(self, cand: _Candidate) -> tuple[list[_Input], _BodyInfo | None]:
        merged: dict[tuple[str, str], tuple[int, JsonPath, dict[str, Any]]] = {}
        own = self.listing(
            cand.src, (*cand.path, "parameters"), cand.node.get("parameters"), "'parameters'"
        )
        entries = [
            *cand.item_params,
            *((cand.src, (*cand.path, "parameters", i), p) for i, p in enumerate(own)),
        ]
        for src, path, raw in entries:
            followed = self.sources.follow(src, path, raw)
            if followed is None:
                continue
            psrc, ppath, param = followed
            if not isinstance(param, dict):
                self.error(psrc, ppath, "a parameter must be a mapping")
                continue
            name, location = param.get("name"), param.get("in")
            if not isinstance(name, str) or not name:
                self.error(psrc, ppath, "a parameter needs a 'name'")
                continue
            allowed: tuple[str, ...] = ("path", "query", "header", "cookie")
            if self.version == "2.0":
                allowed = ("path", "query", "header", "body", "formData")
            if location not in allowed:
                self.error(psrc, (*ppath, "in"), f"'in' must be one of {', '.join(allowed)}")
                continue
            merged[(location, name)] = (psrc, ppath, param)  # operation level wins
        templated = _TEMPLATE.findall(cand.url)
        inputs: list[_Input] = []
        body_params: list[tuple[int, JsonPath, dict[str, Any]]] = []
        form_params: list[tuple[int, JsonPath, dict[str, Any]]] = []
        for (location, name), (psrc, ppath, param) in merged.items():
            if location == "body":
                body_params.append((psrc, ppath, param))
                continue
            if location == "formData":
                form_params.append((psrc, ppath, param))
                continue
            if location == "header" and name.lower() in _IGNORED_HEADERS:
                self.warn(
                    psrc,
                    ppath,
                    f"header parameter {name!r} is ignored: mcpgen sets it "
                    "(from the body, the response or the security scheme)",
                )
                continue
            if location == "path" and name not in templated:
                self.warn(psrc, ppath, f"path parameter {name!r} is not in the path {cand.url!r}")
                continue
            inputs.append(self.parameter(psrc, ppath, param, location, name))
        declared = {name for (location, name) in merged if location == "path"}
        for name in templated:
            if name not in declared:
                self.warn(
                    cand.src,
                    cand.path,
                    f"path parameter {name!r} is not declared; imported as a required string",
                )
                inputs.append(_Input("path", name, {"type": "string"}, True, {"style": None}))
                declared.add(name)
        inputs.sort(key=lambda i: templated.index(i.wire) if i.location == "path" else 0)
        body = self.request_body(cand, body_params, form_params)
        return inputs, body

    def parameter(
        self,
        src: int,
        path: JsonPath,
        param: dict[str, Any],
        location: str,
        name: str,
    ) -> _Input:
        required = param.get("required") is True
        if location == "path" and not required:
            self.warn(src, path, "a path parameter must be 'required: true'; treated as required")
            required = True
        extra: dict[str, Any] = {}
        content_type: str | None = None
        style = param.get("style") if isinstance(param.get("style"), str) else None
        explode = param.get("explode") if isinstance(param.get("explode"), bool) else None
        if self.version == "2.0":
            raw_schema = {k: param[k] for k in _SWAGGER_PARAM_KEYS if k in param}
            raw_schema["items"] = _swagger_items(param.get("items"))
            if raw_schema["items"] is None:
                del raw_schema["items"]
            fmt = param.get("collectionFormat")
            if param.get("type") == "array":
                fmt = fmt if isinstance(fmt, str) else "csv"
                if fmt not in _COLLECTION_FORMATS:
                    self.warn(src, (*path, "collectionFormat"), f"unknown collectionFormat {fmt!r}")
                    fmt = "csv"
                if fmt == "tsv":
                    self.warn(
                        src,
                        (*path, "collectionFormat"),
                        "tab-separated arrays are not supported; sent comma-separated",
                    )
                style, explode = _COLLECTION_FORMATS[fmt]
                if location in ("path", "header"):
                    style = "simple"
            schema, deps = self.converter.convert(src, path, raw_schema)
        elif "content" in param:
            content = self.mapping(src, (*path, "content"), param["content"], "'content'")
            if len(content) != 1:
                self.warn(src, (*path, "content"), "a parameter's content needs one media type")
            media, media_node = next(iter(content.items()), ("application/json", {}))
            content_type = media
            media_node = media_node if isinstance(media_node, dict) else {}
            schema, deps = self.converter.convert(
                src, (*path, "content", media, "schema"), media_node.get("schema", {})
            )
        elif "schema" in param:
            schema, deps = self.converter.convert(src, (*path, "schema"), param["schema"])
        else:
            self.warn(src, path, "a parameter needs 'schema' or 'content'; imported as a string")
            schema, deps = {"type": "string"}, set()
        if param.get("allowReserved") is True:
            self.warn(
                src, (*path, "allowReserved"), "allowReserved is not supported; values are encoded"
            )
        schema = _annotate(
            schema,
            description=param.get("description"),
            deprecated=param.get("deprecated"),
            examples=_examples(param),
        )
        extra.update(style=style, explode=explode, content_type=content_type, deps=deps)
        return _Input(location, name, schema, required, extra)

    # -- bodies --------------------------------------------------------------------------
    def request_body(
        self,
        cand: _Candidate,
        body_params: list[tuple[int, JsonPath, dict[str, Any]]],
        form_params: list[tuple[int, JsonPath, dict[str, Any]]],
    ) -> _BodyInfo | None:
        if self.version == "2.0":
            return self.swagger_body(cand, body_params, form_params)
        if "requestBody" not in cand.node:
            return None
        followed = self.sources.follow(
            cand.src, (*cand.path, "requestBody"), cand.node["requestBody"]
        )
        if followed is None:
            return None
        src, path, node = followed
        if not isinstance(node, dict):
            self.error(src, path, "a request body must be a mapping")
            return None
        content = self.mapping(src, (*path, "content"), node.get("content"), "'content'")
        if not content:
            self.error(src, path, "a request body needs 'content'")
            return None
        media = _choose_media(content)
        media_node = content[media] if isinstance(content[media], dict) else {}
        mpath = (*path, "content", media)
        if "encoding" in media_node:
            self.warn(
                src, (*mpath, "encoding"), "per-part encoding is not supported; parts use defaults"
            )
        required = node.get("required") is True
        description = node.get("description")
        if "schema" in media_node:
            schema, deps = self.converter.convert(src, (*mpath, "schema"), media_node["schema"])
        else:
            schema, deps = {}, set()
        return self.body_info(
            src, mpath, media, required, schema, deps, description, _examples(media_node)
        )

    def swagger_body(
        self,
        cand: _Candidate,
        body_params: list[tuple[int, JsonPath, dict[str, Any]]],
        form_params: list[tuple[int, JsonPath, dict[str, Any]]],
    ) -> _BodyInfo | None:
        consumes = cand.node.get("consumes", self.data.get("consumes"))
        consumes = [c for c in consumes if isinstance(c, str)] if isinstance(consumes, list) else []
        if body_params and form_params:
            src, path, _ = form_params[0]
            self.error(src, path, "an operation cannot have both 'body' and 'formData' parameters")
        if len(body_params) > 1:
            src, path, _ = body_params[1]
            self.error(src, path, "an operation can have only one 'body' parameter")
        if body_params:
            src, path, param = body_params[0]
            media = _choose_media(dict.fromkeys(consumes)) if consumes else "application/json"
            schema, deps = self.converter.convert(src, (*path, "schema"), param.get("schema", {}))
            return self.body_info(
                src,
                path,
                media,
                param.get("required") is True,
                schema,
                deps,
                param.get("description"),
                [],
            )
        if not form_params:
            return None
        has_file = any(p.get("type") == "file" for _, _, p in form_params)
        if "multipart/form-data" in consumes or has_file:
            media = "multipart/form-data"
        else:
            media = "application/x-www-form-urlencoded"
        inputs: list[_Input] = []
        form_deps: set[str] = set()
        for src, path, param in form_params:
            item = self.parameter(src, path, param, "body", param["name"])
            form_deps.update(item.param.get("deps", ()))
            inputs.append(item)
        return _BodyInfo(
            inputs=inputs,
            deps=form_deps,
            spread=True,
            content_type=media,
            media_type=media,
            required=any(i.required for i in inputs),
        )

    def body_info(
        self,
        src: int,
        path: JsonPath,
        media: str,
        required: bool,
        schema: Json,
        deps: set[str],
        description: Any,
        examples: list[Any],
    ) -> _BodyInfo:
        category = _category(media)
        if _is_xml(media):
            self.warn(src, path, f"{media} bodies are passed as raw text, not built from data")
        plain = isinstance(schema, dict) and schema.get("type") == "string"
        if category in ("application/octet-stream", "text/plain") and not plain:
            if schema not in ({}, True) and not _is_xml(media):
                self.warn(src, path, f"the schema of a {media} body is not used: it is a string")
            schema = {"type": "string"}
            deps = set()
        if category == "application/octet-stream":
            schema = {**schema, "contentEncoding": "base64"}
        target, name = self.converter.resolve(schema)
        spreadable = (
            category
            in ("application/json", "application/x-www-form-urlencoded", "multipart/form-data")
            and isinstance(target, dict)
            and target.get("type", "object") == "object"
            and isinstance(target.get("properties"), dict)
            and target["properties"]
            and target.get("additionalProperties", False) is False
            and not any(
                k in target
                for k in ("allOf", "anyOf", "oneOf", "not", "if", "$ref", "patternProperties")
            )
            and (required or not target.get("required"))
        )
        if not spreadable:
            whole = _annotate(schema, description=description, examples=examples)
            item = _Input("body", "body", whole, required)
            return _BodyInfo([item], deps, False, category, media, required)
        if name is not None:
            deps = set(self.converter.deps.get(name, ()))
        needed = set(target.get("required", []))
        inputs = []
        for prop, prop_schema in target["properties"].items():
            resolved, _ = self.converter.resolve(prop_schema)
            if isinstance(resolved, dict) and resolved.get("readOnly") is True:
                continue  # the server sets it; a request must not send it
            inputs.append(_Input("body", prop, prop_schema, required and prop in needed))
        return _BodyInfo(inputs, deps, True, category, media, required)

    # -- responses -----------------------------------------------------------------------
    def responses(self, cand: _Candidate) -> tuple[dict[str, Json] | None, str | None, bool]:
        responses = self.mapping(
            cand.src, (*cand.path, "responses"), cand.node.get("responses"), "'responses'"
        )
        if not responses and self.version != "3.1":
            self.warn(cand.src, cand.path, "an operation should declare its 'responses'")
        success = sorted(
            (c for c in responses if isinstance(c, str) and re.fullmatch(r"2\d\d", c)), key=int
        )
        success += [c for c in responses if isinstance(c, str) and c.upper() == "2XX"]
        codes = success or [c for c in responses if c == "default"]
        if not codes:
            return None, None, False
        chosen: tuple[str, int, JsonPath, str | None, Json] | None = None
        for code in codes:
            found = self.response_schema(cand, code, responses[code])
            if found is None:
                continue
            src, path, media, schema_node = found
            if chosen is None:
                chosen = (code, src, path, media, schema_node)
            elif schema_node != chosen[4] and media is not None and schema_node is not None:
                self.warn(
                    src,
                    path,
                    f"response {code} differs from response {chosen[0]}; "
                    f"the output schema describes {chosen[0]} only",
                )
        if chosen is None:
            return None, None, False
        _, src, path, media, schema_node = chosen
        if media is None or schema_node is None or _category(media) != "application/json":
            return None, media, False
        schema, deps = self.converter.convert(src, path, schema_node)
        if self.converter.is_object(schema):
            target, name = self.converter.resolve(schema)
            root = dict(target) if isinstance(target, dict) else {}
            if name is not None:
                deps = set(self.converter.deps.get(name, ()))
            root.setdefault("type", "object")
            defs = self.converter.closure(deps)
            if defs:
                root["$defs"] = defs
            return root, media, False
        wrapped: dict[str, Json] = {
            "type": "object",
            "properties": {"result": schema},
            "required": ["result"],
        }
        defs = self.converter.closure(deps)
        if defs:
            wrapped["$defs"] = defs
        return wrapped, media, True

    def response_schema(
        self, cand: _Candidate, code: str, raw: Any
    ) -> tuple[int, JsonPath, str | None, Json] | None:
        """(file, path of the schema, media type, schema node) of one response."""
        followed = self.sources.follow(cand.src, (*cand.path, "responses", code), raw)
        if followed is None:
            return None
        src, path, node = followed
        if not isinstance(node, dict):
            self.error(src, path, "a response must be a mapping")
            return None
        if self.version == "2.0":
            produces = cand.node.get("produces", self.data.get("produces"))
            produces = (
                [p for p in produces if isinstance(p, str)] if isinstance(produces, list) else []
            )
            schema = node.get("schema")
            if schema is None:
                return src, path, None, None
            if isinstance(schema, dict) and schema.get("type") == "file":
                binary = [p for p in produces if _category(p) != "application/json"]
                return src, path, (binary or ["application/octet-stream"])[0], None
            media = _choose_media(dict.fromkeys(produces)) if produces else "application/json"
            return src, (*path, "schema"), media, schema
        content = self.mapping(src, (*path, "content"), node.get("content"), "'content'")
        if not content:
            return src, path, None, None
        media = _choose_media(content)
        media_node = content[media] if isinstance(content[media], dict) else {}
        if "schema" not in media_node:
            return src, (*path, "content", media), media, None
        return src, (*path, "content", media, "schema"), media, media_node["schema"]

    # -- security, servers ---------------------------------------------------------------
    def security(self, cand: _Candidate) -> list[dict[str, list[str]]]:
        return self.operation_security(cand.src, cand.path, cand.node)

    def servers(self) -> list[dict[str, Json]]:
        if self.version == "2.0":
            host, base = self.data.get("host"), self.data.get("basePath", "")
            base = base if isinstance(base, str) else ""
            if base and not base.startswith("/"):
                self.warn(0, ("basePath",), "basePath must start with '/'")
                base = "/" + base
            if not isinstance(host, str) or not host:
                return [{"url": base or "/"}]
            schemes = self.data.get("schemes")
            schemes = (
                [s for s in schemes if s in ("http", "https")] if isinstance(schemes, list) else []
            )
            return [{"url": f"{s}://{host}{base}"} for s in (schemes or ["https"])]
        result: list[dict[str, Json]] = []
        raw = self.listing(0, ("servers",), self.data.get("servers"), "'servers'")
        for index, server in enumerate(raw):
            where: JsonPath = ("servers", index)
            if not isinstance(server, dict) or not isinstance(server.get("url"), str):
                self.error(0, where, "a server needs a 'url'")
                continue
            url = server["url"]
            variables = self.mapping(0, (*where, "variables"), server.get("variables"), "variables")
            for var in _TEMPLATE.findall(url):
                spec = variables.get(var)
                default = spec.get("default") if isinstance(spec, dict) else None
                if default is None:
                    self.error(0, where, f"server variable {var!r} has no default")
                    continue
                url = url.replace("{" + var + "}", str(default))
            entry: dict[str, Json] = {"url": url}
            if isinstance(server.get("description"), str):
                entry["description"] = server["description"]
            result.append(entry)
        return result

    # -- resources and overrides ---------------------------------------------------------
    def as_resource(self, built: _Built, kind: str) -> dict[str, Json] | None:
        """A resource entry for a GET operation, or None (warned) to keep it a tool."""
        op, cand = built.operation, built.candidate
        reason = None
        if op.method != "GET":
            reason = f"only GET operations can be resources, not {op.method}"
        elif op.body is not None:
            reason = "an operation with a request body cannot be a resource"
        elif any(p.required and p.location in ("header", "cookie") for p in op.parameters):
            reason = "an operation with required header or cookie parameters cannot be a resource"
        if reason:
            self.warn(cand.src, cand.path, f"{reason}; imported as a tool")
            return None
        dropped = [p for p in op.parameters if p.location in ("header", "cookie")]
        for param in dropped:
            self.warn(
                cand.src,
                cand.path,
                f"{param.location} parameter {param.name!r} cannot be set "
                "when the operation is read as a resource",
            )
        path_vars = [p for p in op.parameters if p.location == "path"]
        query_vars = [p for p in op.parameters if p.location == "query"]
        if kind == "resource" and path_vars:
            self.warn(
                cand.src, cand.path, "an operation with path parameters is a resource template"
            )
            kind = "resourceTemplate"
        if kind == "resource" and query_vars:
            self.warn(cand.src, cand.path, "query parameters cannot be set on a fixed resource")
        if kind == "resourceTemplate" and not (path_vars or query_vars):
            self.warn(cand.src, cand.path, "an operation without parameters is a fixed resource")
            kind = "resource"
        by_name = {p.name: p for p in path_vars}
        uri = "api://" + _TEMPLATE.sub(
            lambda m: (
                "{" + _uri_var(by_name[m.group(1)].argument) + "}"
                if kind == "resourceTemplate" and m.group(1) in by_name
                else m.group(0)
            ),
            op.path.lstrip("/"),
        )
        tool = built.tool
        resource: dict[str, Json] = {"name": tool["name"]}
        if kind == "resourceTemplate":
            if query_vars:
                uri += "{?" + ",".join(_uri_var(p.argument) for p in query_vars) + "}"
            resource["uriTemplate"] = uri
        else:
            resource["uri"] = uri
        for key in ("title", "description"):
            if key in tool:
                resource[key] = tool[key]
        resource["mimeType"] = op.response_content_type or "application/json"
        if kind == "resourceTemplate":  # its variables are checked against these schemas
            resource["x-mcpgen-input"] = tool["input"]
        return resource

    def apply_overrides(
        self,
        options: Options,
        tools: list[_Built],
        resources: list[tuple[dict[str, Json], Operation]],
    ) -> None:
        matched: set[str] = set()
        renamed_by: dict[int, str] = {}  # entry index -> the override key that renamed it
        entries: list[tuple[dict[str, Json], _Built | None, Operation, str]] = [
            (b.tool, b, b.operation, "tool") for b in tools
        ] + [(r, None, o, "resource") for r, o in resources]
        for index, (entry, built, op, kind) in enumerate(entries):
            original = entry["name"]
            for key in (op.operation_id, original):  # the tool name's override wins
                if key is None or key not in options.overrides:
                    continue
                matched.add(key)
                override = options.overrides[key]
                if "name" in override:
                    renamed_by[index] = key
                for field_name in OVERRIDE_KEYS:
                    if field_name not in override:
                        continue
                    if field_name == "annotations":
                        if kind == "tool":
                            entry["annotations"] = {
                                **entry["annotations"],
                                **override["annotations"],
                            }
                    else:
                        entry[field_name] = override[field_name]
            if entry["name"] != original:
                new_op = replace(op, tool=entry["name"])
                if built is not None:
                    built.operation = new_op
                else:
                    resources[index - len(tools)] = (entry, new_op)
        for key in options.overrides:
            if key not in matched:
                self.problems.add(
                    option_problem(
                        Level.WARNING,
                        f"openapi.overrides.{key}",
                        f"no imported operation has the tool name or operationId {key!r}",
                    )
                )
        seen: dict[str, int] = {}
        for index, (entry, *_) in enumerate(entries):
            name = entry["name"]
            if index not in renamed_by:
                seen.setdefault(names.snake(name), index)  # generated names are valid and unique
                continue
            where = f"openapi.overrides.{renamed_by[index]}.name"
            if not _TOOL_NAME.match(name):
                message = f"{name!r} is not a valid tool name (letters, digits, _ - ., at most 64)"
                self.problems.add(option_problem(Level.ERROR, where, message))
        for index, (entry, *_) in enumerate(entries):
            if index not in renamed_by:
                continue
            name = entry["name"]
            first = seen.setdefault(names.snake(name), index)
            if first != index:
                other = entries[first][2]
                self.problems.add(
                    option_problem(
                        Level.ERROR,
                        f"openapi.overrides.{renamed_by[index]}.name",
                        f"{name!r} is also the name (or the Python name) of "
                        f"{other.method} {other.path}",
                    )
                )


@dataclass
class _BodyInfo:
    inputs: list[_Input]
    deps: set[str]
    spread: bool
    content_type: str
    media_type: str
    required: bool


# -- small helpers ---------------------------------------------------------------------------


def _annotations(method: str) -> dict[str, bool]:
    method = method.lower()
    read_only = method in ("get", "head")
    result = {"readOnlyHint": read_only}
    if method == "delete":
        result["destructiveHint"] = True
    result["idempotentHint"] = method in ("get", "head", "put", "delete")
    result["openWorldHint"] = True
    return result


def _category(media: str) -> str:
    """Which of the body kinds mcpgen sends a media type as."""
    base = media.split(";", 1)[0].strip().lower()
    if base in ("application/json", "*/*", "application/*", "text/json") or base.endswith("+json"):
        return "application/json"
    if base == "application/x-www-form-urlencoded":
        return "application/x-www-form-urlencoded"
    if base.startswith("multipart/"):
        return "multipart/form-data"
    if base.startswith("text/") or _is_xml(base):
        return "text/plain"
    return "application/octet-stream"


def _is_xml(media: str) -> bool:
    base = media.split(";", 1)[0].strip().lower()
    return base in ("application/xml", "text/xml") or base.endswith("+xml")


_PREFERENCE = (
    "application/json",
    "application/x-www-form-urlencoded",
    "multipart/form-data",
    "text/plain",
    "application/octet-stream",
)


def _choose_media(content: dict[str, Any]) -> str:
    """The media type to use: JSON first, then forms, text (XML last), then binary."""

    def rank(media: str) -> tuple[int, int, int]:
        category = _category(media)
        exact = 0 if media.split(";", 1)[0].strip().lower() == category else 1
        return (_PREFERENCE.index(category), int(_is_xml(media)), exact)

    medias = [m for m in content if isinstance(m, str)]
    return min(medias, key=lambda m: (rank(m), medias.index(m)))


def _examples(node: dict[str, Any]) -> list[Any]:
    found: list[Any] = []
    if "example" in node:
        found.append(node["example"])
    examples = node.get("examples")
    if isinstance(examples, dict):
        found.extend(e["value"] for e in examples.values() if isinstance(e, dict) and "value" in e)
    return found


def _annotate(
    schema: Json,
    description: Any = None,
    deprecated: Any = None,
    examples: list[Any] | None = None,
) -> Json:
    """``schema`` (not changed) with a description, deprecation and examples added."""
    extra: dict[str, Any] = {}
    if isinstance(description, str) and description:
        extra["description"] = description
    if deprecated is True:
        extra["deprecated"] = True
    if examples:
        extra["examples"] = examples
    if not extra:
        return schema
    if schema is True:
        schema = {}
    if schema is False:
        schema = {"not": {}}
    merged = dict(schema)
    for key, value in extra.items():
        if key == "examples":
            merged[key] = [*merged.get(key, []), *value]
        else:
            merged.setdefault(key, value)
    return merged


def _swagger_items(items: Any) -> Any:
    """A Swagger 2.0 Items Object as a schema (collection formats inside are dropped)."""
    if not isinstance(items, dict):
        return items
    result = {k: items[k] for k in _SWAGGER_PARAM_KEYS if k in items}
    if "items" in result:
        result["items"] = _swagger_items(result["items"])
    return result


def _uri_var(name: str) -> str:
    """An RFC 6570 variable name: other characters percent-encoded."""
    return _URI_VARNAME.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), name)


__all__ = ["import_openapi", "is_openapi"]
