"""What tools/list advertises for an imported operation is compact; validation is not.

* the compact input schema of every tool of the real OpenAPI fixtures accepts and rejects
  exactly the arguments the full one does (examples from ``mcpgen.model.examples`` and
  mutations of them);
* the compact output schema accepts every result the full one accepts (rich examples);
* the relaxation's rules (``not``, ``if``, ``oneOf``, closed objects, cycles) one by one;
* the runtime validates arguments and results against the full schemas (``_spec.json``
  ``full``), whatever the advertised definition says.
"""

from __future__ import annotations

import copy
import json
import logging
from functools import cache
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from jsonschema import Draft202012Validator

from mcpgen.check.schemas import refs, resolve_pointer
from mcpgen.model import compact
from mcpgen.model.examples import invalid_example, valid_example
from mcpgen.model.types import Manifest
from mcpgen.pipeline import load_manifest
from mcpgen.runtime.context import Context
from mcpgen.runtime.operation_binding import OperationBinding
from mcpgen.runtime.tools import ToolBinding, ToolTable

pytestmark = pytest.mark.timeout(300)
Json = Any
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "openapi-real"
SPECS = sorted(p.name for p in FIXTURES.glob("*.json"))


@cache
def manifest(name: str) -> Manifest:
    loaded = load_manifest(FIXTURES / name)
    assert loaded.manifest is not None, [str(p) for p in loaded.problems.items]
    return loaded.manifest


# -- examples ----------------------------------------------------------------------------


def _resolve(schema: Json, root: Json) -> Json:
    for _ in range(20):
        if not (isinstance(schema, dict) and isinstance(schema.get("$ref"), str)):
            return schema
        found, schema = resolve_pointer(root, schema["$ref"])
        if not found:
            return {}
    return {}


