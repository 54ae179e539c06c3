"""The strict-model fast path: which schemas qualify, and why that is sound.

``mcpgen.model.fastpath.strict_model_exact`` decides at build time; a generated server
then skips jsonschema for a call whose arguments the input model accepts in strict mode
(and which hold no null and no NaN, see ``runtime.tools._strictly``). The
property tests below build the real models with datamodel-code-generator (mcpgen's own ``modelgen``) and check, on arbitrary
JSON arguments, that the server's fast path accepting implies the JSON Schema accepting,
and that the handler receives the same model the slow path would have built.

Each property runs 300 examples; set MCPGEN_FUZZ_EXAMPLES=5000 for a longer hunt.
"""

from __future__ import annotations

import ast
import keyword
import math
import os
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from pydantic import BaseModel

from mcpgen.model.fastpath import plain_field_name, strict_model_exact
from mcpgen.pipeline import load_manifest
from mcpgen.render.models import combined_document, generator_options, run_generator

ROOT = Path(__file__).resolve().parent.parent
BASE = "fastpath_base"  # the generated package's models/_base.py, as a module of its own


def _run(models: dict[str, Any], shared: dict[str, Any]) -> str:
    """The models' source as a build generates it, deriving from the package's base class
    (the template's own text, loaded as module ``fastpath_base``)."""
    if BASE not in sys.modules:
        text = (ROOT / "templates/package/models_base.py.jinja").read_text()
        base = types.ModuleType(BASE)
        exec(text.split("\n", 1)[1], base.__dict__)  # less the header include
        sys.modules[BASE] = base
    return run_generator(combined_document(models, shared), generator_options(BASE))


