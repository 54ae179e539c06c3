"""Every Python name generated code derives from the manifest, assigned once to each
well-formed entry of the raw document (``build_model`` and ``check.names`` read them)."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import count
from typing import Any

from mcpgen import identifiers as ids
from mcpgen.check import schemas
from mcpgen.load import JsonPath


@dataclass(frozen=True)
class Assigned:
    """The names of one entry of the manifest."""

    path: JsonPath  # the entry in the document: ("tools", 3)
    ident: str  # its module and wiring function (``add``, ``resource_x_city``)
    method: str | None = None  # the typed client's method
    classes: tuple[str, ...] = ()  # the model classes generated for it
    models: tuple[str, str | None] = ("", None)  # a tool's input and output model classes
    ref: str = ""  # a completion: the prompt's name or the resource's URI template
    # a tool's own definitions' model classes (``AddInputUnit``), each with its definition
    defs: tuple[tuple[str, JsonPath], ...] = ()
    # its own definitions named like a shared one: the model has the shared one's class
    shadowing: tuple[JsonPath, ...] = ()


@dataclass(frozen=True)
class Names:
    tools: dict[int, Assigned]
    resources: dict[int, Assigned]
    prompts: dict[int, Assigned]
    completions: dict[int, Assigned]


def root_ref(schema: Any, shared: dict[str, Any]) -> str | None:
    """The shared definition a schema is only a reference to (``{$ref: '#/$defs/Note'}``)."""
    if not isinstance(schema, dict) or set(schema) - {"$ref", "description", "title"}:
        return None
    name = schemas.def_name(schema.get("$ref"))
    return name if name is not None and isinstance(shared.get(name), dict) else None


def assign(data: dict[str, Any]) -> Names:
    """The names of every well-formed entry of ``data`` (by its index in its section)."""
    shared = data.get("$defs")
    shared = shared if isinstance(shared, dict) else {}
    tools = {i: _tool(i, raw, shared) for i, raw in _named(data, "tools")}
    resources: dict[int, Assigned] = {}
    for i, raw in _named(data, "resources"):
        ident = ids.ident(raw["name"])
        resources[i] = Assigned(("resources", i), ident, ids.resource_method(ident))
    prompts: dict[int, Assigned] = {}
    for i, raw in _named(data, "prompts"):
        ident, classes = ids.ident(raw["name"]), (ids.model_class(raw["name"], "Arguments"),)
        prompts[i] = Assigned(("prompts", i), ident, ids.prompt_method(ident), classes)
    declared = [raw for _, raw in _named(data, "resources")]
    return Names(tools, resources, prompts, _completions(data, declared))


def _named(data: dict[str, Any], section: str) -> list[tuple[int, dict[str, Any]]]:
    items = data.get(section)
    return [
        (i, item)
        for i, item in enumerate(items if isinstance(items, list) else [])
        if isinstance(item, dict) and isinstance(item.get("name"), str)
    ]


def _tool(index: int, raw: dict[str, Any], shared: dict[str, Any]) -> Assigned:
    name, ident = raw["name"], ids.ident(raw["name"])
    given_input = root_ref(raw.get("input"), shared)
    given_output = root_ref(raw.get("output"), shared)
    input_model = given_input or ids.model_class(name, "Input")
    output_model = (given_output or ids.model_class(name, "Output")) if "output" in raw else None
    own = ((input_model, given_input), (output_model, given_output))
    classes = tuple(m for m, given in own if m and not given)  # not a shared definition's class
    defs: list[tuple[str, JsonPath]] = []
    shadowing: list[JsonPath] = []
    for part, (model, given) in zip(("input", "output"), own, strict=True):
        schema = raw.get(part)
        if model is None or given is not None or not isinstance(schema, dict):
            continue  # no model, or a shared definition's
        # an own definition's class is named after the tool's; one named like a shared one is it
        for key in ("definitions", "$defs"):
            named = schema.get(key)
            for name in named if isinstance(named, dict) else ():
                at: JsonPath = ("tools", index, part, key, name)
                if name in shared:
                    shadowing.append(at)
                else:
                    defs.append((ids.own_def_class(model, name), at))
    return Assigned(
        ("tools", index),
        ident,
        ids.client_method(ident),
        classes,
        (input_model, output_model),
        defs=tuple(defs),
        shadowing=tuple(shadowing),
    )


def _completions(data: dict[str, Any], resources: list[dict[str, Any]]) -> dict[int, Assigned]:
    items = data.get("completions")
    found: dict[int, tuple[str, str]] = {}
    for index, raw in enumerate(items if isinstance(items, list) else []):
        if not isinstance(raw, dict):
            continue
        target = "prompt" if "prompt" in raw else "resource"
        ref = raw.get(target)
        if not isinstance(ref, str) or not isinstance(raw.get("argument"), str):
            continue
        if target == "resource":  # a template may be named by its name or its URI template
            named = (
                r.get("uriTemplate") for r in resources if ref in (r["name"], r.get("uriTemplate"))
            )
            ref = next((template for template in named if isinstance(template, str)), ref)
        found[index] = (ref, ids.completion_ident(target, ref, raw["argument"]))
    taken = {ident for _, ident in found.values()}
    used: set[str] = set()
    assigned: dict[int, Assigned] = {}
    for index, (ref, ident) in found.items():
        if ident in used:
            ident = next(f"{ident}_{n}" for n in count(2) if f"{ident}_{n}" not in taken)
            taken.add(ident)
        used.add(ident)
        assigned[index] = Assigned(("completions", index), ident, ref=ref)
    return assigned