def rich(schema: Json, root: Json, depth: int = 0, variant: int = 0) -> Json:
    """A value that tries to fill every property (one item per array), or None."""
    schema = _resolve(schema, root)
    if depth > 8 or not isinstance(schema, dict):
        return None
    for key in ("const", "default"):
        if key in schema:
            return copy.deepcopy(schema[key])
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][variant % len(schema["enum"])]
    for key in ("oneOf", "anyOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            return rich(options[variant % len(options)], root, depth + 1, variant)
    if isinstance(schema.get("allOf"), list):
        merged: dict[str, Json] = {}
        for part in schema["allOf"]:
            value = rich(part, root, depth + 1, variant)
            if isinstance(value, dict):
                merged.update(value)
        return merged
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = [k for k in kind if k != "null"][variant % max(1, len(kind) - 1)] if kind else None
    if kind == "object" or "properties" in schema:
        return {
            name: rich(sub, root, depth + 1, variant)
            for name, sub in (schema.get("properties") or {}).items()
        }
    if kind == "array":
        return [rich(schema.get("items", {}), root, depth + 1, variant)]
    return {"string": "text", "integer": 1, "number": 1.5, "boolean": True}.get(str(kind))


def mutations(value: Json, schema: Json) -> list[Json]:
    """Arguments near ``value``: each property with values of other types, left out, set
    to null; an unknown property; the whole thing of another type."""
    out: list[Json] = [[], "text", 3, None]
    if not isinstance(value, dict):
        return out
    names = set(value) | set((schema.get("properties") or {}) if isinstance(schema, dict) else {})
    for name in sorted(names):
        for other in ("x" * 300, "", -1, 2**40, 1.5, True, None, [], {}, ["a"], {"a": 1}):
            out.append({**value, name: other})
        out.append({k: v for k, v in value.items() if k != name})
    out.append({**value, "__extra__": 1})
    return out


def agree(full: Json, advertised: Json, values: list[Json]) -> int:
    strict, shown = Draft202012Validator(full), Draft202012Validator(advertised)
    for value in values:
        assert strict.is_valid(value) == shown.is_valid(value), (value, full, advertised)
    return len(values)


# -- the fixtures ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", SPECS)
def test_compact_and_full_input_schemas_accept_and_reject_the_same_arguments(name: str) -> None:
    tools = [t for t in manifest(name).tools if t.http is not None]
    assert tools and all(t.advertised for t in tools)
    checked = accepted = 0
    for tool in tools:
        full, shown = tool.input_schema, tool.definition["inputSchema"]
        seeds = [valid_example(full), invalid_example(full), valid_example(shown)]
        seeds += [invalid_example(shown), rich(full, full), rich(full, full, variant=1)]
        values = [s for s in seeds if s is not None]
        for seed in list(values):
            values += mutations(seed, full)
        checked += agree(full, shown, values)
        accepted += sum(1 for v in values if Draft202012Validator(full).is_valid(v))
    assert checked > 20 * len(tools) and accepted > len(tools)  # the test sees both answers


@pytest.mark.parametrize("name", SPECS)
def test_compact_output_schemas_accept_every_result_the_full_ones_accept(name: str) -> None:
    tools = [t for t in manifest(name).tools if t.output_schema is not None]
    valid = 0
    for tool in tools:
        full = tool.output_schema
        shown = tool.definition.get("outputSchema")
        if shown is None:
            continue  # nothing advertised: nothing a client could refuse
        relaxed = Draft202012Validator(shown)
        strict = Draft202012Validator(full)
        for value in [valid_example(full), *(rich(full, full, variant=v) for v in range(3))]:
            if value is not None and strict.is_valid(value):
                valid += 1
                assert relaxed.is_valid(value), (tool.name, value, shown)
    assert valid or not tools


def test_advertised_definitions_are_smaller_and_keep_what_a_model_needs() -> None:
    tools = {t.name: t for t in manifest("train-travel-3.1.json").tools}
    full = sum(compact.size(t.full_definition) for t in tools.values())
    shown = sum(compact.size(t.definition) for t in tools.values())
    assert shown < full / 2, (shown, full)
    for tool in tools.values():
        definition = tool.definition
        assert definition["name"] == tool.name
        assert set(definition["inputSchema"].get("properties", {})) == set(
            tool.input_schema.get("properties", {})
        )
        assert definition["inputSchema"].get("required") == tool.input_schema.get("required")
        assert "title" not in definition  # said at the start of the description
        if tool.title:
            assert definition["description"].startswith(tool.title.rstrip("."))
        assert len(definition.get("description", "")) <= compact.DESCRIPTION_CHARS
        assert compact.size(definition.get("outputSchema", {})) <= compact.OUTPUT_BUDGET


def test_the_manifest_can_turn_compaction_off_or_tune_it(tmp_path: Path) -> None:
    spec = FIXTURES / "train-travel-3.1.json"
    (tmp_path / "api.json").write_text(spec.read_text("utf-8"), "utf-8")
    results = {}
    for label, option in (("off", "false"), ("tuned", "{outputSchema: 0, description: 40}")):
        path = tmp_path / f"{label}.yaml"
        path.write_text(
            f"mcpgen: 1\nserver: {{name: travel}}\nopenapi: {{source: api.json, compact: {option}}}\n"
        )
        loaded = load_manifest(path)
        assert loaded.manifest is not None, [str(p) for p in loaded.problems.items]
        results[label] = loaded.manifest.tools
    assert all(t.definition == t.full_definition for t in results["off"])
    assert all("outputSchema" not in t.definition for t in results["tuned"])
    assert all(len(t.definition.get("description", "")) <= 40 for t in results["tuned"])
    assert any(t.output_schema is not None for t in results["tuned"])  # still validated


# -- the rules ------------------------------------------------------------------------------


def test_sharing_inlines_single_uses_and_keeps_shared_and_recursive_definitions() -> None:
    node = {"type": "object", "properties": {"children": {"$ref": "#/$defs/Nodes"}}}
    big = {"type": "object", "properties": {f"field{i}": {"type": "string"} for i in range(6)}}
    schema = {
        "type": "object",
        "properties": {
            "once": {"$ref": "#/$defs/Once", "description": "used once"},
            "a": {"$ref": "#/$defs/Big"},
            "b": {"type": "array", "items": {"$ref": "#/$defs/Big"}},
            "tree": {"$ref": "#/$defs/Node"},
        },
        "$defs": {
            "Once": {"type": "string", "minLength": 2},
            "Big": big,
            "Node": node,
            "Nodes": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
            "Unused": {"type": "integer"},
        },
    }
    shared = compact.share(schema)
    assert shared["properties"]["once"] == {
        "type": "string",
        "minLength": 2,
        "description": "used once",
    }
    assert set(shared["$defs"]) == {"Big", "Node", "Nodes"}
    values = [
        {"once": "ab", "a": {"field1": "x"}, "b": [{"field2": "y"}], "tree": {"children": [{}]}},
        {"once": "a"},
        {"a": {"field1": 3}},
        {"tree": {"children": [{"children": [{"children": 5}]}]}},
        {"b": [{"field5": None}]},
    ]
    agree(schema, shared, values)


def test_a_reference_with_constraints_beside_it_is_inlined_without_losing_them() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"$ref": "#/$defs/N", "maximum": 5}},
        "$defs": {"N": {"type": "integer", "minimum": 1}},
    }
    shared = compact.share(schema)
    assert "$defs" not in shared
    agree(schema, shared, [{"n": 0}, {"n": 1}, {"n": 5}, {"n": 6}, {"n": "1"}])


