"""The fidelity suite's parts: arguments for a tool made from its input schema, and a check
of what a local upstream received against the OpenAPI document with ``openapi-core`` (an
independent validator: it parses the query, headers, cookies and form, multipart and JSON
bodies the way the document describes them).

``calls(document)`` imports the document, makes one schema-valid argument object per tool
(every property filled, two items per array, files as base64 of known bytes), sends each
through the runtime's ``Upstream`` to a recorder on 127.0.0.1 and returns what each call
became: accepted, or the validator's errors.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import anyio
import yaml
from fidelity_declared import exploded, part_headers, query_items
from jsonschema import Draft202012Validator, FormatChecker
from openapi_core import Config, OpenAPI
from openapi_core.testing import MockRequest
from wirekit import Seen, multipart, part_name, recorder, upstream

from mcpgen.check.schemas import resolve_pointer
from mcpgen.load import MAX_DOCUMENT_BYTES, load_file
from mcpgen.model.examples import valid_example
from mcpgen.openapi import import_openapi
from mcpgen.openapi.result import operation_data

Json = Any
CONVERTED = Path(__file__).resolve().parent / "fixtures" / "openapi-fidelity" / "converted"
FILE_BYTES = b"%PDF-1.4\n\x00\x01\xfe\xff fidelity"
_FORMATS = {
    "date": "2024-01-31",
    "date-time": "2024-01-31T12:00:00Z",
    "email": "user@example.com",
    "uri": "https://example.com/x",
    "url": "https://example.com/x",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
    "ipv4": "192.0.2.1",
    "byte": base64.b64encode(b"bytes").decode(),
}
_MISSING = object()
FORMATS = FormatChecker()


@dataclass
class Outcome:
    tool: str
    arguments: Json
    errors: list[str]


def fill(schema: Json, root: Json, depth: int = 0) -> Json:
    """A value for ``schema`` using every property it declares (or ``_MISSING``)."""
    if depth > 8 or not isinstance(schema, dict):
        return "x" if schema is True or schema == {} else _MISSING
    if isinstance(schema.get("$ref"), str):
        found, target = resolve_pointer(root, schema["$ref"])
        return fill(target, root, depth + 1) if found else _MISSING
    for key in ("const", "default"):
        if key in schema:
            return schema[key]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for example in schema.get("examples") or []:  # a document's examples can be wrong
        if _accepts(schema, root, example):
            return example
    for key in ("oneOf", "anyOf"):
        for option in schema.get(key) or []:
            value = fill(option, root, depth + 1)
            if value is not _MISSING and _accepts(schema, root, value):
                return value
    if isinstance(schema.get("allOf"), list):
        merged: dict[str, Json] = {}
        for part in schema["allOf"]:
            value = fill(part, root, depth + 1)
            if isinstance(value, dict):
                merged.update(value)
        return merged
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or (kind is None and "properties" in schema):
        result = {}
        for name, prop in (schema.get("properties") or {}).items():
            value = fill(prop, root, depth + 1)
            if value is not _MISSING and not (isinstance(prop, dict) and prop.get("readOnly")):
                result[name] = value
        return result
    if kind == "array":
        count = 1 if schema.get("uniqueItems") else 2
        count = max(int(schema.get("minItems", 0)), min(count, int(schema.get("maxItems", 2))))
        items = [fill(schema.get("items", {}), root, depth + 1) for _ in range(count)]
        return _MISSING if _MISSING in items else items
    if kind == "string":
        if schema.get("contentEncoding") == "base64":
            return base64.b64encode(FILE_BYTES).decode()
        text = _FORMATS.get(schema.get("format", ""), "abc")
        pattern = schema.get("pattern")
        if isinstance(pattern, str) and not re.search(pattern, text):
            text = next((c for c in ("1", "a", "A", "abc-1") if re.search(pattern, c)), text)
        text = text + "x" * max(0, int(schema.get("minLength", 0)) - len(text))
        return text[: int(schema.get("maxLength", len(text)))]
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 1))
        value = low + 1 if "exclusiveMinimum" in schema else low
        return int(value) if kind == "integer" else float(value) + 0.5
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return _MISSING


def _accepts(schema: Json, root: Json, value: Json) -> bool:
    """``schema`` (a part of ``root``, whose ``$defs`` it may use) accepts ``value``."""
    whole = {**schema, "$defs": root.get("$defs", {})}
    return bool(Draft202012Validator(whole, format_checker=FORMATS).is_valid(value))


def arguments(schema: Json) -> Json:
    """Arguments the tool's input schema accepts: filled out if they validate, else the
    build's own minimal example."""
    value = fill(schema, schema)
    if value is not _MISSING and _accepts(schema, schema, value):
        return value
    return valid_example(schema)


