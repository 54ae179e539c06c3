"""OpenAPI 3.0 / 3.1 and Swagger 2.0 operations as manifest tools: the paths walked
(``collect``), each chosen operation built into a tool (``build``), some read as resources
and the overrides applied (``options``)."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from mcpgen import identifiers as names
from mcpgen.load import Document, JsonPath
from mcpgen.openapi import naming, swagger2
from mcpgen.openapi.inputs import InputImport
from mcpgen.openapi.kept import Kept
from mcpgen.openapi.media import sent_type, text_of, tool_annotations
from mcpgen.openapi.naming import TEMPLATE
from mcpgen.openapi.one_way import leave_out
from mcpgen.openapi.options import apply_overrides, as_resource, parse_options
from mcpgen.openapi.parts import Built, Candidate
from mcpgen.openapi.result import Body, OpenAPIImport, Operation, Param
from mcpgen.openapi.schema import LongChain, SchemaConverter
from mcpgen.openapi.security import SecurityImport
from mcpgen.openapi.sources import deep_references
from mcpgen.problems import Level, Location, Problem, Problems

Json = Any
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_PATH_ITEM_KEYS = frozenset({"$ref", "summary", "description", "servers", "parameters", *METHODS})
_STD_DIALECT = "https://spec.openapis.org/oas/3.1/dialect/base"
OK = ("200", "201", "203", "204")  # final answers: their schema is the result's
POLL_DEFAULTS = {"interval": 2.0, "timeout": 600.0}  # seconds (docs/tasks.md)


def is_openapi(data: Any) -> bool:
    """Whether ``data`` is an OpenAPI 3.x or Swagger 2.0 document (by its top-level field)."""
    return isinstance(data, dict) and _version(data)[0] is not None


def _version(data: dict[str, Any]) -> tuple[str | None, str]:
    """("2.0" | "3.0" | "3.1" | None, the version as written)."""
    if "openapi" in data:
        raw = data["openapi"]
        text = str(raw) if isinstance(raw, str | float | int) and not isinstance(raw, bool) else ""
        match = re.match(r"^3\.(\d+)(?:\.\d+)?(?:-.+)?$", text)
        return (None if not match else "3.0" if match.group(1) == "0" else "3.1"), text
    if "swagger" in data:
        return ("2.0" if data["swagger"] in ("2.0", 2.0) else None), str(data["swagger"])
    return None, ""


def import_openapi(
    doc: Document, options: dict[str, Any] | None = None, keep: bool = False
) -> OpenAPIImport:
    """``keep``: each operation's result kept in the build cache, for the next (``kept``)."""
    problems = Problems()
    importer = _Importer(doc, options, problems)
    importer.keep = keep
    try:
        imported = importer.run()
    except RecursionError:  # a chain of references, in any of the files: where it starts
        deep = deep_references(importer.sources)
        if not deep.has_errors():
            raise
        problems.extend(deep.items)
        imported = None
    except LongChain:  # reported where it starts
        imported = None
    except Exception as exc:  # a bug must not become a traceback: report it, located
        message = f"internal error while importing: {type(exc).__name__}: {exc}"
        problems.add(Problem(Level.ERROR, Location(doc.file), "", message))
        imported = None
    return imported or OpenAPIImport([], [], [], {}, problems.sorted())