@pytest.mark.parametrize("word", ["default", "enum", "const", "examples"])
def test_a_property_named_like_a_data_keyword_is_a_schema_like_any_other(word: str) -> None:
    big = {"type": "object", "properties": {f"field{i}": {"type": "string"} for i in range(6)}}
    for names in ([word], [word, "other"]):  # used once: inlined; twice: kept
        schema = {
            "type": "object",
            "properties": {name: {"$ref": "#/$defs/Big"} for name in names},
            "$defs": {"Big": big},
        }
        shared = compact.share(schema)
        assert ("$defs" in shared) == (len(names) == 2), shared
        assert all(resolve_pointer(shared, ref)[0] for _, ref in refs(shared)), shared
        agree(schema, shared, [{word: {"field1": "x"}}, {word: {"field1": 1}}, {"other": 2}])


def test_strip_keeps_validation_and_drops_what_no_validator_reads() -> None:
    schema = {
        "type": "object",
        "title": "Thing",
        "properties": {
            "title": {"type": "string", "title": "Title", "examples": ["x"], "x-internal": 1},
            "count": {"type": "integer", "format": "int64", "description": "Count"},
            "url": {
                "type": "string",
                "format": "uri",
                "description": "See [the docs](https://x.example/very/long).",
            },
        },
        "required": ["title"],
    }
    stripped = compact.strip(schema)
    assert stripped["properties"]["title"] == {"type": "string"}  # the property, not the keyword
    assert stripped["properties"]["count"] == {"type": "integer"}  # says only its name
    assert stripped["properties"]["url"]["description"] == "See the docs."
    assert stripped["required"] == ["title"] and "title" not in stripped


def relaxed_accepts(schema: Json, values: list[Json], depth: int = 0, **options: Any) -> Json:
    relaxed = compact.relax(schema, depth, **options)
    strict, loose = Draft202012Validator(schema), Draft202012Validator(relaxed)
    for value in values:
        if strict.is_valid(value):
            assert loose.is_valid(value), (value, relaxed)
    return relaxed