def base_path(server: Json) -> tuple[str, str]:
    """(origin, path) of a server object's URL, its variables at their defaults (a
    scheme-relative ``//host`` as https, a relative URL on ``http://localhost``)."""
    url = str(server.get("url") or "/")
    for name, variable in (server.get("variables") or {}).items():
        if isinstance(variable, dict):
            url = url.replace("{" + name + "}", str(variable.get("default", "x")))
    url = re.sub(r"\{[^}]*\}", "https", url, count=1) if url.startswith("{") else url
    url = "https:" + url if url.startswith("//") else url
    parts = urlsplit(re.sub(r"\{[^}]*\}", "x", url))
    if not parts.scheme:  # a relative server URL
        return "http://localhost", parts.path.rstrip("/")
    return f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")


def check(
    api: OpenAPI, origin: str, seen: Seen, sent: Json = None, explode: Json = None
) -> list[str]:
    """What openapi-core finds wrong with the request the upstream received, and where
    what it read differs from ``sent``, the body the caller meant (files as their bytes,
    one field per array item, or one joined field where ``explode``, what the document
    says of each property (``fidelity_declared``), is false)."""
    target = urlsplit(seen.target)
    cookies = SimpleCookie(seen.headers.get("cookie", ""))
    request = MockRequest(
        origin,
        seen.method,
        target.path,
        args=[  # type: ignore[arg-type]
            (k, v.replace(" ", "%20") if k in getattr(api, "space_delimited", ()) else v)
            for k, v in parse_qsl(target.query, keep_blank_values=True)
        ],
        headers=seen.headers,
        cookies={k: v.value for k, v in cookies.items()},
        data=seen.body,
        content_type=seen.headers.get("content-type", ""),
    )
    form = "multipart/form-data" in seen.headers.get("content-type", "")
    errors = [
        _message(e) for e in api.iter_request_errors(request) if not (form and _only_text_parts(e))
    ]
    if errors or not isinstance(sent, dict):
        return errors
    read = _fields(seen)
    if read is None:  # a JSON body: openapi-core checked it whole
        return []
    return [
        f"body property {name!r}: sent {value!r}, received {read.get(name)!r}"
        for name, value in sent.items()
        if not isinstance(value, dict)
        and not _same(value, read.get(name, []), (explode or {}).get(name, explode and True))
    ]


def _fields(seen: Seen) -> dict[str, list[bytes]] | None:
    """The fields of a form or multipart body by name (None for another body)."""
    media = seen.headers.get("content-type", "")
    found: dict[str, list[bytes]] = {}
    if media.startswith("multipart/"):
        for headers, content in multipart(seen):
            found.setdefault(part_name(headers), []).append(content)
    elif media.startswith("application/x-www-form-urlencoded"):
        for key, value in parse_qsl(seen.body.decode(), keep_blank_values=True):
            found.setdefault(key, []).append(value.encode())
    else:
        return None
    return found


def _same(sent: Json, read: list[bytes], explode: bool | None = None) -> bool:
    """A file argument arrived as its bytes, an array as one field per item (one field
    joined when ``explode`` is false)."""
    if sent == base64.b64encode(FILE_BYTES).decode():
        return read == [FILE_BYTES]
    if isinstance(sent, list) and sent and sent[0] == base64.b64encode(FILE_BYTES).decode():
        return read == [FILE_BYTES] * len(sent)
    if isinstance(sent, list):  # one field per item, or one joined (explode: false)
        items = [json.dumps(v) if not isinstance(v, str) else v for v in sent]
        joined = [sep.join(items).lower().encode() for sep in (",", "|", " ")]
        one = len(read) == 1 and read[0] in joined
        return one if explode is False else len(read) == len(sent) or (one and explode is None)
    return len(read) == 1


