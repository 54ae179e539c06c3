"""Hypothesis strategies for whole mcpgen manifests that stress the seams between user-chosen
names and the Python names generated code derives from them.

Each manifest draws a small pool of word tuples and spells every name it needs (tools,
resources, prompts, arguments, properties, template variables, ``$defs``, operationIds) from
that pool in a random style, so names clash after normalisation far more often than chance
would make them: ``get-user``, ``get_user``, ``GetUser``, ``getUser``, ``GET.USER``. The
words include Python keywords, soft keywords and builtins, the names generated code binds
itself (``mcpgen.identifiers.GENERATED_NAMES``, ``CLIENT_NAMES``, the client's locals and
imports), pydantic's reserved attributes, digits and non-ASCII letters.

A drawn case is ``(manifest, openapi)``: the manifest's data and, when it has an
``openapi:`` section, the OpenAPI 3 document it names (``api.yaml``, next to it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from mcpgen import identifiers

Json = Any

WORDS = sorted(
    {
        *("get", "user", "User", "HTTP", "id", "ID", "items", "note", "x", "v2", "2fa", "9"),
        *("class", "from", "None", "True", "import", "lambda", "match", "case", "type", "_"),
        *("self", "list", "dict", "str", "int", "input", "object", "print", "id", "any"),
        *identifiers.GENERATED_NAMES,
        *identifiers.CLIENT_NAMES,
        # what generated modules import or bind next to user-derived names
        *("models", "parse", "given", "result", "blocking", "Content", "Any", "Literal"),
        *("SPEC", "HANDLERS", "handle", "server", "Context", "ToolError", "annotations"),
        # pydantic's BaseModel attributes and the names the model generator uses
        *("model_config", "model_fields", "schema", "json", "copy", "fields", "Field"),
        *("BaseModel", "RootModel", "Enum", "Input", "Output", "Arguments", "Model", "root"),
        *("é", "Σ", "日本", "straße", "ǅ"),
    }
)
STYLES = ("asis", "lower", "upper", "title", "camel")
SEPARATORS = ("", "_", "-", ".", "__", " ")


def _styled(words: tuple[str, ...], style: str, separator: str) -> str:
    if style == "lower":
        parts = [w.lower() for w in words]
    elif style == "upper":
        parts = [w.upper() for w in words]
    elif style == "title":
        parts = [w[:1].upper() + w[1:] for w in words]
    elif style == "camel":
        parts = [words[0][:1].lower() + words[0][1:]] + [w[:1].upper() + w[1:] for w in words[1:]]
    else:
        parts = list(words)
    return separator.join(parts)


@st.composite
def spelled(
    draw: st.DrawFn,
    pool: list[tuple[str, ...]],
    separators: tuple[str, ...],
    wild: bool = True,
    ascii_only: bool = False,
    identifier: bool = False,
) -> str:
    """A name spelled from one of the pool's word tuples, sometimes decorated; ``wild``
    names may be ones nothing can use, ``ascii_only`` ones have no other letters,
    ``identifier`` ones no leading digit."""
    words = draw(st.sampled_from(pool))
    if ascii_only:
        words = tuple(w if w.isascii() else "u" for w in words)
    name = _styled(words, draw(st.sampled_from(STYLES)), draw(st.sampled_from(separators)))
    decorations = ("", "", "", "", "lead-_", "trail-_")
    decorations += (() if identifier else ("lead-digit",)) + (("odd",) if wild else ())
    decoration = draw(st.sampled_from(decorations))
    if decoration == "lead-digit":
        name = "1" + name
    elif decoration == "lead-_":
        name = "_" + name
    elif decoration == "trail-_":
        name += "_"
    elif decoration == "odd":  # empty after normalisation, or nothing Python can use
        name = draw(st.sampled_from(("_", "__", "-", "..", "0", "é", "_1", "x" * 70)))
    return name or "x"


def word_pool() -> st.SearchStrategy[list[tuple[str, ...]]]:
    word_tuple = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(tuple)
    return st.lists(word_tuple, min_size=1, max_size=4)


# -- JSON Schemas ----------------------------------------------------------------------
ENUM_VALUES: list[Json] = [
    *("a-b", "a_b", "A B", "", "1", "None", "true", "class", "é", "a.b", "x", "X", "-", "_"),
    *("self", "mro", "name", "value", "'quote'", 'dq"', "back\\slash", "new\nline"),
    *(0, 1, -1, 2, 1.5, 0.0, True, False, None, 2**64),
]
PATTERNS = ("^[a-z]+$", "\\d{3}", "^\\w+(-\\w+)*$", "(?i)abc", "a|b", "(a)\\1", "^é$")
BAD_PATTERNS = ("[", "\\p{L}+", "(?<name>x)")
FORMATS = ("date-time", "date", "email", "uri", "uuid", "ipv4", "hostname", "made-up")
DEFAULTS = {  # for each type: values of that type, then values of another type
    "string": (["", "x", "a-b", "None"], [3, None]),
    "integer": ([0, 7, -1], ["7", 2.5]),
    "number": ([0.5, 3, -2], ["x"]),
    "boolean": ([True, False], ["no"]),
    "null": ([None], [0]),
}


@dataclass(frozen=True)
class Scope:
    """What schemas of one manifest may draw on: property names, references, wildness."""

    props: st.SearchStrategy[str]
    refs: tuple[str, ...]
    wild: bool
    objects: tuple[str, ...] = ()  # the references to shared definitions of type object

    def with_ref(self, ref: str) -> Scope:
        return Scope(self.props, (*self.refs, ref), self.wild, self.objects)


def _rarely(draw: st.DrawFn, wild: bool, odds: int = 6) -> bool:
    """True now and then, only in a wild manifest (the input mcpgen must refuse)."""
    return wild and draw(st.integers(0, odds - 1)) == 0


@st.composite
def leaf_schema(draw: st.DrawFn, scope: Scope) -> Json:
    kinds = ("string", "integer", "number", "boolean", "null", "enum", "const", "nullable")
    kind = draw(st.sampled_from((*kinds, "any", "true", "ref", "ref")))
    if kind == "ref":
        if scope.refs and not _rarely(draw, scope.wild):
            return {"$ref": draw(st.sampled_from(scope.refs))}
        if scope.wild:
            return {"$ref": "#/$defs/" + draw(st.sampled_from(("Missing", "X", "Thing")))}
        kind = "string"
    if kind == "any":
        return {}
    if kind == "true":
        return True
    if kind == "enum":
        return {"enum": draw(st.lists(st.sampled_from(ENUM_VALUES), min_size=1, max_size=5))}
    if kind == "const":
        return {"const": draw(st.sampled_from(ENUM_VALUES))}
    schema: dict[str, Json] = {}
    if kind == "nullable":
        schema["type"] = [draw(st.sampled_from(("string", "integer", "number"))), "null"]
    else:
        schema["type"] = kind
    base = schema["type"][0] if isinstance(schema["type"], list) else kind
    if base == "string":
        if draw(st.booleans()):
            bad = _rarely(draw, scope.wild, 3)
            schema["pattern"] = draw(st.sampled_from(BAD_PATTERNS if bad else PATTERNS))
        if draw(st.integers(0, 3)) == 0:
            schema["format"] = draw(st.sampled_from(FORMATS))
        if draw(st.integers(0, 3)) == 0:
            schema["minLength"] = draw(st.integers(0, 3))
        if draw(st.integers(0, 3)) == 0:
            strings = st.sampled_from([v for v in ENUM_VALUES if isinstance(v, str)])
            schema["enum"] = draw(st.lists(strings, min_size=1, max_size=4))
    elif base in ("integer", "number"):
        if draw(st.booleans()):
            schema["minimum"] = draw(st.integers(-5, 5))
        if draw(st.integers(0, 2)) == 0:
            least = -5 if scope.wild else schema.get("minimum", -5)  # tame: one is valid
            schema["maximum"] = draw(st.integers(least, 100))
    if draw(st.integers(0, 2)) == 0:  # a default: in tame manifests a valid one
        right, wrong = DEFAULTS[base]
        choices = [*right, None] if kind == "nullable" else right + wrong
        _default(draw, schema, choices, scope.wild)
    if draw(st.integers(0, 3)) == 0:
        schema["description"] = draw(st.sampled_from(("A value.", 'Quotes "\'""" and \\', "é")))
    return schema