def test_relaxation_never_refuses_what_the_full_schema_accepts() -> None:
    schema = {
        "type": "object",
        "properties": {
            "kind": {
                "oneOf": [{"type": "string", "maxLength": 3}, {"type": "string", "minLength": 2}]
            },
            "closed": {
                "type": "object",
                "properties": {"a": {"type": "object", "properties": {"b": {"type": "integer"}}}},
                "additionalProperties": False,
            },
            "unless": {
                "not": {"type": "object", "properties": {"x": {"const": 1}}, "required": ["x"]}
            },
            "cond": {
                "if": {"properties": {"t": {"const": "a"}}},
                "then": {"required": ["a"]},
                "else": {"required": ["b"]},
            },
            "tags": {
                "type": "array",
                "items": {"type": "string", "pattern": "^[a-z]+$"},
                "maxItems": 2,
            },
            "loop": {"$ref": "#/$defs/Loop"},
            "map": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}},
        },
        "required": ["kind"],
        "unevaluatedProperties": False,
        "$defs": {"Loop": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Loop"}}}},
    }
    values = [
        {"kind": "ab"},  # both oneOf members: invalid in full, may pass relaxed
        {"kind": "abcd"},
        {"kind": "a", "closed": {"a": {"b": 1}}},
        {"kind": "a", "unless": {"x": 2}},
        {"kind": "a", "cond": {"t": "a", "a": 1}},
        {"kind": "a", "cond": {"t": "b", "b": 1}},
        {"kind": "a", "tags": ["ab", "cd"]},
        {"kind": "a", "loop": {"next": {"next": {}}}},
        {"kind": "a", "map": {"x": 1}},
    ]
    assert sum(Draft202012Validator(schema).is_valid(v) for v in values) >= 7
    for depth in (-1, 0, 1, 2):
        for options in ({}, {"chars": 20}, {"required_only": True}):
            relaxed_accepts(schema, values, depth, **options)
    top = compact.relax(schema, 0)
    assert top["properties"]["closed"] == {"type": "object"}
    assert "unevaluatedProperties" not in top and top["required"] == ["kind"]
    # a reference to itself in place (no level between) ends as "anything", not a hang
    endless = {"$ref": "#/$defs/L", "$defs": {"L": {"allOf": [{"$ref": "#/$defs/L"}]}}}
    assert compact.relax(endless, 3) == {}


def test_output_schemas_fit_their_budget_and_keep_the_top_level_types() -> None:
    fields = {f"field_{i}": {"type": "string", "description": "x" * 80} for i in range(4)}
    schema = {"type": "object", "properties": {**fields, "owner": {"$ref": "#/$defs/User"}}}
    schema["$defs"] = {"User": {"type": "object", "properties": {"login": {"type": "string"}}}}
    shown = compact.compact_output(schema, 200)
    assert compact.size(shown) <= 200
    assert set(shown["properties"]) == {*fields, "owner"}
    assert shown["properties"]["owner"]["type"] == "object"
    inner = {k: v for k, v in schema.items() if k != "$defs"}
    wrapped = {"type": "object", "properties": {"result": {"type": "array", "items": inner}}}
    wrapped["$defs"] = schema["$defs"]
    listed = compact.compact_output(wrapped, 150, wrapped=True)
    assert listed["properties"]["result"]["type"] == "array" and compact.size(listed) <= 150
    assert compact.compact_output({"type": "object"}, 100) == {"type": "object"}


def every_rung(schema: Json, budget: int, wrapped: bool) -> Json:
    """``compact_output`` without its shortcuts: each relaxation tried in order."""
    stripped = compact.strip(schema, compact.OUTPUT_DESCRIPTION_CHARS)
    equivalent = compact.share(stripped)
    if compact.size(equivalent) <= budget:
        return equivalent
    chars = compact.OUTPUT_DESCRIPTION_CHARS
    for depth, shown, required_only in (
        *((depth, shown, False) for depth in (2, 1, 0) for shown in (chars, 0)),
        (0, 0, True),
    ):
        relaxed = compact.relax(
            stripped, depth, wrapped=wrapped, chars=shown, required_only=required_only
        )
        if compact.size(relaxed) <= budget:
            return relaxed
    return compact.relax(stripped, -1, wrapped=wrapped)


