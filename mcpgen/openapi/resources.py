"""Operations read as resources (``openapi`` rules with ``as: resource`` or
``resourceTemplate``) and the manifest's per-operation overrides (``openapi.overrides``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from mcpgen import identifiers as names
from mcpgen.load import JsonPath
from mcpgen.openapi.naming import TEMPLATE
from mcpgen.openapi.options import OVERRIDE_KEYS, Options, option_problem
from mcpgen.openapi.parts import Built
from mcpgen.openapi.result import Operation
from mcpgen.problems import Level, Problems

Json = Any
Warn = Callable[[int, JsonPath, str], None]
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_URI_VARNAME = re.compile(r"[^A-Za-z0-9_]")


def as_resource(built: Built, kind: str, warn: Warn) -> dict[str, Json] | None:
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
        warn(cand.src, cand.path, f"{reason}; imported as a tool")
        return None
    dropped = [p for p in op.parameters if p.location in ("header", "cookie")]
    for param in dropped:
        warn(
            cand.src,
            cand.path,
            f"{param.location} parameter {param.name!r} cannot be set "
            "when the operation is read as a resource",
        )
    path_vars = [p for p in op.parameters if p.location == "path"]
    query_vars = [p for p in op.parameters if p.location == "query"]
    if kind == "resource" and path_vars:
        warn(cand.src, cand.path, "an operation with path parameters is a resource template")
        kind = "resourceTemplate"
    if kind == "resource" and query_vars:
        warn(cand.src, cand.path, "query parameters cannot be set on a fixed resource")
    if kind == "resourceTemplate" and not (path_vars or query_vars):
        warn(cand.src, cand.path, "an operation without parameters is a fixed resource")
        kind = "resource"
    by_name = {p.name: p for p in path_vars}
    uri = "api://" + TEMPLATE.sub(
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
        resource["input"] = tool["input"]  # not a manifest key: the importer moves it out
    return resource


def apply_overrides(
    options: Options,
    tools: list[Built],
    resources: list[tuple[dict[str, Json], Operation]],
    problems: Problems,
) -> None:
    """Apply ``openapi.overrides`` (matched by tool name or operationId) to the imported
    tools and resources; renamed entries must stay valid and unique."""
    matched: set[str] = set()
    renamed_by: dict[int, str] = {}  # entry index -> the override key that renamed it
    entries: list[tuple[dict[str, Json], Built | None, Operation, str]] = [
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
                if field_name == "poll":  # how to call: the operation's, not the tool's
                    op = replace(op, poll=override["poll"] or None)
                    if built is not None:
                        built.operation = op
                    if override["poll"] is False:
                        entry.pop("task", None)
                elif field_name == "task":
                    if override["task"] is False:
                        entry.pop("task", None)
                    else:
                        entry["task"] = override["task"]
                elif field_name == "annotations":
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
            problems.add(
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
            problems.add(option_problem(Level.ERROR, where, message))
    for index, (entry, *_) in enumerate(entries):
        if index not in renamed_by:
            continue
        name = entry["name"]
        first = seen.setdefault(names.snake(name), index)
        if first != index:
            other = entries[first][2]
            problems.add(
                option_problem(
                    Level.ERROR,
                    f"openapi.overrides.{renamed_by[index]}.name",
                    f"{name!r} is also the name (or the Python name) of "
                    f"{other.method} {other.path}",
                )
            )


def _uri_var(name: str) -> str:
    """An RFC 6570 variable name: other characters percent-encoded."""
    return _URI_VARNAME.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), name)
