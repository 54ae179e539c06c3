"""Fuzzing the OpenAPI importer: whatever a spec holds, ``import_openapi`` answers with tools
or located problems, never an exception (nor the "internal error" problem it turns one
into), and ``mcpgen build SPEC`` exits 0 or 2 without a traceback.

Inputs: mutations of the real fixtures (keys deleted, values swapped for other types,
``$ref`` cycles and dangling or escaping references, huge and odd unicode names, subtrees
copied elsewhere), OpenAPI-shaped random documents, and plain random JSON.

Each of the four properties runs MCPGEN_FUZZ_EXAMPLES examples (default 500: 2,000
documents, each imported in memory and again through ``load_manifest``), plus
MCPGEN_FUZZ_CLI_CASES (default 6) full builds; ``MCPGEN_FUZZ_EXAMPLES=5000 pytest
tests/test_fuzz_openapi.py`` for a longer hunt.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import json
import os
import random
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import black
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mcpgen.cli import main
from mcpgen.load import MAX_DOCUMENT_BYTES, Document, load_file, load_text
from mcpgen.openapi import OpenAPIImport, import_openapi
from mcpgen.pipeline import Loaded, load_manifest
from mcpgen.problems import InputError, Level

ROOT = Path(__file__).resolve().parent
FIXTURE_FILES = [
    *sorted((ROOT / "fixtures" / "openapi").glob("*.yaml")),
    ROOT / "fixtures" / "openapi-e2e" / "shop.yaml",
]
FIXTURES = {
    path.name: load_file(path, MAX_DOCUMENT_BYTES).data
    for path in FIXTURE_FILES
    if isinstance(load_file(path, MAX_DOCUMENT_BYTES).data, dict)
}
EXAMPLES = int(os.environ.get("MCPGEN_FUZZ_EXAMPLES", "500"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)
TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
INTERNAL = "internal error"


@pytest.fixture(scope="module")
def specdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding every fixture (so relative ``$ref``s between them resolve), a
    sub-folder, and a secret one level up that no reference may reach."""
    base = tmp_path_factory.mktemp("openapi-fuzz")
    (base / "secret.yaml").write_text("Thing: {type: string}\n", "utf-8")
    folder = base / "specs"
    folder.mkdir()
    for path in FIXTURE_FILES:
        shutil.copy(path, folder / path.name)
    (folder / "sub").mkdir()
    (folder / "loop.yaml").symlink_to(folder / "loop.yaml")  # a symlink loop
    (folder / "escape.yaml").symlink_to(base / "secret.yaml")  # a link out of the folder
    return folder


# -- the contract -------------------------------------------------------------------------


def check_import(result: OpenAPIImport, file: str) -> None:
    assert isinstance(result, OpenAPIImport)
    assert len(result.tools) == len(result.operations)
    assert len(result.resources) == len(result.resource_operations)
    for problem in result.problems:
        assert INTERNAL not in problem.message, problem.format()
        assert problem.message
        text = problem.format()
        assert "\n" not in text and "\r" not in text, text
    if not any(p.level is Level.ERROR for p in result.problems):
        names = [tool["name"] for tool in result.tools]
        assert len(set(names)) == len(names), names
        for tool in result.tools:
            assert TOOL_NAME.match(tool["name"]), tool["name"]
            assert isinstance(tool.get("input", {}), dict)
        json.dumps(result.tools)  # plain JSON data, no cycles (shared structure is fine)


def check_loaded(loaded: Loaded) -> None:
    """What ``mcpgen build`` does before rendering: a model, or located errors."""
    assert isinstance(loaded, Loaded)
    if loaded.manifest is None:
        assert loaded.problems.errors
    for problem in loaded.problems.items:
        assert INTERNAL not in problem.message, problem.format()
        assert "\n" not in problem.format()


def import_data(folder: Path, data: Any, name: str = "spec.json") -> None:
    """Import ``data`` in memory (as JSON text, so positions are known), then as a file
    through the whole front half of the pipeline."""
    text = json.dumps(data, indent=1)
    try:
        doc = load_text(text, name, folder, json_first=True)
    except InputError:
        event("not loadable")
        return
    result = import_openapi(doc)
    check_import(result, name)
    event("tools" if result.tools else "no tools")
    path = folder / name
    path.write_text(text, "utf-8")
    check_loaded(load_manifest(path))