@pytest.mark.parametrize("name", SPECS)
def test_the_output_budget_shortcuts_pick_the_rung_trying_every_one_would(name: str) -> None:
    """``compact_output`` skips rungs that cannot fit (``relax.floor``; a rung with
    descriptions when the same depth without them is over): the result is the same."""
    outputs = [t.output_schema for t in manifest(name).tools if isinstance(t.output_schema, dict)]
    wrappers = [
        {"type": "object", "properties": {"result": s}, "required": ["result"]} for s in outputs
    ]
    for budget in (40, 100, 300, 1000):
        for schema, wrapped in [*((s, False) for s in outputs), *((w, True) for w in wrappers)]:
            assert compact.compact_output(schema, budget, wrapped) == every_rung(
                schema, budget, wrapped
            )


def test_annotations_equal_to_mcp_defaults_are_left_out() -> None:
    assert (
        compact.tool_annotations(
            {"readOnlyHint": False, "idempotentHint": False, "openWorldHint": True}
        )
        is None
    )
    assert compact.tool_annotations(
        {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": True}
    ) == {"readOnlyHint": True}
    assert compact.tool_annotations(
        {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True}
    ) == {"idempotentHint": True}
    assert compact.tool_annotations({"openWorldHint": False}) == {"openWorldHint": False}


def test_descriptions_are_whole_when_short_and_cut_at_a_word_when_long() -> None:
    assert compact.description("Short and sweet.") == "Short and sweet."
    long = "First paragraph says what it does.\n\n" + "More words here. " * 30
    assert compact.description(long, 60) == "First paragraph says what it does."
    cut = compact.shorten("word " * 40, 50)
    assert len(cut) <= 50 and cut.endswith("…") and "wor…" not in cut


# -- the runtime validates with the full schemas ---------------------------------------------------


def dispatch(binding: ToolBinding, arguments: dict[str, Json]) -> types.CallToolResult:
    from mcpgen.runtime.identity import LOCAL

    tools = ToolTable([binding])
    context = Context(None, identity=LOCAL)  # type: ignore[arg-type]

    async def go() -> types.CallToolResult:
        result = await tools.dispatch(binding.name, arguments, context)
        assert isinstance(result, types.CallToolResult)
        return result

    return anyio.run(go)


FULL_INPUT = {
    "type": "object",
    "properties": {"n": {"type": "integer", "maximum": 3}},
    "required": ["n"],
}
FULL_OUTPUT = {
    "type": "object",
    "properties": {"items": {"type": "array", "items": {"type": "integer"}}},
    "required": ["items"],
}


def binding(answer: Json, strict: bool) -> ToolBinding:
    async def call(arguments: Any, context: Any) -> Json:
        return answer

    definition = {
        "name": "op",
        "inputSchema": {"type": "object"},  # what a compact definition might show
        "outputSchema": {"type": "object"},
    }
    full = {"inputSchema": FULL_INPUT, "outputSchema": FULL_OUTPUT}
    return OperationBinding(definition, call, full_schemas=full, strict_output=strict)


def test_arguments_are_validated_against_the_full_input_schema() -> None:
    assert "maximum" in dispatch(binding({"items": []}, False), {"n": 9}).content[0].text  # type: ignore[union-attr]
    assert dispatch(binding({"items": []}, False), {}).is_error
    assert not dispatch(binding({"items": [1]}, False), {"n": 2}).is_error


def test_results_are_checked_against_the_full_output_schema(
    caplog: pytest.LogCaptureFixture,
) -> None:
    wrong = {"items": ["not a number"]}
    refused = dispatch(binding(wrong, True), {"n": 1})
    assert refused.is_error and "output schema" in refused.content[0].text  # type: ignore[union-attr]
    with caplog.at_level(logging.WARNING, logger="mcp_server"):
        passed = dispatch(binding(wrong, False), {"n": 1})
    assert not passed.is_error and passed.structured_content == wrong  # the API's answer
    assert any("output schema refuses" in r.getMessage() for r in caplog.records)


def test_the_spec_keeps_the_full_parts_and_search_reads_them() -> None:
    from mcpgen.render.spec import search_json, spec_data
    from mcpgen.runtime.search import SearchIndex, docs_from_spec

    m = manifest("train-travel-3.1.json")
    data = spec_data(m)
    entries = {e["definition"]["name"]: e for e in data["tools"]}
    for tool in m.tools:
        entry = entries[tool.name]
        merged = {**entry["definition"], **entry.get("full", {})}
        assert merged["inputSchema"] == tool.input_schema
        assert merged.get("outputSchema") == tool.output_schema
        assert merged.get("description") == tool.description
    docs = {d.name: d for d in docs_from_spec(data)}
    assert all(docs[t.name].description == (t.description or "") for t in m.tools)
    assert search_json(data) is None  # tools mode: no index to ship
    index = json.loads(search_json({**data, "mode": "code"}) or "{}")
    assert SearchIndex(docs_from_spec(data), data=index).loaded


def test_tools_list_sends_the_compact_definitions() -> None:
    """What a client receives is the advertised definition, byte for byte as compact JSON
    (what ``bench/bytes_compact.py`` measures in-process)."""
    from mcp.client import Client

    from mcpgen.render.spec import spec_data
    from mcpgen.runtime.server import Handlers, build_server

    m = manifest("train-travel-3.1.json")
    server = build_server(spec_data(m), Handlers())

    async def listed() -> list[Json]:
        async with Client(server, mode="legacy") as client:
            page = await client.list_tools()
            return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in page.tools]

    sent = {t["name"]: t for t in anyio.run(listed)}
    assert set(sent) == {t.name for t in m.tools}
    for tool in m.tools:
        assert sent[tool.name] == tool.definition
        assert compact.size(sent[tool.name]) == compact.size(tool.definition)
        assert compact.size(sent[tool.name]) < compact.size(tool.full_definition)


