"""An operation's inputs and output: its parameters, its request body (one argument or
its properties spread) and the schema of its success response (docs/openapi.md)."""

from __future__ import annotations

import re
from typing import Any

from mcpgen.load import JsonPath
from mcpgen.openapi import swagger2
from mcpgen.openapi.kept import kept_as
from mcpgen.openapi.media import annotate, category, choose_media, examples_of, is_xml, text_of
from mcpgen.openapi.naming import TEMPLATE
from mcpgen.openapi.one_way import leave_out
from mcpgen.openapi.parts import Answers, BodyInfo, Candidate, ImportBase, Input
from mcpgen.openapi.schema import SchemaConverter
from mcpgen.runtime.wire import RESERVED_HEADERS
from mcpgen.runtime.wire_body import PART_RESERVED

Json = Any
Located = swagger2.Located
_LOCATIONS = ("path", "query", "header", "cookie")
_SET_BY_MCPGEN = dict.fromkeys(
    ("accept", "content-type", "authorization"),
    "mcpgen sets it (from the body, the response or the security scheme)",
)
# an object body with one of these is passed whole: its properties are not all known
_NOT_SPREAD = ("allOf", "anyOf", "oneOf", "not", "if", "$ref", "patternProperties")
_ENCODING_KEYS: dict[str, type] = {"contentType": str, "style": str, "explode": bool}
FILE_NOTE = (
    "The file's bytes, base64-encoded; or a URI: of a resource of this server that holds "
    "them, or a data: URI (a URI has a scheme and a colon, base64 has none)."
)