class _Importer(SecurityImport, InputImport):
    def run(self) -> OpenAPIImport | None:
        """The import; None for a document mcpgen does not read (the problems say why)."""
        data = self.doc.data
        if not isinstance(data, dict):
            self.error(0, (), "an OpenAPI document is a mapping with 'openapi' or 'swagger'")
            return None
        self.data = data
        version, written = _version(data)
        if version is None:
            if "openapi" in data:
                self.error(0, ("openapi",), f"unsupported OpenAPI version {written!r} (3.0 or 3.1)")
            elif "swagger" in data:
                self.error(0, ("swagger",), f"unsupported Swagger version {written!r} (2.0)")
            else:
                self.error(0, (), "not an OpenAPI document: no 'openapi' or 'swagger' field")
            return None
        self.version = version
        top = "swagger" if version == "2.0" else "openapi"
        if not isinstance(data[top], str):
            self.warn(0, (top,), f"the version should be a string: '{written}'")
        if version == "3.1" and not written.startswith("3.1"):
            self.warn(0, ("openapi",), f"OpenAPI {written} is read as 3.1")
        if data.get("jsonSchemaDialect") not in (None, _STD_DIALECT):
            self.warn(0, ("jsonSchemaDialect",), "schemas are read as JSON Schema 2020-12")
        options = parse_options(self.raw_options, self.problems)
        if "webhooks" in data:
            self.warn(0, ("webhooks",), "webhooks are requests the API makes; not imported")
        chosen: list[tuple[Candidate, str]] = []
        for cand in self.collect():
            if cand.node.get("deprecated") is True and not options.deprecated:
                continue  # on its way out: not offered to models (openapi.deprecated: true)
            kind = options.kind(cand.method, cand.url, cand.tags, cand.operation_id)
            if kind != "exclude":
                chosen.append((cand, kind))
        wanted = [
            (naming.base_name(c.method, c.url, c.operation_id), c.method, c.url) for c, _ in chosen
        ]
        tool_names = naming.unique_names(wanted)
        # the tools' own model classes (``ListItemsInput``) are not for components to take
        models = {names.model_class(n, part) for n in tool_names for part in ("Input", "Output")}
        self.converter = SchemaConverter(self.sources, version, models)
        self.converter.naming.name_external(self.sources.scan_refs())
        tools: list[Built] = []
        resources: list[tuple[dict[str, Json], Operation]] = []
        # closed before the overrides change the tools, and if the import stops (``Kept.__exit__``)
        with Kept(self, tool_names if self.keep else None) as kept:
            for (cand, kind), name in zip(chosen, tool_names, strict=True):
                try:
                    built = kept.build(cand, name)
                except (RecursionError, LongChain):
                    raise
                except Exception as exc:  # one operation's bug must not lose the others
                    what = f"{type(exc).__name__}: {exc}"
                    message = f"internal error while importing this operation: {what}"
                    self.error(cand.src, cand.path, message)
                    continue
                if kind in ("resource", "resourceTemplate"):
                    resource = as_resource(built, kind, self.warn)
                    if resource is not None:
                        resources.append((resource, built.operation))
                        continue
                tools.append(built)
        renamed = apply_overrides(options, tools, resources, self.problems)
        servers, schemes, info = self.servers(), self.security_schemes(), self.info()
        if servers and "://" not in servers[0]["url"] and "baseUrl" not in (self.raw_options or {}):
            self.warn(
                0,
                ("servers", 0, "url") if version != "2.0" else (),
                f"the server URL {servers[0]['url']!r} is relative: the generated server calls "
                "nothing until a base URL is set (openapi.baseUrl, or <NAME>_API_BASE_URL)",
            )
        parts = [b.tool.get(part, {}) for b in tools for part in ("input", "output")]
        used = {name for schema in parts for name in schema.get("$defs", ())}
        return OpenAPIImport(
            tools=[b.tool for b in tools],
            operations=[b.operation for b in tools],
            servers=servers,
            security_schemes=schemes,
            problems=self.problems.sorted(),  # last: everything above may add problems
            resources=[{k: v for k, v in r.items() if k != "input"} for r, _ in resources],
            resource_operations=[o for _, o in resources],
            resource_inputs=[r.get("input") for r, _ in resources],
            version=version,
            info=info,
            locate=self.sources.location,
            renamed=renamed,
            defs={name: self.converter.defs[name] for name in sorted(used)},
            def_origins={n: self.converter.origin[n] for n in sorted(used)},  # each has one
        )

    def info(self) -> dict[str, Json]:
        raw = self.data.get("info")
        if not isinstance(raw, dict):
            self.error(0, ("info",), "'info' (with 'title' and 'version') is required")
            return {}
        return {
            k: raw[k] for k in ("title", "version", "description") if isinstance(raw.get(k), str)
        }

    def collect(self) -> list[Candidate]:
        paths = self.data.get("paths")
        if paths is None:
            if self.version != "3.1":
                self.error(0, (), "'paths' is required")
            return []
        result: list[Candidate] = []
        seen: dict[str, str] = {}  # operationId -> the first operation that has it
        for url, raw_item in self.mapping(0, ("paths",), paths, "'paths'").items():
            where: JsonPath = ("paths", url)
            if url.startswith("x-"):
                continue
            if not url.startswith("/") or {"{", "}"} & set(TEMPLATE.sub("", url)):
                why = "has unbalanced '{' or '}'" if url.startswith("/") else "must start with '/'"
                self.error(0, where, f"path {url!r} {why}")
                continue
            followed = self.follow_mapping(0, where, raw_item, "a path item")
            if followed is None:
                continue
            src, ipath, item = followed
            for key in item:
                if key not in _PATH_ITEM_KEYS and not key.startswith("x-"):
                    self.warn(src, (*ipath, key), f"{key!r} is not an operation mcpgen imports")
            item_params = self.parameter_entries(src, ipath, item)
            for method, node in [(m, item[m]) for m in METHODS if m in item]:
                opath = (*ipath, method)
                if not isinstance(node, dict):
                    self.error(src, opath, "an operation must be a mapping")
                    continue
                op_id = node.get("operationId")
                if op_id is not None and not isinstance(op_id, str):
                    self.error(src, (*opath, "operationId"), "operationId must be a string")
                    op_id = None
                elif op_id is not None:
                    first = seen.setdefault(op_id, f"{method.upper()} {url}")
                    if first != f"{method.upper()} {url}":
                        message = f"operationId {op_id!r} is not unique (also {first})"
                        self.warn(src, (*opath, "operationId"), message)
                raw_tags = self.listing(src, (*opath, "tags"), node.get("tags"), "'tags'")
                tags = [t for t in raw_tags if isinstance(t, str)]
                server = self.own_server(src, ipath, item, opath, node)
                result.append(
                    Candidate(src, opath, method, url, node, item_params, op_id, tags, server)
                )
        return result

    def build(self, cand: Candidate, name: str) -> Built:
        inputs, body_info = self.parameters(cand)
        deps = set().union(*(i.deps for i in inputs), body_info.deps if body_info else ())
        body_inputs = body_info.inputs if body_info is not None else []
        arguments = naming.argument_names([(i.location, i.wire) for i in [*inputs, *body_inputs]])
        named = list(zip([*inputs, *body_inputs], arguments, strict=True))
        required = [argument for item, argument in named if item.required]
        # closed: an argument the operation does not take is refused, not dropped unsent
        input_schema: dict[str, Json] = {
            "type": "object",
            "properties": {argument: item.schema for item, argument in named},
            "additionalProperties": False,
            **({"required": required} if required else {}),
        }
        params = [
            Param(item.wire, item.location, argument, item.required, **item.param)
            for item, argument in named
            if item.location != "body"
        ]
        body: Body | None = None
        if body_info is not None:
            body_arguments = arguments[len(inputs) :]
            body = Body(
                argument=None if body_info.spread else body_arguments[0],
                content_type=body_info.content_type,
                required=body_info.required,
                properties=[i.wire for i in body_inputs] if body_info.spread else [],
                arguments=list(body_arguments) if body_info.spread else [],
                media_type=sent_type(body_info.media_type),
                parts=body_info.parts,
                read_only=body_info.read_only,
                write_only=body_info.write_only,
            )
            if body_info.together:
                # an optional body spread: a property given sends it, with all it requires
                pairs = zip(body_inputs, body.arguments, strict=True)
                wanted = [a for i, a in pairs if i.wire in body_info.together]
                input_schema["dependentRequired"] = {
                    a: [w for w in wanted if w != a] for a in body.arguments if set(wanted) - {a}
                }
        self.converter.add_defs(input_schema, deps)
        marks = [i.param.get("read_only") or {} for i in inputs]  # nested ones (the runtime's)
        marks.append(body_info.read_only if body_info is not None else {})
        if any(marks):
            marked: Json = {"$defs": {name: {} for plan in marks for name in plan.get("$defs", ())}}
            input_schema = leave_out(self.converter, input_schema, marked, "Request")
        answers = self.responses(cand)
        poll = self.polling(cand)
        if poll is not None and not any(c in (cand.node.get("responses") or {}) for c in OK):
            answers.output = None  # the 202's schema, not the result's: the body's marks apply
            answers.write_only = (
                {"2XX": body_info.write_only} if body_info and body_info.write_only else {}
            )
        operation = Operation(
            tool=name,
            method=cand.method.upper(),
            path=cand.url,
            operation_id=cand.operation_id,
            parameters=params,
            body=body,
            response_content_type=answers.media,
            wrapped_output=answers.wrapped,
            security=self.operation_security(cand.src, cand.path, cand.node),
            tags=list(cand.tags),
            origin=(cand.src, tuple(cand.path)),
            server=cand.server,
            poll=poll,
            write_only=answers.write_only,
            error_types=answers.error_types,
        )
        summary = text_of(cand.node.get("summary"))
        text = text_of(cand.node.get("description")) or summary or f"{operation.method} {cand.url}"
        tool: dict[str, Json] = {
            "name": name,
            **({"title": summary} if summary else {}),
            "description": f"Deprecated. {text}" if cand.node.get("deprecated") is True else text,
            "input": input_schema,
            **({"output": answers.output} if answers.output is not None else {}),
            "annotations": tool_annotations(cand.method),
            **({"task": "optional"} if poll is not None else {}),
        }
        if "callbacks" in cand.node:
            self.warn(cand.src, (*cand.path, "callbacks"), "callbacks are not supported; ignored")
        return Built(operation, tool)

    def polling(self, cand: Candidate) -> dict[str, float] | None:
        """How to poll an operation answering 202 with a Location header (else None)."""
        responses = cand.node.get("responses")
        raw = responses.get("202") if isinstance(responses, dict) else None
        followed = self.sources.follow(cand.src, (*cand.path, "responses", "202"), raw)
        headers = followed[2].get("headers") if followed and isinstance(followed[2], dict) else None
        if not isinstance(headers, dict) or "location" not in {str(h).lower() for h in headers}:
            return None
        return dict(POLL_DEFAULTS)

    def own_server(
        self, src: int, ipath: JsonPath, item: Json, opath: JsonPath, node: Json
    ) -> str | None:
        """The URL of an operation's (else its path item's) first server, its calls' base."""
        at, holder = (opath, node) if "servers" in node else (ipath, item)
        found = self.servers(src, at, holder) if "servers" in holder else []
        url = found[0]["url"] if found else None
        if url is not None and urlsplit(url).netloc and "baseUrl" in (self.raw_options or {}):
            self.warn(src, (*at, "servers"), "openapi.baseUrl is set: this server is not used")
            return None
        return url

    def servers(
        self, src: int = 0, at: JsonPath = (), holder: Json = None
    ) -> list[dict[str, Json]]:
        """The document's servers, or those of the operation or path item ``holder`` at ``at``."""
        if self.version == "2.0" and holder is None:
            return swagger2.servers(self)
        result: list[dict[str, Json]] = []
        holder = self.data if holder is None else holder
        raw = self.listing(src, (*at, "servers"), holder.get("servers"), "'servers'")
        for index, server in enumerate(raw):
            where: JsonPath = (*at, "servers", index)
            if not isinstance(server, dict) or not isinstance(server.get("url"), str):
                self.error(src, where, "a server needs a 'url'")
                continue
            url = server["url"]
            given = self.mapping(src, (*where, "variables"), server.get("variables"), "variables")
            for var in TEMPLATE.findall(url):
                spec = given.get(var)
                default = spec.get("default") if isinstance(spec, dict) else None
                if default is None:
                    self.error(src, where, f"server variable {var!r} has no default")
                    continue
                url = url.replace("{" + var + "}", str(default))
            entry: dict[str, Json] = {"url": url}
            if isinstance(server.get("description"), str):
                entry["description"] = server["description"]
            result.append(entry)
        return result
