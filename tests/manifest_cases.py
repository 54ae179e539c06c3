"""Whole random manifests (``manifests()``), built from ``manifest_strategies``' parts, and
the OpenAPI 3 document a manifest's ``openapi:`` section includes.

Half the manifests are *wild*: they may hold what mcpgen must refuse (names nothing can
use, dangling references, patterns Python cannot compile, defaults of the wrong type,
undeclared template arguments, completions of nothing). The other half are *tame*: their
names still clash with keywords, builtins and generated names, and properties still
clash with each other, but the entries mcpgen refuses to tell apart are drawn distinct,
so that most of them build and the generated code gets exercised.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from hypothesis import strategies as st
from manifest_strategies import (
    SCHEMES,
    SEPARATORS,
    Scope,
    completion_entries,
    leaf_schema,
    object_schema,
    prompt_entry,
    spelled,
    tool_entry,
    uri_template,
    word_pool,
)

from mcpgen import identifiers

Json = Any


class Case(NamedTuple):
    manifest: Json
    api: Json | None  # the OpenAPI document the manifest includes (api.yaml)
    wild: bool  # may hold what mcpgen must refuse


DEF_NAMES = ("Any", "BaseModel", "Field", "Literal", "Model", "Enum", "Optional", "str", "None")
# maps (a dict of one type of value): a model of its own, or an alias of dict[str, X]
MAPS = st.sampled_from(
    [
        {"type": "object", "additionalProperties": {"type": "integer"}},
        {"type": "object", "additionalProperties": {"type": "string"}, "properties": {}},
        {"type": "object", "additionalProperties": True},
    ]
)
ODD_PROPERTIES = ("", "a b", "$ref", "default", "type", "1", "properties", "-", "_")


@st.composite
def openapi_document(draw: st.DrawFn, pool: list[tuple[str, ...]], scope: Scope) -> Json:
    """A few operations; their operationIds are spelled from the manifest's words, so
    they clash with its tools, and their parameters with each other."""
    paths: dict[str, Json] = {}
    plain = Scope(scope.props, (), scope.wild)
    component = st.one_of(
        spelled(pool, ("", "_", "-", "."), scope.wild), st.sampled_from(DEF_NAMES)
    )
    components = {
        name: draw(st.one_of(object_schema(plain, leaf_schema(plain)), leaf_schema(plain), MAPS))
        for name in draw(st.lists(component, max_size=3, unique=True))
    }
    refs = [f"#/components/schemas/{name}" for name in components]
    answers = ["none", "object", "array", "string", "map"] + (["ref", "refs"] if refs else [])
    for index in range(draw(st.integers(1, 3))):
        param = draw(spelled(pool, ("", "_", "-"), scope.wild))
        path = draw(st.sampled_from((f"/r{index}", f"/r{index}/{{{param}}}")))
        method = draw(st.sampled_from(("get", "post", "put", "delete")))
        operation: dict[str, Json] = {"responses": {"200": {"description": "ok"}}}
        if draw(st.integers(0, 4)):
            operation["operationId"] = draw(spelled(pool, ("", "_", "-", ".", "/"), scope.wild))
        parameters: list[Json] = []
        if "{" in path:
            schema = {"type": "string"}
            parameters.append({"name": param, "in": "path", "required": True, "schema": schema})
        for name in draw(st.lists(scope.props, max_size=2, unique=True)):
            where = draw(st.sampled_from(("query", "query", "header", "cookie")))
            parameters.append({"name": name, "in": where, "schema": draw(leaf_schema(plain))})
        if parameters:
            operation["parameters"] = parameters
        if method in ("post", "put") and draw(st.booleans()):
            body = draw(object_schema(plain, leaf_schema(plain)))
            operation["requestBody"] = {"content": {"application/json": {"schema": body}}}
        returned = draw(st.sampled_from(answers))
        if returned != "none":
            ref = {"$ref": draw(st.sampled_from(refs))} if refs else {}
            schema = {
                "object": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
                "array": {"type": "array", "items": {"type": "string"}},
                "string": {"type": "string"},
                "map": draw(MAPS),
                "ref": ref,
                "refs": {"type": "array", "items": ref},
            }[returned]
            operation["responses"]["200"]["content"] = {"application/json": {"schema": schema}}
        if method in ("post", "put") and refs and draw(st.integers(0, 3)) == 0:
            schema = {"$ref": draw(st.sampled_from(refs))}
            operation["requestBody"] = {"content": {"application/json": {"schema": schema}}}
        paths.setdefault(path, {})[method] = operation
    version = draw(st.sampled_from(("3.0.3", "3.1.0")))
    document = {"openapi": version, "info": {"title": "Api", "version": "1"}, "paths": paths}
    if components:
        document["components"] = {"schemas": components}
    return document


def _tool_key(name: str) -> tuple[str, str]:
    return identifiers.snake(name), identifiers.pascal(name)


@st.composite
def manifests(draw: st.DrawFn) -> Case:
    wild = draw(st.booleans())
    pool = draw(word_pool())
    names = spelled(pool, SEPARATORS, wild)
    tool_name = spelled(pool, ("", "_", "-", ".", "__"), wild, ascii_only=not wild)
    props = st.one_of(spelled(pool, SEPARATORS, wild), st.sampled_from(ODD_PROPERTIES))
    manifest: dict[str, Json] = {"mcpgen": 1, "server": {"name": "case", "version": "0.1.0"}}

    unique_tools = None if wild else _tool_key
    tool_names = draw(
        st.lists(tool_name if not wild else names, max_size=4, unique_by=unique_tools)
    )
    candidates = [spelled(pool, ("", "_"), wild, ascii_only=True), st.sampled_from(DEF_NAMES)]
    if wild and tool_names:  # the model class a tool's input becomes
        candidates.append(
            st.sampled_from([identifiers.model_class(t, "Input") for t in tool_names])
        )
    def_names = draw(st.lists(st.one_of(*candidates), max_size=3, unique=True))
    if not wild:
        models = {identifiers.model_class(t, s) for t in tool_names for s in ("Input", "Output")}
        def_names = [n for n in def_names if n not in models and identifiers.kept_class_name(n)]
    plain = Scope(props, (), wild)  # definitions refer to no other definition
    defs = {
        n: draw(st.one_of(object_schema(plain, leaf_schema(plain)), leaf_schema(plain)))
        for n in def_names
    }
    if defs:
        manifest["$defs"] = defs
    objects = tuple("#/$defs/" + n for n, d in defs.items() if _is_object(d))
    scope = Scope(props, tuple("#/$defs/" + n for n in def_names), wild, objects)
    if tool_names:
        manifest["tools"] = [draw(tool_entry(n, scope)) for n in tool_names]

    resources: list[Json] = []
    resource_names = draw(
        st.lists(names, max_size=3, unique_by=None if wild else identifiers.snake)
    )
    for name in resource_names:
        resource: dict[str, Json] = {"name": name, "description": "A resource."}
        if draw(st.booleans()):
            variable = spelled(pool, ("", "_", "."), wild, ascii_only=not wild)
            template = draw(uri_template(variable))
            if not wild and not _distinct_variables(template):
                template = f"app://host/{len(resources)}/{{id}}"  # distinct Python arguments
            resource["uriTemplate"] = template
        else:
            resource["uri"] = f"{draw(st.sampled_from(SCHEMES))}://host/{len(resources)}"
            if draw(st.booleans()):
                resource["text"] = "static"
        if draw(st.integers(0, 4)) == 0:
            resource["mimeType"] = "application/json"
        resources.append(resource)
    if resources:
        manifest["resources"] = resources

    prompt_names = draw(st.lists(names, max_size=2, unique_by=None if wild else identifiers.snake))
    prompts = [draw(prompt_entry(pool, n, wild)) for n in prompt_names]
    if prompts:
        manifest["prompts"] = prompts
    templates = [r for r in resources if "uriTemplate" in r]
    completions = draw(completion_entries(prompts, templates, wild))
    if completions:
        manifest["completions"] = completions

    api = None
    if draw(st.integers(0, 3)) == 0:
        api = draw(openapi_document(pool, scope))
        section: dict[str, Json] = {"source": "api.yaml", "baseUrl": "http://127.0.0.1:9"}
        if draw(st.integers(0, 3)) == 0:
            section["mode"] = draw(st.sampled_from(("tools", "search", "code")))
        manifest["openapi"] = section
    if not tool_names and not resources and not prompts and api is None:
        manifest["tools"] = [{"name": "only", "description": "A tool."}]
    return Case(manifest, api, wild)


def _is_object(schema: Json) -> bool:
    return isinstance(schema, dict) and schema.get("type") == "object"


def _distinct_variables(template: str) -> bool:
    from manifest_strategies import template_variables

    variables = template_variables(template)
    kwargs = [identifiers.kwarg(v) for v in variables]
    return len(set(variables)) == len(variables) and len(set(kwargs)) == len(kwargs)