class InputImport(ImportBase):
    converter: SchemaConverter

    def parameters(self, cand: Candidate) -> tuple[list[Input], BodyInfo | None]:
        merged: dict[tuple[str, str], Located] = {}
        own = self.parameter_entries(cand.src, cand.path, cand.node)
        for src, path, raw in [*cand.item_params, *own]:
            followed = self.follow_mapping(src, path, raw, "a parameter")
            if followed is None:
                continue
            psrc, ppath, param = followed
            name, location = param.get("name"), param.get("in")
            if not isinstance(name, str) or not name:
                self.error(psrc, ppath, "a parameter needs a 'name'")
                continue
            allowed: tuple[str, ...] = swagger2.LOCATIONS if self.version == "2.0" else _LOCATIONS
            if location not in allowed:
                self.error(psrc, (*ppath, "in"), f"'in' must be one of {', '.join(allowed)}")
                continue
            merged[(location, name)] = (psrc, ppath, param)  # operation level wins
        templated = TEMPLATE.findall(cand.url)
        inputs: list[Input] = []
        body_params: list[Located] = []
        form_params: list[Located] = []
        for (location, name), (psrc, ppath, param) in merged.items():
            if location in ("body", "formData"):  # Swagger 2.0: the request body
                (body_params if location == "body" else form_params).append((psrc, ppath, param))
                continue
            if location == "header" and name.lower() in RESERVED_HEADERS:
                who = _SET_BY_MCPGEN.get(name.lower(), "the HTTP client sets it")
                self.warn(psrc, ppath, f"header parameter {name!r} is ignored: {who}")
                continue
            if location == "path" and name not in templated:
                self.warn(psrc, ppath, f"path parameter {name!r} is not in the path {cand.url!r}")
                continue
            inputs.append(self.parameter(psrc, ppath, param, location, name))
        declared = {name for (location, name) in merged if location == "path"}
        for name in templated:
            if name not in declared:
                message = f"path parameter {name!r} is not declared; imported as a required string"
                self.warn(cand.src, cand.path, message)
                inputs.append(Input("path", name, {"type": "string"}, True))
                declared.add(name)
        inputs.sort(key=lambda i: templated.index(i.wire) if i.location == "path" else 0)
        body = self.request_body(cand, body_params, form_params)
        inputs += body.headers if body is not None else []
        return sorted(inputs, key=lambda i: _LOCATIONS.index(i.location)), body

    def parameter(
        self, src: int, path: JsonPath, param: dict[str, Any], location: str, name: str
    ) -> Input:
        required = param.get("required") is True
        if location == "path" and not required:
            self.warn(src, path, "a path parameter must be 'required: true'; treated as required")
            required = True
        content_type: str | None = None
        style = param.get("style") if isinstance(param.get("style"), str) else None
        explode = param.get("explode") if isinstance(param.get("explode"), bool) else None
        if self.version == "2.0":
            schema, deps, styled = swagger2.parameter_schema(self, src, path, param, location)
            if styled is not None:
                style, explode = styled
        elif "content" in param:
            content = self.mapping(src, (*path, "content"), param["content"], "'content'")
            if len(content) != 1:
                self.warn(src, (*path, "content"), "a parameter's content needs one media type")
            content_type, media_node = next(iter(content.items()), ("application/json", {}))
            media_node = media_node if isinstance(media_node, dict) else {}
            schema, deps = self.converter.convert(
                src, (*path, "content", content_type, "schema"), media_node.get("schema", {})
            )
        elif "schema" in param:
            schema, deps = self.converter.convert(src, (*path, "schema"), param["schema"])
        else:
            self.warn(src, path, "a parameter needs 'schema' or 'content'; imported as a string")
            schema, deps = {"type": "string"}, set()
        about = param.get("description"), param.get("deprecated"), examples_of(param)
        schema = annotate(schema, *about)
        extra = {"style": style, "explode": explode, "content_type": content_type}
        extra["read_only"] = self.converter.plans["readOnly"].plan(schema) or None  # (not sent)
        # a value the document marks secret: kept out of URLs shown (spans, errors) and answers
        secret = any(node.get("format") == "password" for node in self.converter.applying(schema))
        extra["secret"] = secret or self.converter.marked_read_only(schema, "writeOnly") or None
        # OpenAPI 3.2 extends allowReserved to paths; Azure says x-ms-skip-url-encoding
        if True in (param.get("allowReserved"), param.get("x-ms-skip-url-encoding")):
            extra["allow_reserved"] = location in ("query", "path") or None
        return Input(location, name, schema, required, extra, deps)

    def request_body(
        self, cand: Candidate, body_params: list[Located], form_params: list[Located]
    ) -> BodyInfo | None:
        if self.version == "2.0":
            return described(swagger2.request_body(self, cand, body_params, form_params))
        if "requestBody" not in cand.node:
            return None
        where = (*cand.path, "requestBody")
        followed = self.follow_mapping(cand.src, where, cand.node["requestBody"], "a request body")
        if followed is None:
            return None
        src, path, node = followed
        content = self.mapping(src, (*path, "content"), node.get("content"), "'content'")
        if not content:
            self.error(src, path, "a request body needs 'content'")
            return None
        media = choose_media(content)
        media_node = content[media] if isinstance(content[media], dict) else {}
        mpath = (*path, "content", media)
        info = self.body_info(src, mpath, media, node, media_node, examples_of(media_node))
        if info.content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
            self.encoding(src, (*mpath, "encoding"), media_node.get("encoding"), info)
        return described(info)

    def encoding(self, src: int, path: JsonPath, encoding: Any, info: BodyInfo) -> None:
        """A form or multipart body's ``encoding`` into ``info.parts``."""
        if encoding is None:
            return
        if not isinstance(encoding, dict):
            self.warn(src, path, "'encoding' must be a mapping; the defaults apply")
            return
        for prop, how in encoding.items():
            if not isinstance(how, dict):
                self.warn(src, (*path, prop), "an encoding must be a mapping; the defaults apply")
                continue
            given = {k: how[k] for k in _ENCODING_KEYS if isinstance(how.get(k), _ENCODING_KEYS[k])}
            for key in set(_ENCODING_KEYS).intersection(how).difference(given):
                self.warn(src, (*path, prop, key), f"{key!r} is malformed; the default applies")
            where = (*path, prop, "headers")
            if "headers" in how and info.content_type == "multipart/form-data":
                info.headers += self.part_headers(src, where, prop, how["headers"])
            elif "headers" in how:
                self.warn(src, where, "part headers apply to multipart only")
            if given:
                info.parts[prop] = {**info.parts.get(prop, {}), **given}

    def part_headers(self, src: int, path: JsonPath, prop: str, headers: Any) -> list[Input]:
        """The optional header arguments of a multipart property's ``encoding.headers``."""
        found: list[Input] = []
        for name, raw in self.mapping(src, path, headers, "'headers'").items():
            if not isinstance(name, str) or not name:
                continue
            if name.lower() in PART_RESERVED:
                self.warn(src, (*path, name), f"part header {name!r} is ignored: mcpgen sets it")
                continue
            followed = self.sources.follow(src, (*path, name), raw)
            if followed is None:
                continue
            hsrc, hpath, node = followed
            if not isinstance(node, dict):
                self.warn(hsrc, hpath, "a header must be a mapping; ignored")
                continue
            schema, deps = self.converter.convert(hsrc, (*hpath, "schema"), node.get("schema", {}))
            text = text_of(node.get("description"))
            about = f"The {name} header of the multipart part {prop!r}. {text}".rstrip()
            schema = annotate(schema, about, node.get("deprecated"), examples_of(node))
            found.append(Input("header", name, schema, False, {"part": prop}, deps))
        return found

    def body_info(
        self,
        src: int,
        path: JsonPath,
        media: str,
        node: dict[str, Any],
        holder: dict[str, Any],
        examples: list[Any],
    ) -> BodyInfo:
        """The body ``node`` (a request body, a 2.0 body parameter) whose schema is
        ``holder``'s (a media type object, that parameter)."""
        required = node.get("required") is True
        schema, deps = self.converter.convert(src, (*path, "schema"), holder.get("schema", {}))
        kind, given = category(media), schema  # (an XML body's: where its writeOnly ones are)
        if is_xml(media):
            self.warn(src, path, f"{media} bodies are passed as raw text, not built from data")
        plain = isinstance(schema, dict) and schema.get("type") == "string"
        if kind in ("application/octet-stream", "text/plain") and not plain:
            if schema not in ({}, True) and not is_xml(media):
                self.warn(src, path, f"the schema of a {media} body is not used: it is a string")
            schema, deps = {"type": "string"}, set()
        if kind == "application/octet-stream":
            schema = {**schema, "contentEncoding": "base64"}
        target, name = self.converter.resolve(schema)
        parts = self.files(target) if kind == "multipart/form-data" else {}
        spreadable = (
            kind in ("application/json", "application/x-www-form-urlencoded", "multipart/form-data")
            and isinstance(target, dict)
            and target.get("type", "object") == "object"
            and target.get("properties")
            and target.get("additionalProperties", False) is False
            and not any(k in target for k in _NOT_SPREAD)
        )
        # what is never sent, at any depth (a spread body offers no argument for its own)
        read_only = self.converter.plans["readOnly"].plan(schema, own=not spreadable)
        writes = self.converter.plans["writeOnly"].plan(given if is_xml(media) else schema)
        plans = (read_only, writes)  # BodyInfo's
        if not spreadable:
            whole = annotate(schema, description=node.get("description"), examples=examples)
            item = Input("body", "body", whole, required)
            return BodyInfo([item], deps, False, kind, media, required, parts, [], [], *plans)
        if name is not None:
            deps = set(self.converter.deps.get(name, ()))
        needed = set(target.get("required", []))
        inputs = []
        for prop, prop_schema in target["properties"].items():
            if self.converter.marked_read_only(prop_schema):
                continue  # the server sets it; a request must not send it
            inputs.append(Input("body", prop, prop_schema, required and prop in needed))
        # an optional body's required properties: each one given asks for the others
        together = [] if required else [i.wire for i in inputs if i.wire in needed]
        return BodyInfo(inputs, deps, True, kind, media, required, parts, together, [], *plans)

    def files(self, target: Json) -> dict[str, dict[str, Json]]:
        """The multipart properties that are files: base64 arguments sent as bytes."""
        properties = target.get("properties") if isinstance(target, dict) else None
        found: dict[str, dict[str, Json]] = {}
        for prop, prop_schema in (properties or {}).items():
            resolved, _ = self.converter.resolve(prop_schema)
            if isinstance(resolved, dict) and resolved.get("type") == "array":
                resolved, _ = self.converter.resolve(resolved.get("items"))
            if isinstance(resolved, dict) and resolved.get("contentEncoding") == "base64":
                found[prop] = {"file": True}
        return found

    def responses(self, cand: Candidate) -> Answers:
        """What the responses make of the tool (``Answers``); a plan ``{"gone": true}``: the
        whole answer is ``writeOnly``, and no output schema is advertised."""
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
        found_all: list[tuple[str, int, JsonPath, str | None, Json]] = []
        empty: list[str] = []  # success codes that answer no content
        for code in codes:
            found = self.response_schema(cand, code, responses[code])
            if found is None:
                continue
            src, path, media, schema_node = found
            empty += [code] if media is None else []
            if found_all and schema_node != found_all[0][4] and media and schema_node is not None:
                differs = f"response {code} differs from response {found_all[0][0]}; "
                self.warn(src, path, f"{differs}the output schema describes {found_all[0][0]} only")
            found_all.append((code, *found))
        others = [c for c in responses if isinstance(c, str) and c not in codes]  # errors
        found_all += [(c, *f) for c in others if (f := self.response_schema(cand, c, responses[c]))]
        errors = [f[3] for f in found_all if f[0] not in codes and f[3]]
        write_only: dict[str, Json] = {}  # each JSON or XML answer's plan, by status
        converted: dict[Any, tuple[Json, set[str]]] = {}  # each schema converted here, by place
        whole: list[str] = []  # success codes whose whole answer is writeOnly
        for code, src_n, path_n, media_n, node in found_all:
            if node is None or category(media_n or "") not in ("application/json", "text/plain"):
                continue  # (text: XML, whose elements are the properties)
            plan = self.answer_plans.get((src_n, path_n))  # (an error schema shared: once)
            with kept_as(self.converter, repr((src_n, path_n)), plan is None):
                if plan is None:
                    converted[src_n, path_n] = self.converter.convert(src_n, path_n, node)
                    schema_n = converted[src_n, path_n][0]
                    gone = self.converter.marked_read_only(schema_n, "writeOnly")
                    plan = self.answer_plans[src_n, path_n] = (
                        {"gone": True} if gone else self.converter.plans["writeOnly"].plan(schema_n)
                    )
            whole += [code] if "gone" in plan and code in codes else []
            write_only[code if code == "default" else code.upper()] = plan  # (2xx: 2XX)
        write_only = write_only if any(write_only.values()) else {}
        answered = bool(found_all) and found_all[0][0] in codes  # (a success documented)
        _, src, path, media, schema_node = found_all[0] if answered else ("", 0, (), None, None)
        types = list(dict.fromkeys(t for t in errors if t != media))  # (after the success's)
        answers = Answers(None, media, False, write_only, types)
        if media is None or schema_node is None or category(media) != "application/json":
            return answers
        schema, deps = converted.get((src, path)) or self.converter.convert(src, path, schema_node)
        if empty or whole:  # a client refuses a result without structured content
            code, what = (empty[0], "has no content") if empty else (whole[0], "is writeOnly")
            why = f"response {code} {what}: the tool advertises no output schema"
            self.warn(cand.src, (*cand.path, "responses", code), why)
            return answers
        output: dict[str, Json]
        if wrapped := not self.converter.is_object(schema):
            output = {"type": "object", "properties": {"result": schema}, "required": ["result"]}
        else:  # the object itself (a reference followed): its definitions are the target's
            target, name = self.converter.resolve(schema)
            output = {**target, "type": target.get("type", "object")}
            if name is not None:
                deps = set(self.converter.deps.get(name, ()))
        self.converter.add_defs(output, deps)
        if self.answer_plans[src, path]:  # an answer leaves them out (``answers.result``)
            output = leave_out(self.converter, output, self.answer_plans[src, path])
        answers.output, answers.wrapped = output, wrapped
        return answers

    def response_schema(
        self, cand: Candidate, code: str, raw: Any
    ) -> tuple[int, JsonPath, str | None, Json] | None:
        """(file, path of the schema, media type, schema node) of one response."""
        followed = self.follow_mapping(cand.src, (*cand.path, "responses", code), raw, "a response")
        if followed is None:
            return None
        src, path, node = followed
        if self.version == "2.0":
            return swagger2.response_schema(self, cand, src, path, node)
        content = self.mapping(src, (*path, "content"), node.get("content"), "'content'")
        if not content:
            return src, path, None, None
        media = choose_media(content)
        media_node = content[media] if isinstance(content[media], dict) else {}
        if "schema" not in media_node:
            return src, (*path, "content", media), media, None
        return src, (*path, "content", media, "schema"), media, media_node["schema"]


def described(info: BodyInfo | None) -> BodyInfo | None:
    """``info`` with each file input's description saying it takes base64 or a URI."""
    if info is None:
        return None
    whole_file = info.content_type == "application/octet-stream" and not info.spread
    for item in info.inputs:
        if whole_file or (info.spread and (info.parts.get(item.wire) or {}).get("file")):
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