def _only_text_parts(error: BaseException) -> bool:
    """openapi-core reads every multipart part as a string: a part ``1`` for an integer
    property is a type error to it, though OpenAPI sends primitives as text/plain parts.
    True when those are the only errors (each string is the number or boolean wanted)."""
    found = list(getattr(error.__cause__, "schema_errors", None) or [])
    return bool(found) and all(
        e.validator == "type"
        and isinstance(e.instance, str)
        and _parses(e.instance, e.validator_value)
        for e in found
    )


def _parses(text: str, kinds: Any) -> bool:
    for kind in [kinds] if isinstance(kinds, str) else kinds:
        try:
            if kind == "integer" and str(int(text)) == text:
                return True
            if kind == "number" and float(text) == float(text):
                return True
        except ValueError:
            continue
        if kind == "boolean" and text in ("true", "false"):
            return True
    return False


def _message(error: BaseException) -> str:
    causes = [error, *(getattr(error, "schema_errors", None) or [])]
    inner = error.__cause__
    if inner is not None:
        causes.append(inner)
        causes += list(getattr(inner, "schema_errors", None) or [])
    return " <- ".join(f"{type(e).__name__}: {e}"[:300] for e in causes)


def read_document(path: Path) -> Json:
    """A JSON or YAML document as data."""
    text = path.read_text(encoding="utf-8")
    return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)


def validator(path: Path) -> tuple[OpenAPI, str, str]:
    """openapi-core for the document at ``path``, the origin and the base path of its first
    server (a recorder stands in for that server at the same base path). A Swagger 2.0
    document is checked against its OpenAPI 3 conversion (:func:`converted`)."""
    raw = read_document(path)
    if "swagger" in raw:
        raw = converted(path, raw)
    origin, prefix = base_path((raw.get("servers") or [{"url": "/"}])[0])
    raw = ignoring(raw, origin + prefix)
    text = json.dumps(raw)
    # openapi-core reads application/json only: tell it the document's other JSON types
    jsons = set(re.findall(r'"(application/[\w.+-]+\+json)"', text))
    api = OpenAPI.from_dict(
        raw, config=Config(extra_media_type_deserializers=dict.fromkeys(jsons, json.loads))
    )
    # openapi-core splits a spaceDelimited value at a literal "%20", after decoding it
    api.space_delimited = {  # type: ignore[attr-defined]
        param.get("name")
        for item in (raw.get("paths") or {}).values()
        for node in [item, *item.values()]
        if isinstance(node, dict)
        for param in node.get("parameters") or []
        if isinstance(param, dict) and param.get("in") == "query"
        if param.get("style") == "spaceDelimited"
    }
    return api, origin, prefix


def ignoring(raw: Json, server: str) -> Json:
    """``raw`` as openapi-core should read it: its server the URL the recorder stands in
    for (openapi-core matches no scheme-relative ``//host`` URL), and without the header
    parameters OpenAPI says to ignore (``Accept``, ``Content-Type``, ``Authorization``),
    which openapi-core requires all the same."""
    paths = {
        url: (
            {key: _without(raw, node) for key, node in _without(raw, item).items()}
            if isinstance(item, dict)
            else item
        )
        for url, item in (raw.get("paths") or {}).items()
    }
    return {**raw, "servers": [{"url": server}], "paths": paths}


def _without(raw: Json, node: Json) -> Json:
    """A path item or operation without the header parameters OpenAPI ignores."""
    if not (isinstance(node, dict) and isinstance(node.get("parameters"), list)):
        return node
    ignored = ("accept", "content-type", "authorization")
    kept = [p for p in node["parameters"] if not _named(_follow(raw, p), ignored)]
    return {**node, "parameters": kept}


def _follow(raw: Json, node: Json) -> Json:
    if isinstance(node, dict) and isinstance(node.get("$ref"), str):
        found, target = resolve_pointer(raw, node["$ref"])
        return target if found else node
    return node


def _named(param: Json, names: tuple[str, ...]) -> bool:
    return (
        isinstance(param, dict)
        and param.get("in") == "header"
        and str(param.get("name", "")).lower() in names
    )


