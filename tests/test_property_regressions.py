"""Bugs the property test of the manifest -> code promise found (tests/test_property_manifests.py),
each minimised to a plain case: validate refuses it with a located error, or the build is sound.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import property_harness as harness
import pytest
import yaml

pytestmark = pytest.mark.timeout(300)
MYPY_CACHE = Path(tempfile.gettempdir()) / "mcpgen-property-mypy-cache"


def _case(tmp_path: Path, manifest: dict[str, object], api: object = None) -> Path:
    harness.write_case(tmp_path, manifest, api)
    return tmp_path


def _errors(folder: Path) -> list[dict[str, object]]:
    """The located errors of a refused case (the harness checks file, line and field)."""
    assert harness.validate(folder) is not None, "validate accepted the case"
    code, out, _ = harness._cli(folder, "validate", "--format", "json", harness.MANIFEST)
    assert code == 2
    return [p for p in json.loads(out)["problems"] if p["level"] == "error"]


def _value_line(folder: Path, *path: str | int) -> int:
    """The line of the YAML value at ``path`` (as a YAML parser sees it)."""
    node = yaml.compose((folder / harness.MANIFEST).read_text("utf-8"))
    for part in path:
        if isinstance(part, int):
            node = node.value[part]
        else:
            node = next(v for k, v in node.value if k.value == part)
    return int(node.start_mark.line) + 1


def _line_of(folder: Path, text: str, file: str = harness.MANIFEST) -> int:
    lines = (folder / file).read_text("utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


# -- 1. shared definitions the model generator renames ----------------------------------
# A $defs name is the name of its model class; datamodel-code-generator capitalises it,
# drops its underscores and renames keywords, so `foo` became `Foo` and the build failed
# ("model generation produced no class for foo"), `class` made code that did not parse and
# `Field` failed unlocated. The same for an OpenAPI component named `True` or `none`.
# `Context` or `ToolReturn` as a tool's input or output: its handler stub imported the
# package's class of that name too (ruff F811, mypy --strict failed).
@pytest.mark.parametrize(
    ("name", "better"),
    [
        ("annotations", "Annotations"),
        ("foo", "Foo"),
        ("_x", "X"),
        ("x_", "X"),
        ("Foo_bar", "FooBar"),
        ("class", "Class"),
        ("None", "NoneModel"),
        ("Field", "FieldModel"),
        ("Context", "ContextModel"),  # a handler stub imports mcpgen's Context next to it
        ("ToolReturn", "ToolReturnModel"),
    ],
)
def test_defs_names_that_would_be_renamed_are_refused(
    tmp_path: Path, name: str, better: str
) -> None:
    manifest = {
        "mcpgen": 1,
        "server": {"name": "defs"},
        "$defs": {name: {"type": "object", "properties": {"a": {"type": "string"}}}},
        "tools": [{"name": "only", "description": "A tool."}],
    }
    folder = _case(tmp_path, manifest)
    (error,) = _errors(folder)
    assert error["field"] == f"$defs.{name}"
    assert error["line"] == _line_of(folder, f"{name}:")
    assert f"call it {better!r}" in str(error["message"])


def test_pascal_case_defs_names_build(tmp_path: Path) -> None:
    defs = {n: {"type": "object", "properties": {"a": {"type": "string"}}} for n in ("Foo", "FOO")}
    tool = {"name": "t", "description": "A tool.", "input": {"$ref": "#/$defs/Foo"}}
    manifest = {"mcpgen": 1, "server": {"name": "pascal"}, "$defs": defs, "tools": [tool]}
    built = harness.build(_case(tmp_path, manifest))
    shared = (built.out / "src" / built.package / "models" / "_shared.py").read_text("utf-8")
    assert "class Foo(" in shared and "class FOO(" in shared


def test_openapi_components_named_like_keywords_build(tmp_path: Path) -> None:
    refs = {k: {"$ref": f"#/components/schemas/{k}"} for k in ("True", "none", "Field")}
    schema = {"type": "object", "properties": refs}
    answer = {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}
    component = {"type": "object", "properties": {"x": {"type": "string"}}}
    api = {
        "openapi": "3.0.3",
        "info": {"title": "Api", "version": "1"},
        "paths": {"/a": {"get": {"operationId": "getA", "responses": answer}}},
        "components": {"schemas": dict.fromkeys(refs, component)},
    }
    source = {"source": harness.API, "baseUrl": "http://127.0.0.1:9"}
    manifest = {"mcpgen": 1, "server": {"name": "keywords"}, "openapi": source}
    folder = _case(tmp_path, manifest, api)
    assert harness.validate(folder) is None
    built = harness.build(folder)  # was: "model generation produced no class for True"
    shared = (built.out / "src" / built.package / "models" / "_shared.py").read_text("utf-8")
    classes = [line.split("(")[0][6:] for line in shared.splitlines() if line.startswith("class ")]
    assert len(classes) == 3 and not {"True", "Field", "None"} & set(classes), classes


def test_openapi_components_named_like_a_format_type_build(tmp_path: Path) -> None:
    """A component ``IPv4Address`` of format ipv4: its model class would be the type the
    format imports (the generator made no class); the importer renames it."""
    component = {"type": "string", "format": "ipv4"}
    schema = {"type": "object", "properties": {"ip": {"$ref": "#/components/schemas/IPv4Address"}}}
    answer = {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}
    api = {
        "openapi": "3.0.3",
        "info": {"title": "Api", "version": "1"},
        "paths": {"/a": {"get": {"operationId": "getA", "responses": answer}}},
        "components": {"schemas": {"IPv4Address": component}},
    }
    source = {"source": harness.API, "baseUrl": "http://127.0.0.1:9"}
    manifest = {"mcpgen": 1, "server": {"name": "net"}, "openapi": source}
    folder = _case(tmp_path, manifest, api)
    assert harness.validate(folder) is None
    harness.build(folder)  # was: "model generation produced no class for IPv4Address"


# -- 2. a client without tools imported what only tool methods use ------------------------
# A server of prompts or resources only: client.py imported ProgressCallback and arguments
# unused, so the generated project failed its own `ruff check` (F401).
@pytest.mark.parametrize(
    "entries",
    [
        {
            "prompts": [
                {"name": "p", "description": "d", "messages": [{"role": "user", "text": "hi"}]}
            ]
        },
        {"resources": [{"name": "r", "uri": "app://x", "description": "d", "text": "hi"}]},
        {"resources": [{"name": "r", "uriTemplate": "app://x/{id}", "description": "d"}]},
    ],
    ids=["prompt", "resource", "template"],
)
def test_client_without_tools_imports_only_what_it_uses(
    tmp_path: Path, entries: dict[str, object]
) -> None:
    manifest = {"mcpgen": 1, "server": {"name": "notools"}, **entries}
    built = harness.build(_case(tmp_path, manifest))  # ruff --select F on the project
    client = (built.out / "src" / built.package / "client.py").read_text("utf-8")
    assert "ProgressCallback" not in client and "arguments" not in client


# -- 3. defaults their own schema rejects -----------------------------------------------
# `{type: array, items: {type: number}, default: ["x"]}` validated, and the model said
# `list[float] | None = ["x"]`: mypy --strict failed (list-item); a scalar of the wrong type
# or outside the enum gave handlers a value of another type than the annotation says.
@pytest.mark.parametrize(
    ("schema", "says"),
    [
        ({"type": "array", "items": {"type": "number"}, "default": ["x"]}, "not of type"),
        ({"type": "string", "enum": ["a", "b"], "default": "c"}, "is not one of"),
        ({"type": "integer", "default": "7"}, "not of type"),
        ({"$ref": "#/$defs/Count", "default": -1}, "less than the minimum"),
        ({"type": "string", "format": "date", "default": "yesterday"}, "is not a 'date'"),
        ({"type": "string", "format": "uri", "default": "no uri"}, "is not a 'uri'"),
        ({"type": "string", "maxLength": 3, "default": "x" * 9000}, "maxLength 3"),
    ],
    ids=["list-item", "enum", "scalar", "ref", "date", "uri", "long"],
)
def test_defaults_that_do_not_match_their_schema_are_refused(
    tmp_path: Path, schema: dict[str, object], says: str
) -> None:
    tool = {
        "name": "t",
        "description": "A tool.",
        "input": {"type": "object", "properties": {"v": schema}},
    }
    defs = {"Count": {"type": "integer", "minimum": 0}}
    manifest = {"mcpgen": 1, "server": {"name": "defaults"}, "$defs": defs, "tools": [tool]}
    folder = _case(tmp_path, manifest)
    (error,) = _errors(folder)
    assert error["field"] == "tools[0].input.properties.v.default"
    where = ("tools", 0, "input", "properties", "v", "default")
    assert error["line"] == _value_line(folder, *where)
    assert says in str(error["message"]) and len(str(error["message"])) < 400  # not the value


def test_defaults_that_match_their_schema_build_and_type_check(tmp_path: Path) -> None:
    """A default is generated as its JSON value and validated by pydantic: a list or map of
    objects type-checks (mypy said list-item and dict-item), and a handler gets the field's
    type (it got a dict for a model, a str for a date); an object ``const`` is optional."""
    point = {"type": "object", "properties": {"x": {"type": "integer"}}}
    properties = {
        "numbers": {"type": "array", "items": {"type": "number"}, "default": [1, 2.5]},
        "kind": {"type": "string", "enum": ["a", "b"], "default": "b"},
        "count": {"$ref": "#/$defs/Count", "default": 3},
        "maybe": {"type": ["string", "null"], "default": None},
        "tags": {"type": "array", "items": {"$ref": "#/$defs/Count"}, "default": [0]},
        "points": {"type": "array", "items": {"$ref": "#/$defs/Point"}, "default": [{"x": 1}]},
        "named": {"type": "object", "additionalProperties": point, "default": {"a": {"x": 1}}},
        "when": {"type": "string", "format": "date", "default": "2024-02-29"},
        "fixed": {"const": {"a": 1}},
    }
    tool = {
        "name": "t",
        "description": "A tool.",
        "input": {"type": "object", "properties": properties},
    }
    defs = {"Count": {"type": "integer", "minimum": 0}, "Point": point}
    manifest = {"mcpgen": 1, "server": {"name": "gooddefaults"}, "$defs": defs, "tools": [tool]}
    folder = _case(tmp_path / "case", manifest)
    assert harness.validate(folder) is None
    built = harness.build(folder)
    assert harness.mypy([built], tmp_path / "mypy", MYPY_CACHE) == {}
    probe = (
        "from datetime import date\nfrom gooddefaults_mcp.models import Point, TInput\n"
        "m = TInput()\nassert isinstance(m.when, date) and m.fixed is None, m\n"
        "assert isinstance(m.points[0], Point) and m.named['a'].x == 1, m\n"
    )
    env = {**os.environ, "PYTHONPATH": str(built.out / "src")}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


def test_openapi_defaults_that_do_not_match_are_left_out_with_a_warning(tmp_path: Path) -> None:
    """Also a default that does not parse as its format: the model validates its defaults."""
    numbers = {"type": "array", "items": {"type": "integer"}, "default": ["x"]}
    when = {"type": "string", "format": "date-time", "default": "now"}
    since = {"name": "since", "in": "query", "schema": when}
    output = {"type": "object", "properties": {"n": numbers}}
    operation = {
        "operationId": "getR",
        "parameters": [{"name": "ids", "in": "query", "schema": numbers}, since],
        "responses": {
            "200": {"description": "ok", "content": {"application/json": {"schema": output}}}
        },
    }
    api = {
        "openapi": "3.0.3",
        "info": {"title": "Api", "version": "1"},
        "paths": {"/r": {"get": operation}},
    }
    source = {"source": harness.API, "baseUrl": "http://127.0.0.1:9"}
    manifest = {"mcpgen": 1, "server": {"name": "apidefaults"}, "openapi": source}
    folder = _case(tmp_path / "case", manifest, api)
    code, _, err = harness._cli(folder, "validate", harness.MANIFEST)
    assert code == 0
    warnings = [line for line in err.splitlines() if ": warning: " in line]
    assert len(warnings) == 3 and all(w.startswith("api.yaml:") for w in warnings), err
    assert all("'default' does not match its schema; left out" in w for w in warnings)
    built = harness.build(folder)
    assert harness.mypy([built], tmp_path / "mypy", MYPY_CACHE) == {}  # was: list-item


def test_a_default_under_a_pattern_python_cannot_compile_is_refused_once(tmp_path: Path) -> None:
    """Checking the default compiled the pattern: an internal error (exit 70) instead of the
    pattern's own located error."""
    schema = {"type": "string", "pattern": "[", "default": "x"}
    tool = {
        "name": "t",
        "description": "A tool.",
        "input": {"type": "object", "properties": {"v": schema}},
    }
    manifest = {"mcpgen": 1, "server": {"name": "pattern"}, "tools": [tool]}
    (error,) = _errors(_case(tmp_path, manifest))
    assert error["field"] == "tools[0].input.properties.v.pattern"