EXAMPLES = int(os.environ.get("MCPGEN_FUZZ_EXAMPLES", "300"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def obj(properties: dict[str, Any], required: tuple[str, ...] = (), **more: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties, **more}
    if required:
        schema["required"] = list(required)
    return schema


# -- the decision ------------------------------------------------------------------------

EXACT: dict[str, Any] = {
    "empty": {"type": "object"},
    "empty properties": obj({}, additionalProperties=False),
    "numbers": obj(
        {"numbers": {"type": "array", "items": {"type": "number"}, "minItems": 2}},
        ("numbers",),
        additionalProperties=False,
    ),
    "integer bounds": obj(
        {"n": {"type": "integer", "minimum": 0, "maximum": 12, "default": 6}},
        additionalProperties=False,
    ),
    "exclusive bounds": obj({"n": {"type": "integer", "exclusiveMinimum": -1}}),
    "strings": obj(
        {
            "s": {"type": "string", "minLength": 1, "maxLength": 3, "description": "d"},
            "e": {"type": "string", "enum": ["a", "b"]},
            "f": {"type": "string", "format": "iri"},
            "u": {"type": "string", "format": "uri-reference"},
        }
    ),
    "nullable": obj(
        {
            "s": {"type": ["string", "null"]},
            "n": {"type": ["null", "number"]},
            "o": {"type": ["object", "null"], "properties": {"x": {"type": "boolean"}}},
        }
    ),
    "anything": obj({"a": {}, "b": {"description": "whatever"}}),
    "nested": obj(
        {
            "point": obj({"x": {"type": "integer"}}, ("x",), additionalProperties=False),
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
            "bag": {"type": "object", "additionalProperties": True},
        }
    ),
    "refs": {
        **obj({"a": {"$ref": "#/$defs/Num", "description": "d"}, "b": {"$ref": "#/$defs/Num"}}),
        "$defs": {"Num": {"type": "number"}},
    },
    "ref chain": {
        **obj({"p": {"$ref": "#/$defs/Pair"}}),
        "$defs": {
            "Pair": obj({"left": {"$ref": "#/$defs/Num"}, "right": {"$ref": "#/$defs/Num"}}),
            "Num": {"type": "number"},
        },
    },
    "camelCase names": obj({"maxResults": {"type": "integer"}, "id": {"type": "string"}}),
    "annotations": obj(
        {"x": {"type": "boolean", "title": "X", "examples": [True], "deprecated": False}},
        description="d",
        title="T",
        **{"$comment": "c"},
    ),
}

NOT_EXACT: dict[str, Any] = {
    "not an object": {"type": "array"},
    "no type": {"properties": {}},
    "pattern": obj({"s": {"type": "string", "pattern": "^a"}}),
    "const": obj({"s": {"const": "a"}}),
    "oneOf": obj({"s": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}),
    "anyOf": obj({"s": {"anyOf": [{"type": "string"}, {"type": "null"}]}}),
    "allOf": obj({"s": {"allOf": [{"type": "string"}]}}),
    "not": obj({"s": {"not": {"type": "string"}}}),
    "if/then": obj({"s": {"type": "string", "if": {}, "then": {}}}),
    "dependentRequired": obj({"a": {"type": "string"}}, dependentRequired={"a": ["b"]}),
    "patternProperties": obj({}, patternProperties={"^x": {"type": "string"}}),
    "additionalProperties schema": obj({}, additionalProperties={"type": "string"}),
    "multipleOf": obj({"n": {"type": "integer", "multipleOf": 2}}),
    "number bounds": obj({"n": {"type": "number", "minimum": 0}}),
    "float bound on integer": obj({"n": {"type": "integer", "minimum": 0.5}}),
    "bool bound on integer": obj({"n": {"type": "integer", "exclusiveMinimum": True}}),
    "uniqueItems": obj({"a": {"type": "array", "uniqueItems": True}}),
    "prefixItems": obj({"a": {"type": "array", "prefixItems": [{"type": "string"}]}}),
    "contains": obj({"a": {"type": "array", "contains": {"type": "string"}}}),
    "enum with length": obj({"s": {"type": "string", "enum": ["ab"], "minLength": 3}}),
    "enum of numbers": obj({"s": {"type": "string", "enum": [1]}}),
    "integer enum": obj({"n": {"type": "integer", "enum": [1, 2]}}),
    "format with length": obj({"s": {"type": "string", "format": "uri", "maxLength": 3}}),
    # a plain str in the model, whose format the server checks ("x" is not an email)
    "format email": obj({"s": {"type": "string", "format": "email"}}),
    "format hostname": obj({"s": {"type": "string", "format": "hostname"}}),
    # AnyUrl in the model takes a str: the server checks it ("example.com" is no URI)
    "format uri": obj({"s": {"type": "string", "format": "uri"}}),
    "format binary": obj({"s": {"type": "string", "format": "binary"}}),
    "format decimal": obj({"s": {"type": "string", "format": "decimal"}}),
    "unknown format": obj({"s": {"type": "string", "format": "x-mine"}}),
    "two types": obj({"s": {"type": ["string", "integer"]}}),
    "null alone": obj({"s": {"type": "null"}}),
    "unknown keyword": obj({"s": {"type": "string", "x-mcp-header": "Region"}}),
    "false schema": obj({"s": False}),
    "required not a property": obj({"a": {"type": "string"}}, ("b",)),
    "alias from": obj({"from": {"type": "string"}}),
    "alias dash": obj({"x-y": {"type": "string"}}),
    "alias underscore": obj({"_a": {"type": "string"}}),
    "alias model_": obj({"model_name": {"type": "string"}}),
    "alias BaseModel method": obj({"copy": {"type": "string"}}),
    "alias builtin type": obj({"str": {"type": "string"}}),
    "capitalised": obj({"Name": {"type": "string"}}),
    "nested alias": obj({"p": obj({"class": {"type": "string"}})}),
    "ref missing": obj({"a": {"$ref": "#/$defs/Nope"}}),
    "ref definitions": {**obj({"a": {"$ref": "#/definitions/A"}}), "definitions": {"A": {}}},
    "ref into a def": {
        **obj({"a": {"$ref": "#/$defs/A/properties/x"}}),
        "$defs": {"A": obj({"x": {"type": "string"}})},
    },
    "ref with a sibling constraint": {
        **obj({"a": {"$ref": "#/$defs/S", "maxLength": 2}}),
        "$defs": {"S": {"type": "string"}},
    },
    "ref to an inexact def": {
        **obj({"a": {"$ref": "#/$defs/S"}}),
        "$defs": {"S": {"type": "string", "pattern": "x"}},
    },
    "self cycle": {
        **obj({"tree": {"$ref": "#/$defs/Tree"}}),
        "$defs": {"Tree": obj({"children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}})},
    },
    "mutual cycle": {
        **obj({"a": {"$ref": "#/$defs/A"}}),
        "$defs": {
            "A": obj({"b": {"$ref": "#/$defs/B"}}),
            "B": obj({"a": {"$ref": "#/$defs/A"}}),
        },
    },
    "$schema": {**obj({}), "$schema": "https://json-schema.org/draft/2020-12/schema"},
    "nested $defs": obj({"a": {"type": "object", "$defs": {}}}),
}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_exact(name: str) -> None:
    assert strict_model_exact(EXACT[name])


@pytest.mark.parametrize("name", sorted(NOT_EXACT))
def test_not_exact(name: str) -> None:
    assert not strict_model_exact(NOT_EXACT[name])


def test_a_cycle_elsewhere_does_not_poison_a_diamond() -> None:
    """The same definition used twice (not a cycle) is fine; the check memoizes it."""
    schema = {
        **obj({"a": {"$ref": "#/$defs/P"}, "b": {"$ref": "#/$defs/P"}}),
        "$defs": {"P": obj({"x": {"$ref": "#/$defs/N"}, "y": {"$ref": "#/$defs/N"}}), "N": {}},
    }
    assert strict_model_exact(schema)


def test_a_local_definition_shadowing_a_shared_one_is_refused() -> None:
    """modelgen builds the model from the shared definition, the schema uses the local one."""
    schema = {**obj({"a": {"$ref": "#/$defs/N"}}), "$defs": {"N": {"type": "number"}}}
    assert strict_model_exact(schema, {"N": {"type": "number"}})
    assert not strict_model_exact(schema, {"N": {"type": "string"}})


def test_example_manifests() -> None:
    """The calculator's tools: ``from`` (an alias) keeps convert_units on the slow path."""
    loaded = load_manifest(ROOT / "manifests" / "calculator.yaml")
    assert loaded.manifest is not None
    exact = {t.name: t.strict_model_exact for t in loaded.manifest.tools}
    assert exact == {
        "add": True,
        "divide": True,
        "convert_units": False,
        "weather_current": True,
        "random_fact": True,
    }
    outputs = {t.name: t.strict_output_exact for t in loaded.manifest.tools}
    assert outputs == {  # random_fact declares no output schema
        "add": True,
        "divide": True,
        "convert_units": True,
        "weather_current": True,
        "random_fact": False,
    }


CANDIDATE_NAMES = sorted(
    {n for n in dir(__builtins__ if isinstance(__builtins__, dict) else vars(__builtins__))}
    | set(keyword.kwlist)
    | set(dir(BaseModel))
    | {
        "name", "id", "type", "format", "filter", "input", "max", "min", "sum", "query",
        "limit", "value", "values", "items", "keys", "get", "date", "time", "datetime",
        "field", "fields", "schema", "copy", "json", "dict", "match", "case", "self",
        "maxResults", "x_y", "a_", "Number", "number", "Any", "Field", "Literal", "annotations",
        "typing", "pydantic", "uuid", "decimal", "enum", "mro", "register", "construct",
    }
)  # fmt: skip


def test_names_the_rule_accepts_are_kept_by_the_generator() -> None:
    """Every name ``plain_field_name`` accepts comes out of datamodel-code-generator as the
    field name with no alias, next to fields whose types are builtins it might shadow."""
    accepted = [n for n in CANDIDATE_NAMES if plain_field_name(n)]
    assert {"name", "id", "query", "maxResults", "format"} <= set(accepted)
    kinds = [
        {"type": "string"},
        {"type": "integer"},
        {"type": "number"},
        {"type": "boolean"},
        {"type": "array", "items": {"type": "string"}},
        {"type": "object"},
        obj({"x": {"type": "integer"}}),
    ]
    properties = {n: kinds[i % len(kinds)] for i, n in enumerate(accepted)}
    source = _run({"NamesInput": obj(properties, additionalProperties=False)}, {})
    assert "alias" not in source
    module = load_models(source)
    model = module.NamesInput
    assert set(model.model_fields) == set(accepted)
    assert all(f.alias is None and f.validation_alias is None for f in model.model_fields.values())


# -- soundness on arbitrary arguments ----------------------------------------------------

PROPERTY_SCHEMAS: dict[str, Any] = {
    "AddInput": EXACT["numbers"],
    "DivideInput": obj(
        {
            "a": {"type": "number"},
            "b": {"type": "number"},
            "precision": {"type": "integer", "minimum": 0, "maximum": 12, "default": 6},
        },
        ("a", "b"),
        additionalProperties=False,
    ),
    "TextInput": obj(
        {
            "name": {"type": "string", "minLength": 1, "maxLength": 3},
            "kind": {"type": "string", "enum": ["a", "bb"], "default": "a"},
            "email": {"type": "string", "format": "iri"},
            "url": {"type": "string", "format": "uri-reference"},
            "when": {"type": "string", "format": "date-time"},
            "note": {"type": ["string", "null"], "maxLength": 2},
            "flag": {"type": "boolean"},
        },
        ("name",),
    ),
    "NestedInput": {
        **obj(
            {
                "point": obj(
                    {"x": {"type": "integer", "exclusiveMinimum": 0}, "y": {"type": "number"}},
                    ("x",),
                    additionalProperties=False,
                ),
                "points": {"type": "array", "items": {"$ref": "#/$defs/Pt"}, "maxItems": 2},
                "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                "bag": {"type": "object"},
                "closed": {"type": "object", "additionalProperties": False},
                "anything": {},
                "maybe": {"type": ["integer", "null"]},
                "maybeList": {"type": ["array", "null"], "items": {"type": ["boolean", "null"]}},
                "maybeObj": {"type": ["object", "null"], "properties": {"x": {"type": "integer"}}},
            },
            ("point",),
            additionalProperties=False,
        ),
        "$defs": {"Pt": obj({"x": {"type": "integer"}}, ("x",), additionalProperties=False)},
    },
}
KEYS = sorted(
    {"numbers", "a", "b", "precision", "name", "kind", "email", "url", "when", "note", "flag"}
    | {"point", "points", "tags", "bag", "closed", "anything", "maybe", "maybeList", "maybeObj"}
    | {"x", "y", "z", "from", "from_", "model_x"}
)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-3, max_value=14)
    | st.integers()
    | st.floats(allow_nan=False)
    | st.sampled_from([0.0, 1.0, 2.5, -1.0, 13.0])
    | st.sampled_from(["", "a", "bb", "ccc", "dddd", "a@b.c", "http://x", "2020-01-01T00:00:00Z"])
    | st.text(max_size=5)
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=3), inner, max_size=4),
    max_leaves=12,
)
ARGUMENTS = st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=3), JSON, max_size=6)
# Where regular expressions and string lengths tend to disagree: marks, connectors, digits
# of other scripts, astral characters, line ends.
ODD = st.characters(categories=["Mn", "Mc", "Pc", "Nd", "Lo", "Cs", "Zs"]) | st.sampled_from(
    ["\n", "\r", "\u2028", "\U0001f600", "a", "_"]
)
FORMAT_VALUES = ["a@b.c", "x", "http://x", "http://", "2020-01-01T00:00:00Z", "2020-01-01"]