def schema_strategy(scope: Scope, depth: int = 3) -> st.SearchStrategy[Json]:
    """A JSON Schema: leaves, objects with drawn property names, arrays, unions, refs."""
    leaf = leaf_schema(scope)
    if depth <= 0:
        return leaf
    inner = schema_strategy(scope, depth - 1)
    return st.one_of(
        leaf, leaf, object_schema(scope, inner), array_schema(inner, scope.wild), union(inner)
    )


@st.composite
def object_schema(draw: st.DrawFn, scope: Scope, inner: Any) -> Json:
    keys = draw(st.lists(scope.props, max_size=4, unique=True))
    schema: dict[str, Json] = {"type": "object", "properties": {k: draw(inner) for k in keys}}
    if keys and draw(st.booleans()):
        schema["required"] = draw(st.lists(st.sampled_from(keys), unique=True))
    if _rarely(draw, scope.wild):
        schema["required"] = [*schema.get("required", []), "notAProperty"]
    extra = draw(st.sampled_from(("none", "none", "false", "true", "schema")))
    if extra == "false":
        schema["additionalProperties"] = False
    elif extra == "true":
        schema["additionalProperties"] = True
    elif extra == "schema":
        schema["additionalProperties"] = {"type": "string"}
    return schema


@st.composite
def array_schema(draw: st.DrawFn, inner: Any, wild: bool) -> Json:
    schema: dict[str, Json] = {"type": "array", "items": draw(inner)}
    if draw(st.booleans()):
        schema["minItems"] = draw(st.integers(0, 2))
    if draw(st.integers(0, 3)) == 0:
        _default(draw, schema, [[], ["x"], [1, 2]], wild)
    return schema