def test_a_property_named_default_keeps_its_definition_from_build_to_tools_list(
    tmp_path: Path,
) -> None:
    """An imported body property called ``default`` that ``$ref``s a component: the package
    builds, and the schemas its ``_spec.json`` holds and tools/list sends all resolve."""
    from click.testing import CliRunner
    from mcp.client import Client

    from mcpgen.cli import main
    from mcpgen.runtime.server import Handlers, build_server
    from mcpgen.runtime.spec import unshare_defs

    body = {"type": "object", "properties": {"default": {"$ref": "#/components/schemas/C"}}}
    operation = {
        "operationId": "pick",
        "requestBody": {"content": {"application/json": {"schema": body}}},
        "responses": {"200": {"description": "ok"}},
    }
    api = {
        "openapi": "3.1.0",
        "info": {"title": "Picker", "version": "1"},
        "servers": [{"url": "https://picker.example"}],
        "paths": {"/pick": {"post": operation}},
        "components": {"schemas": {"C": {"type": "string", "minLength": 1}}},
    }
    (tmp_path / "api.json").write_text(json.dumps(api))
    manifest_file = tmp_path / "mcpgen.yaml"
    manifest_file.write_text(
        "mcpgen: 1\nserver: {name: picker, version: 0.1.0}\nopenapi: {source: api.json}\n"
    )
    built = CliRunner().invoke(main, ["build", str(manifest_file), "-o", str(tmp_path / "out")])
    assert built.exit_code == 0, built.output
    spec = unshare_defs(json.loads(next(tmp_path.glob("out/src/*/_spec.json")).read_text()))

    async def listed() -> list[Json]:
        async with Client(build_server(spec, Handlers()), mode="legacy") as client:
            page = await client.list_tools()
            return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in page.tools]

    (sent,) = anyio.run(listed)
    for schema in (sent["inputSchema"], spec["tools"][0]["full"]["inputSchema"]):
        assert all(resolve_pointer(schema, ref)[0] for _, ref in refs(schema)), schema
        check = Draft202012Validator(schema)
        assert check.is_valid({"default": "a"}) and not check.is_valid({"default": ""})