def near(schema: Any, defs: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values close to ``schema``: mostly almost valid (boundary lengths and bounds, the
    wrong one of int/float/bool, null, missing or extra keys), sometimes anything at all."""
    return st.one_of(_near(schema, defs), _near(schema, defs), st.none(), JSON)


def _near(schema: Any, defs: dict[str, Any]) -> st.SearchStrategy[Any]:
    if "$ref" in schema:
        return st.deferred(lambda: near(defs[schema["$ref"].rsplit("/", 1)[1]], defs))
    kind = schema.get("type")
    if kind is None:
        return JSON
    if isinstance(kind, list):
        other = next(k for k in kind if k != "null")
        return st.none() | _near({**schema, "type": other}, defs)
    if kind == "object":
        properties = {k: near(v, defs) for k, v in schema.get("properties", {}).items()}
        required = set(schema.get("required", []))
        shaped = st.fixed_dictionaries(
            {k: v for k, v in properties.items() if k in required},
            optional={k: v for k, v in properties.items() if k not in required},
        )
        # extra keys: random ones, and the names the generator would give an aliased field
        aliases = [f"{k}_" for k in properties] or ["x_"]
        names = st.sampled_from(aliases) | st.sampled_from(KEYS) | st.text(max_size=3)
        extra = st.dictionaries(names, near({}, defs), max_size=2)
        loose = st.builds(
            lambda a, b: {**b, **a}, st.fixed_dictionaries({}, optional=properties), extra
        )
        return st.one_of(shaped, shaped, st.builds(lambda a, b: {**b, **a}, shaped, extra), loose)
    if kind == "string":
        if "enum" in schema:
            return st.sampled_from(schema["enum"]) | st.text(max_size=3)
        if "format" in schema:
            return st.sampled_from(FORMAT_VALUES) | st.text(max_size=4)
        low = max(0, schema.get("minLength", 0) - 1)
        high = schema.get("maxLength", 4) + 1
        return st.text(min_size=low, max_size=high) | st.text(ODD, min_size=low, max_size=high)
    if kind == "integer":
        low = min((schema[k] for k in ("minimum", "exclusiveMinimum") if k in schema), default=-3)
        high = max((schema[k] for k in ("maximum", "exclusiveMaximum") if k in schema), default=3)
        ints = st.integers(min_value=low - 1, max_value=high + 1)
        return ints | ints.map(float) | st.booleans() | st.integers()
    if kind == "number":
        return st.integers() | st.floats() | st.booleans() | st.sampled_from([0, 1.5, 2**64])
    if kind == "boolean":
        return st.booleans() | st.sampled_from([0, 1, "true"])
    if kind == "array":
        items = near(schema["items"], defs) if "items" in schema else JSON
        low = max(0, schema.get("minItems", 0) - 1)
        return st.lists(items, min_size=low, max_size=schema.get("maxItems", 3) + 1)
    raise AssertionError(f"no strategy for {schema}")


def load_models(source: str) -> types.ModuleType:
    module = types.ModuleType("fastpath_models")
    sys.modules[module.__name__] = module
    exec(compile(source, "fastpath_models.py", "exec"), module.__dict__)
    for value in list(vars(module).values()):
        if isinstance(value, type) and issubclass(value, BaseModel) and value is not BaseModel:
            value.model_rebuild(_types_namespace=vars(module))
    return module


@pytest.fixture(scope="module")
def runtime() -> types.ModuleType:
    """The runtime's tool module (its ToolBinding, as a generated server runs it)."""
    from mcpgen.runtime import tools

    return tools


@pytest.fixture(scope="module")
def models() -> types.ModuleType:
    for name, schema in PROPERTY_SCHEMAS.items():
        assert strict_model_exact(schema), name
    source = _run(PROPERTY_SCHEMAS, {})
    assert ast.parse(source)
    return load_models(source)


def binding(runtime: types.ModuleType, model: type[BaseModel], schema: Any) -> Any:
    async def call(arguments: Any, ctx: Any) -> Any:
        raise AssertionError("not called")

    # what the generated server.py hands over: a function that finds the class in models
    return runtime.ToolBinding(
        {"name": "t", "inputSchema": schema}, call, "", strict_model=lambda: model
    )


def same(left: BaseModel, right: BaseModel) -> bool:
    """Equal, field types included (1 == 1.0 would hide an int/float difference)."""
    return repr(left) == repr(right) and left.model_fields_set == right.model_fields_set


def check(runtime: types.ModuleType, models: types.ModuleType, name: str, args: Any) -> None:
    schema = PROPERTY_SCHEMAS[name]
    tool = binding(runtime, getattr(models, name), schema)
    fast = tool.validated(dict(args))
    if fast is None:
        return
    assert Draft202012Validator(schema).is_valid(args), (name, args, fast)
    assert tool.argument_errors(dict(args)) == []
    assert same(fast, getattr(models, name).model_validate(args))  # what the slow path builds


@pytest.mark.parametrize("name", sorted(PROPERTY_SCHEMAS))
@FUZZ
@given(data=st.data())
def test_fast_path_acceptance_implies_schema_acceptance(
    runtime: types.ModuleType, models: types.ModuleType, name: str, data: st.DataObject
) -> None:
    schema = PROPERTY_SCHEMAS[name]
    args = data.draw(_near(schema, schema.get("$defs", {})) | ARGUMENTS)
    if isinstance(args, dict):
        check(runtime, models, name, args)


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("AddInput", {"numbers": [1, 2.5]}),
        ("DivideInput", {"a": 1, "b": 2}),
        ("DivideInput", {"a": 1.5, "b": -2, "precision": 12}),
        ("TextInput", {"name": "ab", "kind": "bb", "email": "x", "url": "http://x"}),
        ("TextInput", {"name": "abc", "zzz": [1, {"q": 2}]}),
        (
            "NestedInput",
            {
                "point": {"x": 1, "y": 2},
                "points": [{"x": 3}],
                "tags": ["a"],
                "bag": {"k": [1]},
                "closed": {},
                "anything": [1, "a"],
                "maybe": 3,
                "maybeList": [True],
                "maybeObj": {"x": 1},
            },
        ),
    ],
)
def test_the_fast_path_takes_ordinary_calls(
    runtime: types.ModuleType, models: types.ModuleType, name: str, args: dict[str, Any]
) -> None:
    """The property above is not vacuous: ordinary valid calls do go the fast way."""
    tool = binding(runtime, getattr(models, name), PROPERTY_SCHEMAS[name])
    assert tool.validated(dict(args)) is not None
    check(runtime, models, name, args)


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("DivideInput", {"a": 1, "b": 2, "precision": None}),  # the model takes it, not the schema
        ("DivideInput", {"a": 1, "b": 2, "precision": 1.0}),  # the schema takes it, strict does not
        ("DivideInput", {"a": True, "b": 2}),
        ("AddInput", {"numbers": [1]}),
        ("TextInput", {"name": "abcd"}),
        ("TextInput", {"name": "a", "when": "2020-01-01T00:00:00Z"}),
        ("NestedInput", {"point": {"x": 1}, "maybe": None}),
    ],
)
def test_the_slow_path_decides_the_rest(
    runtime: types.ModuleType, models: types.ModuleType, name: str, args: dict[str, Any]
) -> None:
    tool = binding(runtime, getattr(models, name), PROPERTY_SCHEMAS[name])
    assert tool.validated(dict(args)) is None