# -- (a) mutations of the fixtures --------------------------------------------------------

REFS = [
    "#/components/schemas/Nope",
    "#/definitions/Nope",
    "#",
    "#/",
    "",
    "#/paths",
    "#/components/schemas/A",
    "#/components/parameters/Loop",
    "#/paths/~1pets/get",
    "#/paths/~1nope~0x",
    "#/components/schemas/%7E",
    "common.yaml#/components/schemas/Owner",
    "common.yaml#/nope",
    "../secret.yaml#/Thing",
    "escape.yaml#/Thing",
    "sub",
    "sub/",
    "/etc/passwd#/x",
    "missing.yaml#/x",
    "http://example.com/x.yaml#/a",
    "file:///etc/passwd",
    "spec.json#/info",
    "a\x00b",
    "#/" + "x/" * 300,
]
WEIRD = [
    "x" * 5000,
    "\u202e\u0645\u0631\u062d\u0628\u0627",  # right-to-left override + Arabic
    "\x00",
    "\ufeff",
    "\u2028\u2029\x85",
    "\U0001f600" * 50,
    "a/b/../../c",
    "../../etc/passwd",
    "{id}",
    "{",
    "}",
    "~1",
    "/",
    "",
    " ",
    "__init__",
    "class",
    "None",
    "$ref",
    "x-" * 40,
    "\u0130\u0131\u017f",  # case folding oddities
    "\U000e0041",  # tag character
]
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=10)
    | st.sampled_from(WEIRD)
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
KINDS = ["delete", "retype", "ref", "cycle", "rename", "copy", "wrap", "weird", "empty"]
MUTATION = st.tuples(
    st.sampled_from(KINDS),
    st.integers(min_value=0, max_value=100_000),
    st.integers(min_value=0, max_value=100_000),
    JSON_VALUES,
)


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, child in value.items():
            yield from paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from paths(child, (*prefix, index))