# -- 4. tool models that are type aliases -------------------------------------------------
# An input or output without properties of its own (a map: `additionalProperties: {type:
# integer}`) is a type alias in the models, not a class: the server's `parse` called
# isinstance() on it (every call an internal error, the handler never ran) and mypy
# --strict rejected `parse(models.TallyOutput, ...)` in the client and the server.
HANDLER = """
from __future__ import annotations

from ...models import TallyInput, TallyOutput


async def handle(args: TallyInput) -> TallyOutput:
    return {key: value * 2 for key, value in args.items()}
"""
CALL = """
import asyncio, json
from tally_mcp import server
from tally_mcp.client import TallyClient

async def main() -> None:
    async with TallyClient.connect(server.create_server()) as typed:
        result = await typed.client.call_tool("tally", {"a": 1, "b": 4})
        print(json.dumps([result.is_error, result.structured_content]))
        result = await typed.client.call_tool("tally", {"a": "x"})
        print(json.dumps([result.is_error, result.content[0].text]))
        print(json.dumps(await typed.tally()))

asyncio.run(main())
"""


def test_map_inputs_and_outputs_reach_the_handler_and_type_check(tmp_path: Path) -> None:
    counts = {"type": "object", "properties": {}, "additionalProperties": {"type": "integer"}}
    tool = {"name": "tally", "description": "Doubles counts.", "input": counts, "output": counts}
    manifest = {"mcpgen": 1, "server": {"name": "tally"}, "tools": [tool]}
    built = harness.build(_case(tmp_path / "case", manifest))
    handler = built.out / "src" / built.package / "handlers" / "tools" / "tally.py"
    handler.write_text(HANDLER, encoding="utf-8")
    assert harness.mypy([built], tmp_path / "mypy", MYPY_CACHE) == {}
    env = {**os.environ, "PYTHONPATH": str(built.out / "src")}
    done = subprocess.run(
        [sys.executable, "-c", CALL], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    doubled, refused, empty = (json.loads(line) for line in done.stdout.splitlines())
    assert doubled == [False, {"a": 2, "b": 8}]
    assert refused[0] is True and "is not of type 'integer'" in refused[1]
    assert empty == {}


def test_a_property_or_prompt_argument_named_kwargs_type_checks(tmp_path: Path) -> None:
    """pydantic's mypy plugin gives a model's ``__init__`` a ``**kwargs``: a field named
    ``kwargs`` failed mypy --strict (no-redef); the model names it ``kwargs_``."""
    tool = {
        "name": "call_function",
        "description": "Call a function.",
        "input": {"type": "object", "properties": {"args": {"type": "array"}, "kwargs": {}}},
    }
    prompt = {"name": "p", "description": "p", "arguments": [{"name": "kwargs"}], "handler": True}
    manifest = {"mcpgen": 1, "server": {"name": "kw"}, "tools": [tool], "prompts": [prompt]}
    folder = _case(tmp_path / "case", manifest)
    assert harness.validate(folder) is None
    built = harness.build(folder)
    assert harness.mypy([built], tmp_path / "mypy", MYPY_CACHE) == {}


@pytest.mark.parametrize("auth", [None, {"type": "bearer"}])
def test_a_task_tool_is_listed_in_both_eras_as_its_lock_says(
    tmp_path: Path, auth: dict[str, object] | None
) -> None:
    """The lock gave every server with a task tool ``tasks.list``; the server offers
    tasks/list only with auth (anonymous callers are all one), so the probe refused it."""
    tool = {"name": "export", "description": "Export.", "task": "optional"}
    manifest: dict[str, object] = {"mcpgen": 1, "server": {"name": "jobs"}, "tools": [tool]}
    if auth is not None:
        manifest["auth"] = auth
    built = harness.build(_case(tmp_path / "case", manifest))
    lock = json.loads((built.out / "mcp-surface.json").read_text("utf-8"))
    assert ("list" in lock["capabilities"]["tasks"]) is (auth is not None)
    assert harness.probe([built]) == {}