# a valid value of each format both the fast path allows and the server checks
CHECKED_VALUES = {
    "date": "2020-02-29",
    "date-time": "2020-02-29T12:00:00Z",
    "time": "12:00:00Z",
    "uuid": "0b6c1c5e-6a55-4a3e-9a7e-2f1f4a9d3c11",
    "ipv4": "10.0.0.1",
    "ipv6": "::1",
}


def test_no_checked_format_rides_the_fast_path(runtime: types.ModuleType) -> None:
    """A format the server checks that the whitelist allows maps to a type strict mode
    never takes from a str (a date, a UUID, an IP address): a call giving one always meets
    jsonschema's format check. A format added to both lists (``hostname``, a plain str, was)
    must be added here, and is refused unless it too leaves the fast path."""
    from mcpgen.model.fastpath import STRING_FORMATS
    from mcpgen.runtime.schemas import CHECKED_FORMATS

    both = sorted(STRING_FORMATS & CHECKED_FORMATS)
    assert both == sorted(CHECKED_VALUES)
    schema = obj({"f_" + f.replace("-", "_"): {"type": "string", "format": f} for f in both})
    assert strict_model_exact(schema)
    model = load_models(_run({"CheckedInput": schema}, {})).CheckedInput
    tool = binding(runtime, model, schema)
    for name, value in CHECKED_VALUES.items():
        arguments = {"f_" + name.replace("-", "_"): value}
        assert tool.validated(arguments) is None, name  # jsonschema decides
        assert tool.argument_errors(arguments) == [], name  # and takes it