def get(data: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        data = data[part]
    return data


def pointer(path: tuple[Any, ...]) -> str:
    return "#" + "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def mutate(data: Any, mutations: list[tuple[str, int, int, Any]]) -> Any:
    data = copy.deepcopy(data)
    for kind, a, b, payload in mutations:
        every = list(paths(data))
        path = every[a % len(every)]
        other = every[b % len(every)]
        if not path:  # the root: only wrap or replace it now and then
            if kind == "retype":
                data = payload
            continue
        parent, key = get(data, path[:-1]), path[-1]
        value = parent[key]
        if kind == "delete":
            del parent[key]
        elif kind == "retype":
            parent[key] = payload
        elif kind == "ref":
            parent[key] = {"$ref": REFS[b % len(REFS)]}
        elif kind == "cycle":  # point at itself or at an ancestor
            parent[key] = {"$ref": pointer(path[: b % len(path) + 1])}
            if isinstance(data, dict):
                components = data.setdefault("components", {})
                if isinstance(components, dict):
                    components["schemas"] = {
                        "A": {"$ref": "#/components/schemas/B"},
                        "B": {"allOf": [{"$ref": "#/components/schemas/A"}]},
                    }
                    components["parameters"] = {"Loop": {"$ref": "#/components/parameters/Loop"}}
        elif kind == "rename" and isinstance(parent, dict):
            new = WEIRD[b % len(WEIRD)]
            if new not in parent:
                parent[new] = parent.pop(key)
        elif kind == "copy" and other and other[: len(path)] != path:
            with contextlib.suppress(KeyError, IndexError, TypeError):
                parent[key] = copy.deepcopy(get(data, other))
        elif kind == "wrap":
            parent[key] = [value] if b % 2 else {"x": value}
        elif kind == "weird":
            parent[key] = WEIRD[b % len(WEIRD)]
        elif kind == "empty":
            parent[key] = type(value)() if isinstance(value, dict | list | str) else None
    return data


@FUZZ
@given(
    name=st.sampled_from(sorted(FIXTURES)),
    mutations=st.lists(MUTATION, min_size=1, max_size=6),
)
def test_mutated_fixtures(specdir: Path, name: str, mutations: list[Any]) -> None:
    event(name)
    import_data(specdir, mutate(FIXTURES[name], mutations))


# -- (b) OpenAPI-shaped random documents --------------------------------------------------

NAMES = st.sampled_from([*WEIRD, "id", "petId", "limit", "body", "a-b", "x.y", "Accept"]) | st.text(
    max_size=12
)
SCHEMAS = st.recursive(
    st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(
                ["string", "integer", "number", "boolean", "array", "object", "null", "file", "x"]
            )
            | st.lists(st.sampled_from(["string", "null"]), max_size=2),
            "format": st.sampled_from(["binary", "date-time", "int64", "byte", "weird"]),
            "enum": st.lists(SCALARS, max_size=3),
            "nullable": st.booleans(),
            "readOnly": st.booleans(),
            "default": JSON_VALUES,
            "$ref": st.sampled_from(REFS),
            "pattern": st.sampled_from(["^a$", "[", "(?P<x>", "\\p{L}"]),
        },
    )
    | st.booleans(),
    lambda inner: st.fixed_dictionaries(
        {},
        optional={
            "type": st.just("object"),
            "properties": st.dictionaries(NAMES, inner, max_size=4),
            "required": st.lists(NAMES, max_size=3) | SCALARS,
            "additionalProperties": inner,
            "items": inner,
            "allOf": st.lists(inner, max_size=3),
            "oneOf": st.lists(inner, max_size=3),
            "anyOf": st.lists(inner, max_size=3),
            "not": inner,
            "discriminator": st.fixed_dictionaries({"propertyName": NAMES}),
        },
    ),
    max_leaves=12,
)
PARAMETER = st.fixed_dictionaries(
    {},
    optional={
        "name": NAMES | SCALARS,
        "in": st.sampled_from(["path", "query", "header", "cookie", "body", "formData", "x"]),
        "required": st.booleans() | SCALARS,
        "schema": SCHEMAS,
        "type": st.sampled_from(["string", "array", "file", "integer"]),
        "items": SCHEMAS,
        "collectionFormat": st.sampled_from(["csv", "multi", "pipes", "x"]),
        "style": st.sampled_from(["form", "simple", "deepObject", "matrix", "x"]),
        "explode": st.booleans(),
        "content": st.dictionaries(
            st.sampled_from(["application/json", "text/plain", "*/*"]),
            st.fixed_dictionaries({}, optional={"schema": SCHEMAS}),
            max_size=2,
        ),
        "$ref": st.sampled_from(REFS),
    },
)
MEDIA = st.dictionaries(
    st.sampled_from(
        ["application/json", "application/x-www-form-urlencoded", "multipart/form-data",
         "text/plain", "application/octet-stream", "application/vnd.x+json", "*/*", ""]
    ),
    st.fixed_dictionaries({}, optional={"schema": SCHEMAS}) | SCALARS,
    max_size=3,
)  # fmt: skip
OPERATION = st.fixed_dictionaries(
    {},
    optional={
        "operationId": NAMES | SCALARS,
        "summary": st.text(max_size=20) | SCALARS,
        "description": st.sampled_from(WEIRD),
        "tags": st.lists(NAMES, max_size=2) | SCALARS,
        "parameters": st.lists(PARAMETER, max_size=4) | SCALARS,
        "requestBody": st.fixed_dictionaries(
            {},
            optional={"content": MEDIA, "required": st.booleans(), "$ref": st.sampled_from(REFS)},
        )
        | SCALARS,
        "responses": st.dictionaries(
            st.sampled_from(["200", "201", "2XX", "default", "404", "x", "204"]),
            st.fixed_dictionaries(
                {},
                optional={"description": st.text(max_size=5), "content": MEDIA, "schema": SCHEMAS},
            )
            | SCALARS,
            max_size=3,
        )
        | SCALARS,
        "security": st.lists(st.dictionaries(NAMES, st.lists(NAMES, max_size=2), max_size=2))
        | SCALARS,
        "deprecated": st.booleans(),
    },
)
PATHS = st.dictionaries(
    st.sampled_from(["/pets", "/pets/{id}", "/{a}/{a}", "/x/{", "/{}", "", "nope", "/a b/{c d}"])
    | NAMES.map(lambda n: "/" + n),
    st.fixed_dictionaries(
        {},
        optional={
            "get": OPERATION,
            "post": OPERATION,
            "delete": OPERATION | SCALARS,
            "parameters": st.lists(PARAMETER, max_size=2) | SCALARS,
            "$ref": st.sampled_from(REFS),
        },
    )
    | SCALARS,
    max_size=4,
)
DOCUMENTS = st.fixed_dictionaries(
    {
        "openapi": st.sampled_from(["3.0.0", "3.0.3", "3.1.0", "3.1.1", "3.2.0"]),
        "paths": PATHS | SCALARS,
    },
    optional={
        "info": st.fixed_dictionaries(
            {}, optional={"title": NAMES | SCALARS, "version": SCALARS, "description": NAMES}
        )
        | SCALARS,
        "servers": st.lists(
            st.fixed_dictionaries(
                {}, optional={"url": st.sampled_from(["", "/x", "http://{a}", "{"])}
            ),
            max_size=2,
        )
        | SCALARS,
        "components": st.fixed_dictionaries(
            {},
            optional={
                "schemas": st.dictionaries(
                    st.sampled_from(["A", "B", "Nope", "Pet"]), SCHEMAS, max_size=3
                ),
                "parameters": st.dictionaries(
                    st.sampled_from(["Loop", "P"]), PARAMETER, max_size=2
                ),
                "securitySchemes": st.dictionaries(NAMES, JSON_VALUES, max_size=2),
            },
        )
        | SCALARS,
        "security": JSON_VALUES,
        "x-extra": JSON_VALUES,
    },
) | st.fixed_dictionaries(
    {"swagger": st.just("2.0"), "paths": PATHS},
    optional={
        "definitions": st.dictionaries(st.sampled_from(["A", "B", "Nope"]), SCHEMAS, max_size=3),
        "basePath": st.sampled_from(["/v1", "", "x", "//"]),
        "host": st.sampled_from(["example.com", "", "{x}"]),
        "consumes": st.lists(st.sampled_from(["application/json", "x"]), max_size=2) | SCALARS,
        "produces": st.lists(st.sampled_from(["application/json", "x"]), max_size=2) | SCALARS,
        "securityDefinitions": st.dictionaries(NAMES, JSON_VALUES, max_size=2),
    },
)