def _default(draw: st.DrawFn, schema: dict[str, Json], choices: list[Json], wild: bool) -> None:
    """A default from ``choices``: any in a wild manifest, one its schema accepts in a tame."""
    value = draw(st.sampled_from(choices))
    try:
        fits = Draft202012Validator(schema).is_valid(value)
    except Exception:  # a reference: resolvable only in the whole manifest
        fits = False
    if wild or fits:
        schema["default"] = value


@st.composite
def union(draw: st.DrawFn, inner: Any) -> Json:
    key = draw(st.sampled_from(("anyOf", "oneOf", "allOf")))
    options = draw(st.lists(inner, min_size=1, max_size=3))
    if key == "anyOf" and draw(st.booleans()):
        options.append({"type": "null"})  # the usual nullable spelling
    return {key: options}


@st.composite
def tool_schema(draw: st.DrawFn, scope: Scope) -> Json:
    """A tool's input or output: an object, sometimes a reference to a shared object,
    sometimes with its own $defs (in wild manifests now and then no object at all)."""
    if _rarely(draw, scope.wild, 10):
        return draw(leaf_schema(scope))  # not an object: refused
    if scope.wild and scope.refs and draw(st.integers(0, 9)) == 0:
        return {"$ref": draw(st.sampled_from(scope.refs))}  # an object if the def is one
    if scope.objects and draw(st.integers(0, 5)) == 0:
        return {"$ref": draw(st.sampled_from(scope.objects))}
    own: dict[str, Json] = {}
    inner = scope
    if draw(st.integers(0, 3)) == 0:
        # its class is the model's name and this one (``Output``: ``GetInputOutput``, the
        # output model of a tool ``get_input``), or, named like a shared one, that one's
        shared = [r.removeprefix("#/$defs/") for r in scope.refs]
        local = draw(st.sampled_from(("Local", "Output", "Input", *shared)))
        own = {local: draw(schema_strategy(scope, 1))}
        inner = scope.with_ref("#/$defs/" + local)
    schema = draw(object_schema(inner, schema_strategy(inner, 2)))
    if own:
        schema["$defs"] = own
    return schema


# -- manifest entries ------------------------------------------------------------------
SCHEMES = ("app", "res", "x-y", "a.b", "notes")
OPERATORS = ("", "", "", "+", "#", "/", ".", ";", "?", "&")


