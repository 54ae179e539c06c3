"""The manifest's ``openapi:`` options: which operations become what (``docs/openapi.md``)
and per-tool overrides. Their problems are located in :data:`OPTIONS_FILE`, with a
``field`` like ``openapi.include[0].methods``: the caller knows where the manifest wrote it."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mcpgen.load import Document, JsonPath, Positions
from mcpgen.openapi.naming import TEMPLATE
from mcpgen.openapi.parts import Built
from mcpgen.openapi.result import Operation
from mcpgen.problems import Level, Location, Problem, Problems

Json = Any
Warn = Callable[[int, JsonPath, str], None]
OPTIONS_FILE = "<manifest openapi options>"
OVERRIDE_KEYS = ("name", "title", "description", "annotations", "scopes", "task", "poll")
_URI_VARNAME = re.compile(r"[^A-Za-z0-9_]")


@dataclass(frozen=True)
class Rule:
    """An ``include``, ``exclude`` or ``rules`` entry (as the manifest schema accepts it)."""

    where: str
    item: dict[str, Any]

    def matches(self, method: str, path: str, tags: list[str], operation_id: str | None) -> bool:
        methods, glob, wanted, op_glob = map(
            self.item.get, ("methods", "path", "tags", "operationId")
        )
        return (
            (methods is None or method.lower() in {m.lower() for m in methods})
            and (glob is None or fnmatch.fnmatchcase(path, glob))
            and (wanted is None or not set(wanted).isdisjoint(tags))
            and (
                op_glob is None
                or (operation_id is not None and fnmatch.fnmatchcase(operation_id, op_glob))
            )
        )


@dataclass
class Options:
    include: list[Rule] = field(default_factory=list)
    exclude: list[Rule] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)
    deprecated: bool = False  # import operations the document marks deprecated

    def kind(self, method: str, path: str, tags: list[str], operation_id: str | None) -> str:
        """``tool``, ``resource``, ``resourceTemplate`` or ``exclude`` for one operation."""
        args = (method, path, tags, operation_id)
        excluded = [r for r in self.exclude if r.matches(*args)]
        self.used.update(r.where for r in excluded)
        if excluded:
            return "exclude"
        included = [r for r in self.include if r.matches(*args)]
        self.used.update(r.where for r in included)
        if self.include and not included:
            return "exclude"
        for rule in self.rules:
            if rule.matches(*args):
                self.used.add(rule.where)
                return str(rule.item.get("as", "tool"))
        return next((str(r.item["as"]) for r in included if "as" in r.item), "tool")


def option_problem(level: Level, where: str, message: str) -> Problem:
    return Problem(level, Location(OPTIONS_FILE), where, message)


def parse_options(raw: Any, problems: Problems) -> Options:
    options = Options()
    if raw is None:
        return options
    if not isinstance(raw, dict):
        problems.add(option_problem(Level.ERROR, "openapi", "options must be a mapping"))
        return options
    malformed = _shape_problems(raw, problems)
    for section in ("include", "exclude", "rules"):
        if ("openapi", section) not in malformed:
            rules = [
                Rule(f"openapi.{section}[{index}]", item)
                for index, item in enumerate(raw.get(section, []))
                if ("openapi", section, index) not in malformed
            ]
            setattr(options, section, rules)
    options.deprecated = raw.get("deprecated") is True  # the manifest schema checks it
    if ("openapi", "overrides") in malformed:
        return options
    for key, value in raw.get("overrides", {}).items():
        if ("openapi", "overrides", key) in malformed:
            continue  # the manifest schema's problems say what is wrong
        for name in set(value).difference(OVERRIDE_KEYS):
            message = f"unknown override {name!r} ignored (known: {', '.join(OVERRIDE_KEYS)})"
            problems.add(option_problem(Level.WARNING, f"openapi.overrides.{key}.{name}", message))
        options.overrides[str(key)] = {k: v for k, v in value.items() if k in OVERRIDE_KEYS}
    return options


def _shape_problems(raw: dict[str, Any], problems: Problems) -> set[tuple[Any, ...]]:
    """The sections read here checked by the manifest schema: the paths found malformed."""
    from jsonschema import Draft202012Validator

    from mcpgen.check.structure import manifest_schema, schema_problems

    schema = manifest_schema()
    known = schema["$defs"]["openapi"]["properties"]
    sections = {k: known[k] for k in ("include", "exclude", "rules", "overrides", "deprecated")}
    validator = Draft202012Validator(
        {"properties": {"openapi": {"properties": sections}}, "$defs": schema["$defs"]}
    )
    doc = Document(OPTIONS_FILE, Path(), {"openapi": raw}, "", Positions(OPTIONS_FILE))
    malformed: set[tuple[Any, ...]] = set()
    for error in validator.iter_errors(doc.data):
        problems.extend(schema_problems(doc, error))
        malformed.add(tuple(error.absolute_path)[:3])
    return malformed


# -- applied to the imported operations ----------------------------------------------------
def as_resource(built: Built, kind: str, warn: Warn) -> dict[str, Json] | None:
    """A resource entry (``api://<path>``) for a GET without a body, or None (warned): a tool."""
    op = built.operation
    src, at = op.origin  # where the operation is, for warnings
    reason = None
    if op.method != "GET":
        reason = f"only GET operations can be resources, not {op.method}"
    elif op.body is not None:
        reason = "an operation with a request body cannot be a resource"
    elif any(p.required and p.location in ("header", "cookie") for p in op.parameters):
        reason = "an operation with required header or cookie parameters cannot be a resource"
    elif "}{" in op.path:  # a URI template refuses them: no URI says where one value ends
        reason = "path parameters side by side cannot be told apart in a resource URI"
    if reason:
        warn(src, at, f"{reason}; imported as a tool")
        return None
    for param in op.parameters:
        if param.location in ("header", "cookie"):
            what = f"{param.location} parameter {param.name!r} cannot be set"
            warn(src, at, f"{what} when the operation is read as a resource")
    path_vars = [p for p in op.parameters if p.location == "path"]
    query_vars = [p for p in op.parameters if p.location == "query"]
    if kind == "resource" and path_vars:
        warn(src, at, "an operation with path parameters is a resource template")
        kind = "resourceTemplate"
    if kind == "resource" and query_vars:
        warn(src, at, "query parameters cannot be set on a fixed resource")
    if kind == "resourceTemplate" and not (path_vars or query_vars):
        warn(src, at, "an operation without parameters is a fixed resource")
        kind = "resource"
    template = kind == "resourceTemplate"
    by_name = {p.name: p for p in path_vars}  # (none in a fixed resource)
    uri = "api://" + TEMPLATE.sub(
        lambda m: "{" + _uri_var(by_name[m[1]].argument) + "}" if m[1] in by_name else m[0],
        op.path.lstrip("/"),
    )
    if template and query_vars:
        uri += "{?" + ",".join(_uri_var(p.argument) for p in query_vars) + "}"
    tool = built.tool
    resource: dict[str, Json] = {"name": tool["name"], "uriTemplate" if template else "uri": uri}
    resource.update({key: tool[key] for key in ("title", "description") if key in tool})
    resource["mimeType"] = op.response_content_type or "application/json"
    if template:  # its variables are checked against these schemas
        resource["input"] = tool["input"]  # not a manifest key: the importer moves it out
    return resource


def apply_overrides(
    options: Options,
    tools: list[Built],
    resources: list[tuple[dict[str, Json], Operation]],
    problems: Problems,
) -> dict[tuple[str, int], str]:
    """Apply ``openapi.overrides`` (by tool name or operationId), warn about those and the
    rules that matched nothing; the key that renamed each entry, by ``(kind, index)``."""
    matched: set[str] = set()
    renamed_by: dict[tuple[str, int], str] = {}
    offered: list[tuple[dict[str, Json], Operation]] = [(b.tool, b.operation) for b in tools]
    for index, (entry, op) in enumerate([*offered, *resources]):
        original = entry["name"]
        at = ("tools", index) if index < len(tools) else ("resources", index - len(tools))
        # the tool name's override wins
        for key in [k for k in (op.operation_id, original) if k in options.overrides]:
            matched.add(key)
            override = options.overrides[key]
            if "name" in override:
                renamed_by[at] = key
            replaced = ("name", "title", "description", "scopes")
            entry.update({k: override[k] for k in replaced if k in override})
            if "annotations" in override and at[0] == "tools":  # a resource has none
                entry["annotations"] = {**entry["annotations"], **override["annotations"]}
            if "poll" in override:  # how to call: the operation's, not the tool's
                op = replace(op, poll=override["poll"] or None)
            if override.get("task") is False or override.get("poll") is False:
                entry.pop("task", None)
            elif "task" in override:
                entry["task"] = override["task"]
        if entry["name"] != original:
            op = replace(op, tool=entry["name"])
        if at[0] == "tools":
            tools[index].operation = op
        else:
            resources[at[1]] = (entry, op)
    for key in options.overrides:
        if key not in matched:
            message = f"no imported operation has the tool name or operationId {key!r}"
            problems.add(option_problem(Level.WARNING, f"openapi.overrides.{key}", message))
    for where in [r.where for r in (*options.include, *options.exclude, *options.rules)]:
        if where not in options.used:
            problems.add(option_problem(Level.WARNING, where, "this rule matches no operation"))
    return renamed_by


def _uri_var(name: str) -> str:
    """An RFC 6570 variable name: other characters percent-encoded."""
    return _URI_VARNAME.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), name)