@FUZZ
@given(data=DOCUMENTS)
def test_openapi_shaped_documents(specdir: Path, data: dict[str, Any]) -> None:
    import_data(specdir, data)


# -- (c) plain random JSON -----------------------------------------------------------------


@FUZZ
@given(
    version=st.sampled_from([("openapi", "3.0.0"), ("openapi", "3.1.0"), ("swagger", "2.0")]),
    data=st.dictionaries(
        st.sampled_from(
            ["paths", "components", "info", "servers", "definitions", "security", "tags",
             "webhooks", "parameters", "x"]
        ),
        JSON_VALUES,
        max_size=5,
    ),
)  # fmt: skip
def test_random_json_documents(
    specdir: Path, version: tuple[str, str], data: dict[str, Any]
) -> None:
    import_data(specdir, {version[0]: version[1], **data})


@FUZZ
@given(data=JSON_VALUES)
def test_arbitrary_json_is_never_a_crash(specdir: Path, data: Any) -> None:
    """A document that is not OpenAPI at all: import_openapi still answers (with errors)."""
    try:
        doc = load_text(json.dumps(data), "spec.json", specdir, json_first=True)
    except InputError:
        return
    check_import(import_openapi(doc), "spec.json")


# -- (d) the command line, end to end --------------------------------------------------------


_FORMAT = functools.lru_cache(maxsize=None)(black.format_str)