@st.composite
def uri_template(draw: st.DrawFn, names: st.SearchStrategy[str]) -> str:
    scheme = draw(st.sampled_from(SCHEMES))
    parts = [f"{scheme}://host"]
    for _ in range(draw(st.integers(1, 3))):
        variables = draw(st.lists(names, min_size=1, max_size=2))
        operator = draw(st.sampled_from(OPERATORS))
        modifier = draw(st.sampled_from(("", "", "", "*", ":3")))
        body = ",".join(v + modifier for v in variables)
        parts.append(f"{{{operator}{body}}}" if operator in "?&" else f"/{{{operator}{body}}}")
    return "".join(parts)


@st.composite
def tool_entry(draw: st.DrawFn, name: str, scope: Scope) -> Json:
    tool: dict[str, Json] = {"name": name}
    if draw(st.integers(0, 5)):
        tool["description"] = "A tool."
    if draw(st.integers(0, 3)):
        tool["input"] = draw(tool_schema(scope))
    if draw(st.booleans()):
        tool["output"] = draw(tool_schema(scope))
    if draw(st.booleans()):
        tool["context"] = True
    if draw(st.integers(0, 5)) == 0:
        tool["enabled"] = False
    if draw(st.integers(0, 4)) == 0:
        tool["annotations"] = {"readOnlyHint": draw(st.booleans())}
    if draw(st.integers(0, 5)) == 0:
        tool["task"] = draw(st.sampled_from(["optional", "required"]))
    return tool


@st.composite
def prompt_entry(draw: st.DrawFn, pool: list[tuple[str, ...]], name: str, wild: bool) -> Json:
    argument = spelled(pool, ("", "_"), wild, ascii_only=not wild, identifier=not wild)
    arg_names = draw(st.lists(argument, max_size=3, unique_by=None if wild else identifiers.kwarg))
    prompt: dict[str, Json] = {"name": name, "description": "A prompt."}
    if arg_names:
        prompt["arguments"] = [{"name": a, "required": draw(st.booleans())} for a in arg_names]
    if draw(st.integers(0, 4)) == 0:
        prompt["handler"] = True
    else:
        used = draw(st.lists(st.sampled_from(arg_names), max_size=2)) if arg_names else []
        if _rarely(draw, wild):
            used.append("undeclared")
        text = "Say " + " and ".join("{{ " + u + " }}" for u in used) if used else "Hello."
        prompt["messages"] = [{"role": draw(st.sampled_from(("user", "assistant"))), "text": text}]
    return prompt


def template_variables(template: str) -> list[str]:
    found = []
    for expression in re.findall(r"\{([^{}]*)\}", template):
        body = expression[1:] if expression[:1] in "+#./;?&" else expression
        found += [spec.split(":")[0].rstrip("*") for spec in body.split(",")]
    return found


@st.composite
def completion_entries(
    draw: st.DrawFn, prompts: list[Json], templates: list[Json], wild: bool
) -> list[Json]:
    targets: list[tuple[str, str, list[str]]] = []
    for prompt in prompts:
        arguments = [a["name"] for a in prompt.get("arguments", [])]
        targets.append(("prompt", prompt["name"], arguments))
    for resource in templates:
        variables = template_variables(resource["uriTemplate"])
        targets.append(("resource", resource["uriTemplate"], variables))
        targets.append(("resource", resource["name"], variables))
    targets = [t for t in targets if t[2] or wild]
    found: list[Json] = []
    for _ in range(draw(st.integers(0, 2))):
        if targets and not _rarely(draw, wild):
            kind, ref, arguments = draw(st.sampled_from(targets))
        elif wild:
            kind, ref, arguments = draw(st.sampled_from(("prompt", "resource"))), "nothing", []
        else:
            break
        argument = draw(st.sampled_from(arguments)) if arguments else "missing"
        entry: dict[str, Json] = {kind: ref, "argument": argument}
        if draw(st.booleans()):
            entry["handler"] = True
            if draw(st.booleans()):
                entry["context"] = True  # the stub takes ctx
        else:
            entry["values"] = draw(st.lists(st.sampled_from(("a", "b", "é", "")), max_size=3))
        found.append(entry)
    return found