def unsound(runtime: types.ModuleType, model: type[BaseModel], schema: Any, args: Any) -> bool:
    """The fast path takes ``args`` and the schema does not."""
    if not isinstance(args, dict):
        return False
    tool = binding(runtime, model, schema)
    return tool.validated(dict(args)) is not None and not Draft202012Validator(schema).is_valid(
        args
    )


WRONG: dict[str, Any] = {
    # what the whitelist leaves out on purpose, each with the generated model that would
    # wrongly be trusted: a regex (Rust's \w is not Python's), an alias, an optional field
    # whose model takes null (with the runtime's null guard switched off below)
    "PatternInput": obj({"s": {"type": "string", "pattern": "^\\w*$"}}, ("s",)),
    "AliasedInput": obj({"from": {"type": "string"}}, ("from",)),
    "OptionalInput": obj({"n": {"type": "integer"}}, additionalProperties=False),
}


@pytest.mark.parametrize("name", sorted(WRONG))
def test_the_property_has_teeth(
    runtime: types.ModuleType, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """Given a schema outside the whitelist (or no null guard), the same strategies find
    arguments the fast path would take and the schema refuses: the property test can fail."""
    from hypothesis import find

    schema = WRONG[name]
    assert not strict_model_exact(schema) or name == "OptionalInput"
    model = getattr(load_models(_run({name: schema}, {})), name)
    if name == "OptionalInput":
        real = runtime.item_count  # the fast path's null guard off, nothing else
        monkeypatch.setattr(runtime, "item_count", lambda data, or_null=False: real(data))
    strategy = _near(schema, {})
    found = find(
        strategy,
        lambda args: unsound(runtime, model, schema, args),
        settings=settings(max_examples=20000, database=None, deadline=None),
    )
    assert not Draft202012Validator(schema).is_valid(found)


@pytest.mark.parametrize(
    ("name", "data", "fast"),
    [
        ("DivideInput", {"a": 1.5, "b": -2, "precision": 12}, True),
        ("DivideInput", {"a": 1, "b": 2, "precision": None}, False),  # null: jsonschema decides
        ("DivideInput", {"a": 1, "b": 2, "precision": 1.0}, False),  # valid, strict refuses
        ("DivideInput", {"a": 1, "b": 2, "precision": 13}, False),  # invalid
        ("DivideInput", {"a": "1", "b": 2}, False),
        ("AddInput", {"numbers": [1]}, False),
    ],
)
def test_results_the_strict_output_model_accepts_skip_jsonschema(
    runtime: types.ModuleType, models: types.ModuleType, name: str, data: Any, fast: bool
) -> None:
    """The output check takes the same fast path (``outputModel`` in ``_spec.json``): a
    result the strict model accepts is valid without jsonschema; any other is checked."""
    import mcp_types

    schema = PROPERTY_SCHEMAS[name]
    model = getattr(models, name)
    tool = binding(runtime, model, {"type": "object"})
    tool.definition["outputSchema"], tool.output_model = schema, lambda: model
    errors = tool.result_errors(mcp_types.CallToolResult(content=[], structured_content=data))
    assert ("output_validator" not in vars(tool)) is fast  # jsonschema's validator never built
    assert errors == [
        f"{'.'.join(map(str, e.absolute_path)) or '(result)'}: {e.message}"
        for e in Draft202012Validator(schema).iter_errors(data)
    ]


def test_fast_path_guard(runtime: types.ModuleType) -> None:
    def may_take(arguments: Any) -> bool:
        return not runtime.has_non_finite(arguments, or_null=True)

    assert may_take({"a": [1, {"b": "c"}], "d": {}, "e": 1.5})
    assert not may_take({"a": None})
    assert not may_take({"a": [1, [2, None]]})
    assert not may_take({"a": {"b": {"c": None}}})
    for bad in (math.nan, math.inf, -math.inf):  # the strict model takes them; JSON cannot
        assert not may_take({"a": bad}) and not may_take({"a": [{"b": bad}]})
    deep: Any = []
    for _ in range(5000):
        deep = [deep]
    assert may_take({"a": deep})  # iterative: no recursion limit


def most_errors(call: Any) -> tuple[Any, int]:
    """``call()``, and the most errors one ValidationError the fast path caught held (what
    pydantic collected to be thrown away)."""
    from pydantic import ValidationError

    most = [0]

    def trace(frame: Any, event: str, arg: Any) -> Any:
        if event == "exception" and isinstance(arg[1], ValidationError):
            most[0] = max(most[0], arg[1].error_count())
        return trace if frame.f_code.co_name == "_strictly" else None

    old = sys.gettrace()
    sys.settrace(trace)
    try:
        return call(), most[0]
    finally:
        sys.settrace(old)


@pytest.mark.parametrize(
    ("name", "args", "problem"),
    [
        ("AddInput", {"numbers": ["x"] * 400_000}, "numbers.0: 'x' is not of type 'number'"),
        (
            "DivideInput",
            {"a": 1, "b": 2, **{f"k{i}": 1 for i in range(400_000)}},
            "(arguments): Additional properties are not allowed ('k0', 'k1', ",
        ),
    ],
)
def test_a_big_refusal_stops_at_the_first_bad_item(
    runtime: types.ModuleType, models: types.ModuleType, name: str, args: Any, problem: str
) -> None:
    """400,000 bad items (or unknown keys): the fast path refuses them with one error,
    where pydantic collected 400,000 (some 130 MB, 0.27 s, thrown away: jsonschema, which
    keeps 10, explains); a small call still takes the model's own validation alone."""
    tool = binding(runtime, getattr(models, name), PROPERTY_SCHEMAS[name])
    assert most_errors(lambda: tool.validated(args)) == (None, 1)
    assert tool.argument_errors(args)[0].startswith(problem)
    small = {"numbers": ["x", "y", "z"]} if name == "AddInput" else {"a": 1, "b": 2, "c": 3, "d": 4}
    assert most_errors(lambda: tool.validated(small)) == (None, 3 if name == "AddInput" else 2)


@pytest.mark.parametrize("name", sorted(PROPERTY_SCHEMAS))
@FUZZ
@given(data=st.data())
def test_the_checker_refuses_what_the_model_refuses(
    models: types.ModuleType, name: str, data: st.DataObject
) -> None:
    """The first look a big call gets (``runtime/checker.py``) accepts exactly what the
    strict model does: a call it refuses would have been refused."""
    from pydantic import ValidationError

    from mcpgen.runtime.checker import checker

    schema, model = PROPERTY_SCHEMAS[name], getattr(models, name)
    args = data.draw(_near(schema, schema.get("$defs", {})) | ARGUMENTS)
    check = checker(model)
    assert check is not None
    verdicts = []
    for validate in (check, model.model_validate):
        try:
            validate(args, strict=True)
            verdicts.append(True)
        except ValidationError:
            verdicts.append(False)
    assert verdicts[0] == verdicts[1], (args, verdicts)


def _shapes() -> dict[str, type[BaseModel]]:
    """Models whose core schema holds what ``runtime/checker.py`` does not know (a
    validator function, a custom ``__init__``, an alias), and one it does."""
    from pydantic import ConfigDict, Field, field_validator

    class Plain(BaseModel):
        model_config = ConfigDict(extra="forbid")
        xs: list[int]

    class Validator(Plain):
        @field_validator("xs")
        @classmethod
        def same(cls, value: list[int]) -> list[int]:
            return value

    class Init(Plain):
        def __init__(self, **data: Any) -> None:
            super().__init__(**data)

    class Alias(Plain):
        model_config = ConfigDict(validate_by_name=True)
        xs: list[int] = Field(alias="XS")

    return {"plain": Plain, "validator": Validator, "init": Init, "alias": Alias}


@pytest.mark.parametrize("shape", ["validator", "init", "alias", "refused"])
def test_a_shape_the_checker_does_not_know_takes_the_models_path(
    runtime: types.ModuleType, monkeypatch: pytest.MonkeyPatch, shape: str
) -> None:
    """A model whose core schema the checker does not know (or a pydantic-core refusing
    the checker's schema) has no checker: a big call gets the model's own validation as a
    small one does (every error collected), and a valid one its instance."""
    from pydantic_core import SchemaError

    from mcpgen.runtime import checker

    def refuse(*args: Any) -> Any:
        raise SchemaError("unknown key: fail_fast")

    model = _shapes()["plain" if shape == "refused" else shape]
    if shape == "refused":  # (a pydantic-core not knowing fail_fast, say)
        monkeypatch.setattr(checker, "SchemaValidator", refuse)
    else:
        assert checker.checker(_shapes()["plain"]) is not None  # (a plain model has one)
    assert checker.checker(model) is None
    tool = binding(runtime, model, {})
    valid = tool.validated({"xs": list(range(2000))})
    assert valid is not None and valid.xs == list(range(2000))
    assert most_errors(lambda: tool.validated({"xs": ["a"] * 2000})) == (None, 2000)


# A definition used twice (a diamond, on the fast path): its model's core schema is a
# 'definitions' node, from which a TypeAdapter built only a MockValSer, so the checker was
# None and a big bad call collected every error (found by review r13).
SHARED = {
    **obj(
        {"items": {"type": "array", "items": {"$ref": "#/$defs/P"}}, "one": {"$ref": "#/$defs/P"}},
        ("items",),
        additionalProperties=False,
    ),
    "$defs": {"P": obj({"x": {"type": "integer"}}, ("x",), additionalProperties=False)},
}


@pytest.mark.parametrize("bad", ["item", "key"])
def test_a_shared_definition_keeps_the_fail_fast(runtime: types.ModuleType, bad: str) -> None:
    from mcpgen.model.fastpath import strict_model_exact
    from mcpgen.runtime.checker import checker

    assert strict_model_exact(SHARED)  # the fast path takes this schema
    model = load_models(_run({"SharedInput": SHARED}, {})).SharedInput
    tool = binding(runtime, model, SHARED)
    good = {"items": [{"x": i} for i in range(1500)]}
    assert tool.validated(good) is not None  # a big valid call is on the fast path
    args: Any = (
        {"items": [{"x": "bad"}] * 3000}
        if bad == "item"
        else {"items": [{"x": 1}], "one": {"x": 1, **{f"k{i}": 1 for i in range(3000)}}}
    )
    assert most_errors(lambda: tool.validated(args)) == (None, 1)  # (3000 with the TypeAdapter)
    assert checker(model) is not None