@pytest.fixture
def fast_black(monkeypatch: pytest.MonkeyPatch) -> None:
    """black is deterministic: memoize it so repeated builds only format what changed."""
    monkeypatch.setattr(black, "format_str", _FORMAT)


CLI_CASES = int(os.environ.get("MCPGEN_FUZZ_CLI_CASES", "6"))


def test_build_on_mutated_specs_exits_0_or_2(
    specdir: Path, tmp_path: Path, fast_black: None
) -> None:
    rng = random.Random(20261129)
    names = ["petstore.yaml", "broken.yaml", *sorted(set(FIXTURES) - {"common.yaml"})]
    codes = []
    for case in range(CLI_CASES):
        name = names[case % len(names)]
        mutations = [  # the first two unchanged: one builds, one is broken
            (rng.choice(KINDS), rng.randrange(100_000), rng.randrange(100_000), rng.choice(WEIRD))
            for _ in range(0 if case < 2 else rng.randint(1, 4))
        ]
        spec = specdir / f"cli{case}.json"
        spec.write_text(json.dumps(mutate(FIXTURES[name], mutations), indent=1), "utf-8")
        out = tmp_path / f"out{case}"
        result = CliRunner().invoke(main, ["build", str(spec), "-o", str(out)], env={"CI": "1"})
        assert result.exit_code in (0, 2), (name, mutations, result.output)
        assert "Traceback" not in result.output and INTERNAL not in result.output, result.output
        if result.exit_code == 2:
            assert not out.exists()
        else:
            assert (out / "pyproject.toml").is_file()
        codes.append(result.exit_code)
    print(f"\nmcpgen build on mutated specs: exit codes {codes}")
    assert codes[:2] == [0, 2], codes


@pytest.mark.parametrize(
    "ref",
    ["../secret.yaml#/Thing", "escape.yaml#/Thing", "/etc/passwd#/x", "sub/../../secret.yaml"],
)
def test_references_out_of_the_folder_are_located_errors(specdir: Path, ref: str) -> None:
    data = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {"/x": {"get": {"responses": {"200": {
            "description": "ok", "content": {"application/json": {"schema": {"$ref": ref}}}}}}}},
    }  # fmt: skip
    doc = load_text(json.dumps(data, indent=1), "spec.json", specdir, json_first=True)
    result = import_openapi(doc)
    check_import(result, "spec.json")
    errors = [p for p in result.problems if p.level is Level.ERROR]
    assert errors and all(p.location.line for p in errors), [p.format() for p in errors]
    assert any(
        "points outside" in p.message or "only paths relative" in p.message for p in errors
    ), [p.format() for p in errors]


# -- bugs found by this file (kept out of the properties above so they keep hunting) --------


def test_a_reference_to_a_symlink_loop_is_a_located_error(tmp_path: Path) -> None:
    (tmp_path / "loop.yaml").symlink_to(tmp_path / "loop.yaml")
    data = {
        "swagger": "2.0",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/a": {
                "get": {
                    "responses": {
                        "200": {"description": "ok", "schema": {"$ref": "#/definitions/A"}}
                    }
                }
            }
        },
        "definitions": {"A": {"$ref": "loop.yaml#/x"}},
    }
    doc = load_text(json.dumps(data, indent=1), "spec.json", tmp_path, json_first=True)
    result = import_openapi(doc)
    messages = [p.format() for p in result.problems]
    assert messages and not any(INTERNAL in m for m in messages), messages
    assert any("loop.yaml" in p.message and p.location.line for p in result.problems), messages


def test_a_lone_surrogate_in_a_json_spec_is_exit_2(tmp_path: Path) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(
        '{"openapi": "3.0.0", "info": {"title": "x\\ud800", "version": "1"}, "paths": {}}'
    )
    result = CliRunner().invoke(main, ["build", str(spec), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert INTERNAL not in result.output


def test_loaded_fixtures_are_documents() -> None:
    assert len(FIXTURES) >= 5
    for data in FIXTURES.values():
        doc = Document("x.json", ROOT, data, json.dumps(data))
        check_import(import_openapi(doc), "x.json")
