"""Stage two of validation: what the schema cannot say (names, references, files, templates).

Runs on the whole merged document together with the structural check: entries the
structural check found malformed are left out here (their problems are already reported),
every other entry is checked, so one run reports every problem.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import jinja2
import jinja2.meta

from mcpgen import identifiers as names
from mcpgen.check import schemas, uritemplate
from mcpgen.check.credentials import check_credentials
from mcpgen.check.structure import did_you_mean, dotted
from mcpgen.load import Document, JsonPath
from mcpgen.problems import Level, Problem, Problems

MAX_SCHEMA_DEPTH = 64  # keywords and property names both count: properties.x is two levels
_SCHEMA_TYPES = ("array", "boolean", "integer", "null", "number", "object", "string")
TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}
DEF_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")  # what the manifest schema allows
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an RFC 9110 token
_JINJA = jinja2.Environment(autoescape=False)


SECTIONS = ("tools", "resources", "prompts", "completions")
MAPPINGS = ("server", "$defs", "auth", "transports", "capabilities")


def checkable(data: Any, broken: set[JsonPath]) -> dict[str, Any]:
    """The parts of ``data`` the semantic checks can read: malformed sections become empty
    and malformed entries None (the structural check reported them)."""
    view: dict[str, Any] = dict(data) if isinstance(data, dict) else {}
    for key in MAPPINGS:
        if not isinstance(view.get(key), dict) or (key,) in broken:
            view[key] = {}
    for section in SECTIONS:
        items = view.get(section, [])
        if not isinstance(items, list):
            view[section] = []
            continue
        view[section] = [
            item if isinstance(item, dict) and (section, i) not in broken else None
            for i, item in enumerate(items)
        ]
    return view


def broken_entries(paths: Iterable[JsonPath]) -> set[JsonPath]:
    """The entries (``("tools", 3)``) and sections the structural problems are inside."""
    found: set[JsonPath] = set()
    for path in paths:
        if path and path[0] in SECTIONS and len(path) > 1:
            found.add(path[:2])
        elif tuple(path[:2]) == ("openapi", "credentials"):  # an entry, or the whole section
            found.add(tuple(path[:3]))
        elif path and ((path[0] in MAPPINGS and len(path) == 1) or path[0] == "server"):
            found.add(path[:1])
    return found


def entries(items: list[Any]) -> Iterable[tuple[int, dict[str, Any]]]:
    return ((i, item) for i, item in enumerate(items) if isinstance(item, dict))


class Checker:
    def __init__(self, doc: Document, broken: set[JsonPath] | None = None) -> None:
        self.doc = doc
        self.broken = broken or set()
        self.data: dict[str, Any] = checkable(doc.data, self.broken)
        # names are checked on every entry that has one, malformed or not
        self.named: dict[str, Any] = checkable(doc.data, set())
        self.problems = Problems()

    def error(self, path: JsonPath, message: str, key: bool = False) -> None:
        self.problems.add(
            Problem(Level.ERROR, self.doc.locate(path, key), self.doc.field(path), message)
        )

    def warn(self, path: JsonPath, message: str) -> None:
        self.problems.add(
            Problem(Level.WARNING, self.doc.locate(path), self.doc.field(path), message)
        )

    def run(self) -> Problems:
        self.check_server()
        self.check_defs()
        self.check_tools()
        templates = self.check_resources()
        prompts = self.check_prompts()
        self.check_completions(prompts, templates)
        self.check_auth()
        check_credentials(self, self.broken)
        self.check_python_names()
        return self.problems

    # -- server -----------------------------------------------------------------------
    def check_server(self) -> None:
        version = self.data["server"].get("version")
        if isinstance(version, str) and names.package_version(version) != version:
            from packaging.version import InvalidVersion, Version

            try:
                Version(version)
            except InvalidVersion:
                self.warn(
                    ("server", "version"),
                    f"{version!r} is not a PEP 440 version: the package is versioned "
                    f"{names.package_version(version)!r} (clients still see {version!r})",
                )
        package = self.data["server"].get("package")
        if package is not None and package in names.RESERVED:
            self.error(("server", "package"), f"{package!r} is a Python keyword or builtin")

    # -- schemas ----------------------------------------------------------------------
    def check_defs(self) -> None:
        shared = self.data.get("$defs", {})
        for name in sorted(shared):
            if DEF_NAME.match(name) and not names.kept_class_name(name):  # else: structure
                self.error(("$defs", name), _class_name_problem(name), key=True)
            self.check_schema(("$defs", name), shared[name], None)

    def check_schema(self, where: JsonPath, schema: Any, own_root: Any) -> None:
        deep = _deeper_than(schema, MAX_SCHEMA_DEPTH)
        if deep is not None:  # later stages (and the metaschema check) recurse per level
            self.problems.add(
                Problem(
                    Level.ERROR,
                    self.doc.locate((*where, *deep)),
                    dotted(where),
                    f"JSON Schema nested deeper than {MAX_SCHEMA_DEPTH} levels",
                )
            )
            return
        # Schemas imported from an OpenAPI document were checked keyword by keyword as the
        # importer converted them (``openapi.schema``); the metaschema pass is for the ones
        # written in the manifest (it costs ~10 ms a schema: 30 s for GitHub's 2,600).
        imported = self.doc.overlay(where) is not None
        try:
            violations = [] if imported else list(schemas.metaschema_errors(schema))
        except RecursionError:  # pragma: no cover - the depth limit comes first
            self.error(where, "JSON Schema nested too deeply to check")
            return
        for path, message in violations:
            if path and path[-1] == "type":
                found, value = schemas.resolve_pointer(schema, _pointer(path))
                if found and not _valid_types(value):
                    message = (
                        f"{json.dumps(value, ensure_ascii=False)} is not a JSON Schema type "
                        f"(use one of: {', '.join(_SCHEMA_TYPES)})"
                    )
            self.error((*where, *path), f"not a valid JSON Schema (2020-12): {message}")
        for path, message in schemas.bad_patterns(schema):
            self.error((*where, *path), message)
        if not imported and not violations:
            root = schemas.bundle(own_root, self.data.get("$defs", {})) if own_root else None
            for path, message in schemas.bad_defaults(
                schema, root or {"$defs": self.data["$defs"]}
            ):
                self.error((*where, *path), message)
        for path, word in schemas.unknown_keywords(schema):
            self.warn(
                (*where, *path),
                f"{word!r} is not a JSON Schema keyword{did_you_mean(word, schemas.KEYWORDS)}; "
                "it is ignored",
            )
        for path, ref in schemas.refs(schema):
            if not ref.startswith("#"):
                self.error((*where, *path), f"only local references are supported, not {ref!r}")
                continue
            found = own_root is not None and schemas.resolve_pointer(own_root, ref)[0]
            if not found and ref.startswith(schemas.DEFS_PREFIX):
                found = schemas.resolve_pointer(self.data, ref)[0]
            if not found:
                choices = [schemas.DEFS_PREFIX + n for n in self.data.get("$defs", {})]
                self.error(
                    (*where, *path),
                    f"reference {ref!r} does not resolve" + did_you_mean(ref, choices),
                )

    # -- tools ------------------------------------------------------------------------
    def check_tools(self) -> None:
        tools = self.data.get("tools", [])
        self.unique(self.named["tools"], "name", ("tools",), "tool name")
        self.unique_idents(self.named["tools"], ("tools",), "tool", names.snake)
        # model class -> (where it came from, the Python name of the tool that made it)
        model_names: dict[str, tuple[JsonPath, str | None]] = {
            name: (("$defs", name), None) for name in self.data.get("$defs", {})
        }
        for index, tool in entries(tools):
            where: JsonPath = ("tools", index)
            name = tool["name"]
            if not TOOL_NAME.match(name):
                self.error((*where, "name"), _tool_name_problem(name))
            if "description" not in tool:
                self.warn(where, f"tool {name!r} has no description; models choose tools by it")
            for part in ("input", "output"):
                if part in tool:
                    self.check_schema((*where, part), tool[part], tool[part])
            for part in ("input", "output"):
                given = tool.get(part, {"type": "object"})
                schema = self.root_schema(given)
                if not isinstance(schema, dict) or schema.get("type") != "object":
                    at: JsonPath = (*where, part)
                    message = f"a tool's {part} schema must have 'type: object'"
                    if schema is given and isinstance(schema, dict) and "type" in schema:
                        at = (*at, "type")
                        message += f", not {json.dumps(schema['type'], ensure_ascii=False)}"
                    self.error(at, message)
            base, ident = names.pascal(name), names.snake(name)
            for suffix, present in (("Input", True), ("Output", "output" in tool)):
                model = base + suffix
                if not present:
                    continue
                # a tool with the same Python name was reported above (duplicate or collision)
                if model in model_names and model_names[model][1] != ident:
                    self.error(
                        (*where, "name"),
                        f"model class {model!r} for tool {name!r} collides with "
                        f"{dotted(model_names[model][0])}",
                    )
                model_names.setdefault(model, ((*where, "name"), ident))
            annotations = tool.get("annotations", {})
            if annotations.get("readOnlyHint") and annotations.get("destructiveHint"):
                self.warn((*where, "annotations"), "a read-only tool cannot also be destructive")

    def root_schema(self, schema: Any) -> Any:
        """Follow a schema that is only a reference to a shared definition."""
        if isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
            found, target = schemas.resolve_pointer(self.data, schema["$ref"])
            if found and not (set(schema) - {"$ref", "description", "title"}):
                return target
        return schema

    # -- resources --------------------------------------------------------------------
    def check_resources(self) -> dict[str, list[str]]:
        resources = self.data.get("resources", [])
        self.unique(self.named["resources"], "name", ("resources",), "resource name")
        self.unique_idents(self.named["resources"], ("resources",), "resource", names.snake)
        self.unique(resources, "uri", ("resources",), "resource URI")
        self.unique(resources, "uriTemplate", ("resources",), "URI template")
        templates: dict[str, list[str]] = {}
        for index, resource in entries(resources):
            where: JsonPath = ("resources", index)
            static = [k for k in ("text", "blob", "file") if k in resource]
            if len(static) > 1:
                self.error((*where, static[1]), "give at most one of 'text', 'blob' or 'file'")
            if "uriTemplate" in resource:
                variables, problem = uritemplate.parse(resource["uriTemplate"])
                if problem:
                    self.error((*where, "uriTemplate"), problem)
                else:
                    templates[resource["uriTemplate"]] = variables
                    templates.setdefault(resource["name"], variables)
                if static:
                    self.error(
                        (*where, static[0]),
                        "a URI template's content comes from its handler, not static content",
                    )
            else:
                problem = uritemplate.check_uri(resource["uri"])
                if problem:
                    self.error((*where, "uri"), problem)
            if "blob" in resource:
                self.check_base64((*where, "blob"), resource["blob"])
            if "file" in resource:
                self.check_file((*where, "file"), resource["file"])
            if "description" not in resource:
                self.warn(where, f"resource {resource['name']!r} has no description")
        return templates

    def check_base64(self, where: JsonPath, value: str) -> None:
        try:
            base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            self.error(where, "not valid base64")

    def check_file(self, where: JsonPath, relative: str) -> None:
        problem = static_file_problem(self.doc.base_dir, relative)
        if problem:
            self.error(where, problem)

    # -- prompts ----------------------------------------------------------------------
    def check_prompts(self) -> dict[str, set[str]]:
        prompts = self.data.get("prompts", [])
        self.unique(self.named["prompts"], "name", ("prompts",), "prompt name")
        self.unique_idents(self.named["prompts"], ("prompts",), "prompt", names.snake)
        fixed_uris = {r["uri"] for _, r in entries(self.data.get("resources", [])) if "uri" in r}
        declared: dict[str, set[str]] = {}
        for index, prompt in entries(prompts):
            where: JsonPath = ("prompts", index)
            arguments = prompt.get("arguments", [])
            self.unique(arguments, "name", (*where, "arguments"), "argument name")
            argument_names = {a["name"] for a in arguments}
            declared[prompt["name"]] = argument_names
            messages = prompt.get("messages", [])
            if not messages and not prompt.get("handler"):
                self.error(where, "a prompt needs 'messages', or 'handler: true' to render in code")
            if messages and prompt.get("handler"):
                self.warn((*where, "messages"), "ignored: the prompt renders in its handler")
            if "description" not in prompt:
                self.warn(where, f"prompt {prompt['name']!r} has no description")
            for m_index, message in enumerate(messages):
                m_where: JsonPath = (*where, "messages", m_index)
                if "text" in message:
                    self.check_template((*m_where, "text"), message["text"], argument_names)
                resource = message.get("resource")
                if resource is not None:
                    inline = [k for k in ("text", "blob") if k in resource]
                    if len(inline) > 1:
                        self.error(
                            (*m_where, "resource", "blob"), "give 'text' or 'blob', not both"
                        )
                    if not inline and resource["uri"] not in fixed_uris:
                        self.error(
                            (*m_where, "resource", "uri"),
                            f"{resource['uri']!r} is not a declared fixed resource; declare it "
                            "or give inline 'text' or 'blob'",
                        )
                    if "blob" in resource:
                        self.check_base64((*m_where, "resource", "blob"), resource["blob"])
                    if "{" in resource["uri"]:
                        self.check_template(
                            (*m_where, "resource", "uri"), resource["uri"], argument_names
                        )
                for media in ("image", "audio"):
                    item = message.get(media)
                    if item is None:
                        continue
                    given = [k for k in ("data", "file") if k in item]
                    if len(given) != 1:
                        self.error(
                            (*m_where, media), "give exactly one of 'data' (base64) or 'file'"
                        )
                    elif given[0] == "data":
                        self.check_base64((*m_where, media, "data"), item["data"])
                    else:
                        self.check_file((*m_where, media, "file"), item["file"])
        return declared

    def check_template(self, where: JsonPath, text: str, allowed: set[str]) -> None:
        try:
            used = jinja2.meta.find_undeclared_variables(_JINJA.parse(text))
        except jinja2.TemplateSyntaxError as exc:
            self.error(where, f"template syntax error on line {exc.lineno}: {exc.message}")
            return
        except RecursionError:
            self.error(where, "template is nested too deeply")
            return
        unknown = sorted(used - allowed)
        if unknown:
            shown = ", ".join(repr(u) for u in unknown)
            declared = ", ".join(sorted(allowed)) or "none"
            self.error(
                where, f"template uses undeclared argument(s) {shown} (declared: {declared})"
            )

    # -- completions ------------------------------------------------------------------
    def check_completions(
        self, prompts: dict[str, set[str]], templates: dict[str, list[str]]
    ) -> None:
        completions = self.data.get("completions", [])
        seen: dict[tuple[str, str, str], int] = {}
        for index, completion in entries(completions):
            where: JsonPath = ("completions", index)
            argument = completion["argument"]
            if "prompt" in completion:
                kind, target = "prompt", completion["prompt"]
                if target not in prompts:
                    self.error((*where, "prompt"), f"no prompt named {target!r}")
                elif argument not in prompts[target]:
                    self.error(
                        (*where, "argument"), f"prompt {target!r} has no argument {argument!r}"
                    )
            else:
                kind, target = "resource", completion["resource"]
                if target not in templates:
                    self.error(
                        (*where, "resource"),
                        f"no resource template with URI template or name {target!r}",
                    )
                elif argument not in templates[target]:
                    self.error(
                        (*where, "argument"),
                        f"URI template {target!r} has no variable {argument!r}",
                    )
            has_values, has_handler = "values" in completion, bool(completion.get("handler"))
            if has_values and has_handler:
                self.error((*where, "handler"), "give 'values' or 'handler: true', not both")
            elif not has_values and not has_handler:
                self.error(where, "a completion needs 'values' or 'handler: true'")
            key = (kind, target, argument)
            if key in seen:
                self.error(
                    where, f"duplicate completion for {kind} {target!r} argument {argument!r}"
                )
            seen.setdefault(key, index)

    # -- auth -------------------------------------------------------------------------
    def check_auth(self) -> None:
        auth = self.data.get("auth", {})
        kind = auth.get("type", "none")
        http = self.data.get("transports", {}).get("http", {})
        host = http.get("host", "127.0.0.1")
        if kind == "none" and host not in LOCAL_HOSTS:
            self.warn(
                ("transports", "http", "host"),
                f"HTTP bound to {host!r} without authentication; only localhost is safe without auth",
            )
        if host not in LOCAL_HOSTS and "allowedHosts" not in http:
            self.warn(
                ("transports", "http", "host"),
                f"HTTP bound to {host!r} without transports.http.allowedHosts: Host header "
                "checks (DNS-rebinding protection) stay off until allowed hosts are set",
            )
        if "env" in auth and not ENV_NAME.fullmatch(auth["env"]):
            self.error(("auth", "env"), f"{auth['env']!r} is not an environment variable name")
        if "header" in auth and not HEADER_NAME.fullmatch(auth["header"]):
            self.error(("auth", "header"), f"{auth['header']!r} is not an HTTP header name")
        if kind == "oauth":
            for key in ("issuer", "audience"):
                if key not in auth:
                    self.error(("auth",), f"oauth needs {key!r}")
            if not {"jwksUrl", "jwksFile", "introspectionUrl"} & set(auth):
                self.error(
                    ("auth",),
                    "oauth needs 'jwksUrl' or 'jwksFile' (to check JWT signatures) or "
                    "'introspectionUrl' (to ask the authorization server about opaque tokens)",
                )
            for key in ("issuer", "jwksUrl", "introspectionUrl"):
                url = auth.get(key)
                if isinstance(url, str) and not _secure_url(url):
                    self.error(
                        ("auth", key), f"{key} must be an https URL (http only for localhost)"
                    )
            if "env" in auth:
                self.warn(("auth", "env"), "oauth reads no static keys: 'env' is ignored")
        else:
            for key in (
                "issuer",
                "audience",
                "jwksUrl",
                "jwksFile",
                "introspectionUrl",
                "algorithms",
                "leeway",
            ):
                if key in auth:
                    self.warn(("auth", key), f"{key!r} is used only with auth type oauth")
            if auth.get("hideUnauthorizedTools"):
                self.warn(
                    ("auth", "hideUnauthorizedTools"),
                    "only oauth tokens carry scopes: with other auth types every tool is listed",
                )
            for index, tool in entries(self.data.get("tools", [])):
                if isinstance(tool, dict) and tool.get("scopes"):
                    self.warn(
                        ("tools", index, "scopes"),
                        "scopes are enforced only with auth type oauth"
                        + ("" if kind == "none" else f" ({kind} keys grant every scope)"),
                    )
                    break
        cors = http.get("corsOrigins", [])
        if "*" in cors and kind == "none":
            self.warn(
                ("transports", "http", "corsOrigins"),
                "'*' lets any web page call this unauthenticated server from a browser",
            )

    # -- Python names (the rules are in ``identifiers``: the model derives the same) -----
    def check_python_names(self) -> None:
        """Every Python name generated code derives from the manifest, checked against the
        others in the same namespace: the typed client's methods, a resource's or prompt's
        keyword arguments, the model classes, the completion handlers."""
        methods: dict[str, JsonPath] = {}

        def claim(table: dict[str, JsonPath], name: str, where: JsonPath, what: str) -> None:
            first = table.setdefault(name, where)
            if first != where:
                self.error(
                    where,
                    f"{what} {name!r} is also the name of {self.doc.field(first)}; rename one",
                )

        tools = list(entries(self.named.get("tools", [])))
        idents: dict[str, JsonPath] = {}
        for index, tool in tools:
            if isinstance(tool.get("name"), str):
                ident = names.tool_ident(tool["name"])
                if idents.setdefault(ident, ("tools", index)) != ("tools", index):
                    continue  # two tools with one Python name: reported by unique_idents
                method = names.client_method(ident)
                claim(methods, method, ("tools", index, "name"), "the typed client's method")
        for index, resource in entries(self.named.get("resources", [])):
            if isinstance(resource.get("name"), str):
                method = "read_" + names.snake(resource["name"])
                claim(methods, method, ("resources", index, "name"), "the typed client's method")
            template = resource.get("uriTemplate")
            if isinstance(template, str):
                variables, problem = uritemplate.parse(template)
                if problem is None:
                    self.distinct_kwargs(
                        variables, ("resources", index, "uriTemplate"), "variables"
                    )
        classes: dict[str, JsonPath] = {
            name: ("$defs", name) for name in self.named.get("$defs", {})
        }
        for index, prompt in entries(self.named.get("prompts", [])):
            if not isinstance(prompt.get("name"), str):
                continue
            claim(
                methods,
                "prompt_" + names.snake(prompt["name"]),
                ("prompts", index, "name"),
                "the typed client's method",
            )
            claim(
                classes,
                names.model_class(prompt["name"], "Arguments"),
                ("prompts", index, "name"),
                "model class",
            )
            arguments = [
                a["name"]
                for a in prompt.get("arguments", [])
                if isinstance(a, dict) and "name" in a
            ]
            self.distinct_kwargs(arguments, ("prompts", index, "arguments"), "arguments")
        for index, tool in tools:
            if isinstance(tool.get("name"), str):
                classes.setdefault(
                    names.model_class(tool["name"], "Input"), ("tools", index, "name")
                )
        handlers: dict[str, JsonPath] = {}
        for index, completion in entries(self.named.get("completions", [])):
            target = "prompt" if "prompt" in completion else "resource"
            ref = str(completion.get(target, ""))
            ident = names.completion_ident(target, ref, str(completion.get("argument", "")))
            claim(handlers, ident, ("completions", index), "completion handler")

    def distinct_kwargs(self, given: list[str], where: JsonPath, what: str) -> None:
        seen: dict[str, str] = {}
        for name in given:
            python = names.kwarg(name)
            other = seen.setdefault(python, name)
            if other != name:
                self.error(
                    where,
                    f"{what} {other!r} and {name!r} both become the Python argument {python!r}; rename one",
                )

    # -- shared helpers ---------------------------------------------------------------
    def unique(self, items: Iterable[dict[str, Any]], key: str, where: JsonPath, what: str) -> None:
        first: dict[Any, int] = {}
        for index, item in entries(list(items)):
            if key not in item:
                continue
            value = item[key]
            if value in first:
                self.error(
                    (*where, index, key),
                    f"duplicate {what} {value!r} (first at {self.doc.field((*where, first[value]))})"
                    + self.rename_hint((*where, index), item),
                )
            first.setdefault(value, index)

    def rename_hint(self, path: JsonPath, item: dict[str, Any]) -> str:
        """How to rename an entry imported from an OpenAPI document."""
        if self.doc.overlay(path) is None:
            return ""
        return f" (the imported one with openapi.overrides.{item.get('name')}.name)"

    def unique_idents(
        self, items: Iterable[dict[str, Any]], where: JsonPath, what: str, convert: Any
    ) -> None:
        first: dict[str, tuple[int, str]] = {}
        for index, item in entries(list(items)):
            name = item.get("name")
            if not isinstance(name, str):
                continue
            ident = convert(name)
            if ident in first and first[ident][1] != name:
                other = first[ident][1]
                self.error(
                    (*where, index, "name"),
                    f"{what} {name!r} and {other!r} both become the Python name {ident!r}; "
                    "rename one" + self.rename_hint((*where, index), item),
                )
            first.setdefault(ident, (index, name))


def static_file_problem(base_dir: Path, relative: str) -> str | None:
    """Why ``relative`` cannot serve as a static file, or None when it can."""
    if "\0" in relative:
        return "file path contains a NUL character"
    try:
        if Path(relative).is_absolute():
            return "file paths are relative to the manifest's folder, not absolute"
        root = base_dir.resolve()
        target = (base_dir / relative).resolve()
        if root != target and root not in target.parents:
            return f"{_clip(relative)} points outside the manifest's folder"
        if not target.is_file():
            return f"file {_clip(relative)} not found next to the manifest"
    except (OSError, ValueError, RuntimeError) as exc:  # too long, a symlink loop, ...
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return f"cannot use file {_clip(relative)}: {reason}"
    return None


def _clip(text: str, limit: int = 60) -> str:
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 4] + "...'"


def _class_name_problem(name: str) -> str:
    """Why a shared definition's name cannot be its model class's name, and a better one."""
    better = names.pascal(name)
    if not names.kept_class_name(better):
        better += "Model"
    if name in names.RESERVED_CLASS_NAMES:
        why = "is a Python keyword or a name the models module imports"
    else:
        why = "is not a class name in PascalCase (a capital letter, then letters and digits)"
    return f"shared definition {name!r} {why}: its model class would get another name; call it {better!r}"


def _tool_name_problem(name: str) -> str:
    if len(name) > 64:
        return f"tool name is {len(name)} characters long; the limit is 64"
    bad = sorted({c for c in name if not TOOL_NAME.match(c)})
    shown = ", ".join(repr(c) for c in bad)
    return f"tool name {name!r} may only hold letters, digits, '_', '-' and '.' (found {shown})"


def _deeper_than(value: Any, limit: int) -> JsonPath | None:
    """The path of the first value (in document order) more than ``limit`` levels down."""
    stack: list[tuple[Any, JsonPath]] = [(value, ())]
    while stack:
        node, path = stack.pop()
        if len(path) > limit:
            return path
        if isinstance(node, dict):
            stack.extend((node[k], (*path, k)) for k in reversed(list(node)))
        elif isinstance(node, list):
            stack.extend((node[i], (*path, i)) for i in range(len(node) - 1, -1, -1))
    return None


def _pointer(path: JsonPath) -> str:
    return "#/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _valid_types(value: Any) -> bool:
    if isinstance(value, str):
        return value in _SCHEMA_TYPES
    return isinstance(value, list) and all(isinstance(v, str) and v in _SCHEMA_TYPES for v in value)


def check_semantics(doc: Document, broken: set[JsonPath] | None = None) -> Problems:
    return Checker(doc, broken).run()


def _secure_url(url: str) -> bool:
    """https, or http to this machine (for development)."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return True
    return parts.scheme == "http" and parts.hostname in LOCAL_HOSTS