def converted(path: Path, original: Json) -> Json:
    """The OpenAPI 3.0 form of the Swagger 2.0 document at ``path``, made by an independent
    converter, ``swagger2openapi`` 7.0.8 (npm): ``fixtures/openapi-fidelity/converted/``
    holds its output for the suite's documents (``swagger2openapi --patch -o OUT IN``);
    for another document set ``SWAGGER2OPENAPI`` to the command. One gap of the converter
    is filled here: it writes no ``encoding`` for a ``formData`` array that is not
    ``multi`` (``csv`` is the default), so its validator would read ``a,b`` as one item."""
    kept = CONVERTED / path.name
    if kept.is_file():
        doc = json.loads(kept.read_text(encoding="utf-8"))
    else:
        command = os.environ.get("SWAGGER2OPENAPI")
        if not command:
            raise LookupError(f"no OpenAPI 3 form of {path.name}: set SWAGGER2OPENAPI")
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "out.json"
            subprocess.run([*command.split(), "--patch", "-o", str(out), str(path)], check=True)
            doc = json.loads(out.read_text(encoding="utf-8"))
    for url, item in (original.get("paths") or {}).items():
        for method, operation in item.items():
            form = [
                p
                for p in (operation.get("parameters") if isinstance(operation, dict) else None)
                or []
                if p.get("in") == "formData" and p.get("type") == "array"
            ]
            body = doc["paths"][url][method].get("requestBody", {}).get("content", {})
            for media in [body.get("application/x-www-form-urlencoded") or {}]:
                for param in form:
                    style = param.get("collectionFormat", "csv")
                    if style != "multi":
                        how = {"ssv": "spaceDelimited", "pipes": "pipeDelimited"}.get(style, "form")
                        encoding = media.setdefault("encoding", {})
                        encoding[param["name"]] = {"style": how, "explode": False}
    return doc


def calls(path: Path) -> list[Outcome]:
    """One call per tool of the document at ``path``, each checked by openapi-core."""
    doc = load_file(path, max_bytes=MAX_DOCUMENT_BYTES)
    imported = import_openapi(doc, {})
    api, origin, prefix = validator(path)
    declared = exploded(read_document(path))
    schemes = imported.security_schemes
    # an OAuth2 authorization-code or OpenID token comes from the caller, not from here
    from_caller = {n for n, s in schemes.items() if s.get("type") in ("oauth2", "openIdConnect")}
    outcomes: list[Outcome] = []

    async def run() -> None:
        with recorder() as rec:
            api_client = upstream(rec.url + prefix, schemes)
            for tool, operation in zip(imported.tools, imported.operations, strict=True):
                given = arguments(tool["input"])
                if given is None:
                    outcomes.append(Outcome(tool["name"], None, ["no valid arguments found"]))
                    continue
                before = len(rec.seen)
                data = operation_data(operation)
                data["security"] = [  # those this harness can meet (security is not judged)
                    alternative
                    for alternative in data["security"]
                    if set(alternative) <= set(schemes) - from_caller
                ]
                try:
                    result = await api_client.call(data, given)
                except Exception as exc:  # what a server would answer as "internal error"
                    outcomes.append(Outcome(tool["name"], given, [f"raised {exc!r}"]))
                    continue
                if len(rec.seen) != before + 1 or result.is_error:
                    outcomes.append(Outcome(tool["name"], given, [f"not sent: {result}"]))
                    continue
                body = data.get("body") or {}
                sent = {
                    wire: given[arg]
                    for wire, arg in zip(
                        body.get("properties", []), body.get("arguments", []), strict=True
                    )
                    if arg in given
                }
                key = (data["path"], data["method"])
                said = {k[2]: v for k, v in declared.items() if k[:2] == key}
                form = {n[5:]: v for n, v in said.items() if n.startswith("body:")}
                errors = check(api, origin, rec.seen[-1], sent or None, form)
                errors += part_headers(data["params"], given, rec.seen[-1])
                errors += query_items(data["params"], given, rec.seen[-1], said)
                if data["security"] != operation.security:
                    errors = [e for e in errors if not e.startswith("SecurityNotFound")]
                outcomes.append(Outcome(tool["name"], given, errors))

    anyio.run(run)
    return outcomes
