"""Fuzzing the front half of the pipeline: whatever the file holds, ``load_manifest`` returns
either a manifest or located problems, and never raises.

Each property runs 300 examples; set MCPGEN_FUZZ_EXAMPLES=5000 for a longer hunt.
"""

from __future__ import annotations

import json
import os
import random
import re
import string
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from mcpgen import load as loader
from mcpgen.cli import main
from mcpgen.load import json_text, yaml_text
from mcpgen.pipeline import Loaded, load_manifest
from mcpgen.problems import InputError, Level
from mcpgen.render.spec import spec_json

ROOT = Path(__file__).resolve().parent.parent
CALCULATOR = (ROOT / "manifests" / "calculator.yaml").read_text(encoding="utf-8")
CALCULATOR_DATA = yaml.safe_load(CALCULATOR)
EXAMPLES = int(os.environ.get("MCPGEN_FUZZ_EXAMPLES", "300"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a static file that generated manifests may refer to."""
    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "data.txt").write_text("static text\n", encoding="utf-8")
    (folder / "sub").mkdir()
    return folder


def check_loaded(loaded: Loaded, file: str) -> None:
    """The contract: a manifest, or errors that each name the file and a line and column."""
    assert isinstance(loaded, Loaded)
    if loaded.manifest is None:
        assert loaded.problems.errors
    else:
        assert not loaded.problems.errors
        spec = json.loads(spec_json(loaded.manifest))  # what the server would advertise
        for resource in spec["resources"]:
            if "pattern" in resource:
                re.compile(resource["pattern"])
    for problem in loaded.problems.items:
        assert problem.location.file == file
        assert problem.location.line >= 1 and problem.location.column >= 1, problem
        text = problem.format()
        assert "\n" not in text and "\r" not in text
        assert text.isprintable(), text
        if problem.level is Level.ERROR:
            assert problem.message


def load_bytes(folder: Path, raw: bytes, name: str = "m.yaml") -> Loaded:
    path = folder / name
    path.write_bytes(raw)
    loaded = load_manifest(path)
    check_loaded(loaded, loader.display_path(path))
    event(f"{name}: " + ("manifest" if loaded.manifest else "errors"))
    return loaded


# -- (a) arbitrary input ------------------------------------------------------------------

YAMLISH = st.text(alphabet=st.sampled_from(list("{}[]:,-#&*!|>'\"%@`?~ \n\t\\.=<abcnulyes01")))


@FUZZ
@given(text=st.text() | YAMLISH)
def test_random_text(workdir: Path, text: str) -> None:
    load_bytes(workdir, text.encode("utf-8", "surrogatepass"))


@FUZZ
@given(raw=st.binary())
def test_random_bytes(workdir: Path, raw: bytes) -> None:
    load_bytes(workdir, raw)
    load_bytes(workdir, raw, "m.json")


@FUZZ
@given(text=st.text() | YAMLISH)
def test_random_text_starting_like_json(workdir: Path, text: str) -> None:
    load_bytes(workdir, ("{" + text).encode("utf-8", "surrogatepass"))
    load_bytes(workdir, ("{" + text).encode("utf-8", "surrogatepass"), "m.json")


# -- (b) mutations of a real manifest -----------------------------------------------------

SPECIALS = [
    "&a ", "*a", "*b ", "!!str ", "!!binary ", "!!python/object:os.system ", "!custom ", "<<: *a",
    "? ", "- ", ": ", "{", "}", "[", "]", "|", ">-", "'", '"', "#", "%YAML 1.1\n", "@", "`",
    "\t", "---\n", "...\n", "~", "null", ".nan", ".inf", "1e400", "0o777", "0x", "yes", "\x00",
    "\ufeff", "\\", "\r", "\u2028", "\x85", " ", "  ", "\n", "{{ x }}", "{%", "$ref: ", "#/$defs/",
    "é", "\U0001f600", "\ud800",
]  # fmt: skip

MUTATION = st.tuples(
    st.sampled_from(["delete", "duplicate", "swap", "flip", "insert", "indent", "dedent"]),
    st.integers(min_value=0, max_value=10_000),
    st.integers(min_value=0, max_value=10_000),
    st.sampled_from(SPECIALS) | st.characters(),
)


def mutate(text: str, mutations: list[tuple[str, int, int, str]]) -> str:
    lines = text.split("\n")
    for kind, a, b, payload in mutations:
        if not lines:
            lines = [""]
        i, j = a % len(lines), b % len(lines)
        line = lines[i]
        if kind == "delete":
            del lines[i]
        elif kind == "duplicate":
            lines.insert(j, line)
        elif kind == "swap":
            lines[i], lines[j] = lines[j], line
        elif kind == "flip" and line:
            k = b % len(line)
            lines[i] = line[:k] + payload[:1] + line[k + 1 :]
        elif kind == "insert":
            k = b % (len(line) + 1)
            lines[i] = line[:k] + payload + line[k:]
        elif kind == "indent":
            lines[i] = " " * (1 + b % 4) + line
        elif kind == "dedent":
            lines[i] = line[1 + b % 2 :] if line.startswith(" ") else line
    return "\n".join(lines)


@FUZZ
@given(mutations=st.lists(MUTATION, min_size=1, max_size=6))
def test_mutated_yaml_manifest(workdir: Path, mutations: list[tuple[str, int, int, str]]) -> None:
    text = mutate(CALCULATOR, mutations)
    load_bytes(workdir, text.encode("utf-8", "surrogatepass"))


@FUZZ
@given(mutations=st.lists(MUTATION, min_size=1, max_size=4))
def test_mutated_json_manifest(workdir: Path, mutations: list[tuple[str, int, int, str]]) -> None:
    text = mutate(json.dumps(CALCULATOR_DATA, indent=2), mutations)
    load_bytes(workdir, text.encode("utf-8", "surrogatepass"), "m.json")


# Pieces of JSON string literals as written: backslash runs next to surrogate escapes
# (paired, lone, reversed) or before text that only looks like one, and text that ``json.dumps`` escapes itself.
RAW_PIECES = st.sampled_from(
    [
        "a",
        "\\\\",
        "\\ud83d",
        "\\uDE00",
        "\\ud83d\\ude00",
        "\\udbff",
        "\\udc00",
        "\\u00e9",
        "\\n",
        "ud83d",
        "ude00",
    ]
)
LITERALS = st.lists(RAW_PIECES, max_size=8).map(lambda p: '"' + "".join(p) + '"') | st.text().map(
    json.dumps
)


@FUZZ
@given(keys=st.lists(LITERALS, max_size=3), values=st.lists(LITERALS, max_size=4))
def test_the_text_check_for_lone_surrogates_agrees_with_the_parsed_strings(
    keys: list[str], values: list[str]
) -> None:
    """The loader decides from the JSON text alone whether a parsed string (key or value)
    holds a lone surrogate; it must agree with the strings the parser makes."""
    from mcpgen.load.json_text import _lone_surrogates

    text = "[{" + ", ".join(f"{k}: 1" for k in keys) + "}, " + ", ".join(["0", *values]) + "]"
    parsed = json.loads(text)
    strings = [*parsed[0], *parsed[1:]]
    held = any(isinstance(v, str) and re.search("[\ud800-\udfff]", v) for v in strings)
    assert _lone_surrogates(text) == held


def test_cli_never_prints_a_traceback(tmp_path: Path) -> None:
    rng = random.Random(20240601)
    codes = set()
    for case in range(25):
        mutations = [
            (
                rng.choice(["delete", "duplicate", "swap", "flip", "insert", "indent", "dedent"]),
                rng.randrange(10_000),
                rng.randrange(10_000),
                rng.choice(SPECIALS[:-1]),
            )
            for _ in range(rng.randint(1, 5))
        ]
        path = tmp_path / f"case{case}.yaml"
        path.write_text(mutate(CALCULATOR, mutations), encoding="utf-8")
        result = CliRunner().invoke(main, ["validate", str(path)], env={"CI": "1"})
        assert result.exit_code in (0, 2), result.output
        assert "Traceback" not in result.output and "internal error" not in result.output
        if result.exit_code == 2:
            assert result.stderr.startswith(f"{path}:"), result.stderr
        codes.add(result.exit_code)
    assert codes == {0, 2}


# -- (c) generated structures -------------------------------------------------------------

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=25,
)

GOOD_NAMES = st.sampled_from(["add", "search", "get_user", "lookup", "x1", "a.b-c", "A", "notes"])
NAMES = (
    GOOD_NAMES
    | st.sampled_from(
        ["add", "get-user", "get_user", "getUser", "a1b", "a_1b", "class", "None", "__init__",
         "1abc", "x" * 70, "with space", "dots.and-dashes", "ünïcödé", "", "AddInput"]
    )
    | st.text(alphabet=string.ascii_letters + string.digits + "_-. /{}$", min_size=1, max_size=12)
)  # fmt: skip
GOOD_URIS = st.sampled_from(["app://a", "file:///x", "http://example.com/a?b=c", "notes://all"])
PROPERTY_NAMES = st.sampled_from(
    ["x", "y", "class", "from", "self", "model_config", "a b", "1x", "_", "", "None", "items",
     "__dunder__", "schema", "ünï", "X", "x-y"]
)  # fmt: skip
SCHEMA_LEAVES = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(
            ["string", "integer", "number", "boolean", "array", "null", "object", "strng"]
        )
        | st.lists(
            st.sampled_from(["string", "null", "integer"]), min_size=1, max_size=2, unique=True
        ),
        "description": st.text(max_size=12),
        "enum": st.lists(SCALARS, min_size=1, max_size=3),
        "default": JSON_VALUES,
        "$ref": st.sampled_from(
            ["#/$defs/A", "#/$defs/Missing", "#", "#/properties/x", "http://x/y.json", "o.json#/a"]
        ),
        "minimum": st.integers(-5, 5),
        "maxLength": st.integers(0, 5),
        "format": st.sampled_from(["date-time", "email", "uri"]),
        "pattern": st.sampled_from(["^a$", "[", "\\d+"]),
        "const": SCALARS,
    },
)
SCHEMAS = st.recursive(
    SCHEMA_LEAVES | st.booleans(),
    lambda inner: (
        st.fixed_dictionaries(
            {"type": st.just("object")},
            optional={
                "properties": st.dictionaries(PROPERTY_NAMES, inner, max_size=4),
                "required": st.lists(PROPERTY_NAMES, max_size=3),
                "additionalProperties": inner,
                "$defs": st.dictionaries(st.sampled_from(["A", "B"]), inner, max_size=2),
            },
        )
        | st.fixed_dictionaries({"type": st.just("array"), "items": inner})
        | st.fixed_dictionaries({"anyOf": st.lists(inner, min_size=1, max_size=3)})
    ),
    max_leaves=10,
)
URIS = st.sampled_from(
    ["app://a", "file:///x", "no-scheme", "a://{x}", "a:// b", "http://example.com/a?b=c", ""]
) | st.text(max_size=12)
TEMPLATES = st.sampled_from(
    ["app://{id}", "app://{id}/{id}", "app://{+path}", "app://x{?q,page}", "app://{", "app://{}",
     "noscheme/{x}", "app://{a.b}", "app://{x:3}", "app://{x*}", "a://{=x}", "app://{x}",
     "a://{x}{y}{/z}{.e}{;p}{&q}{#f}", "a://{%41}", "a://static"]
) | st.text(max_size=12)  # fmt: skip
TEXT = st.text(max_size=16)
BLOBS = st.sampled_from(["aGVsbG8=", "not base64!", "", "aGVsbG8"])
FILES = st.sampled_from(
    [
        "data.txt",
        "../x",
        "/etc/passwd",
        "missing.txt",
        "sub/../data.txt",
        "a\x00b",
        ".",
        "sub",
        "x" * 300,
    ]
)
TEMPLATE_TEXT = st.sampled_from(
    ["Hi {{ a }}", "{{ b }} {% if a %}x{% endif %}", "{{", "{% for %}", "plain", "{{ a | upper }}",
     "{{ x.y }}", "{# c #}", "{{ lang }}", "{% raw %}{{ z }}{% endraw %}", "{{ (((a))) }}"]
) | TEXT  # fmt: skip


def pick(good: list[Any], bad: list[Any], chaos: bool) -> st.SearchStrategy[Any]:
    """Values for a field: only ``good`` ones, or now and then a ``bad`` one too."""
    return st.sampled_from(good + bad if chaos else good)


def manifests(chaos: bool) -> st.SearchStrategy[dict[str, Any]]:
    """Manifests whose shape is valid (``chaos`` off: problems are semantic) or not."""
    names = NAMES if chaos else GOOD_NAMES | NAMES
    uris = URIS if chaos else GOOD_URIS | URIS.filter(bool)
    roles = pick(["user", "assistant"], ["system"], chaos)
    argument_names = pick(["a", "b", "lang", "x1", "_", "id"], ["1a", ""], chaos)
    tools = st.fixed_dictionaries(
        {"name": names},
        optional={
            "description": TEXT,
            "title": TEXT,
            "input": SCHEMAS,
            "output": SCHEMAS,
            "annotations": st.fixed_dictionaries(
                {}, optional={"readOnlyHint": st.booleans(), "destructiveHint": st.booleans()}
            ),
            "context": st.booleans(),
            "timeout": st.floats(min_value=0.001, max_value=100),
            "scopes": st.lists(st.text(min_size=1, max_size=5), max_size=2),
            "meta": st.dictionaries(TEXT, JSON_VALUES, max_size=2),
        },
    )
    extras = {
        "description": TEXT,
        "mimeType": st.sampled_from(["text/plain", "image/png", "application/json"]),
        "subscribe": st.booleans(),
        "size": st.integers(0, 100),
    }
    resources = st.fixed_dictionaries(
        {"name": names, "uri": uris},
        optional={"text": TEXT, "blob": BLOBS, "file": FILES, **extras},
    ) | st.fixed_dictionaries(
        {"name": names, "uriTemplate": TEMPLATES.filter(bool)}, optional=extras
    )
    messages = (
        st.fixed_dictionaries({"role": roles, "text": TEMPLATE_TEXT})
        | st.fixed_dictionaries(
            {
                "role": roles,
                "resource": st.fixed_dictionaries(
                    {"uri": uris}, optional={"text": TEXT, "blob": BLOBS, "mimeType": TEXT}
                ),
            }
        )
        | st.fixed_dictionaries(
            {
                "role": roles,
                "image": st.fixed_dictionaries(
                    {"mimeType": st.just("image/png")}, optional={"data": BLOBS, "file": FILES}
                ),
            }
        )
    )
    prompts = st.fixed_dictionaries(
        {"name": names},
        optional={
            "description": TEXT,
            "arguments": st.lists(
                st.fixed_dictionaries(
                    {"name": argument_names},
                    optional={"required": st.booleans(), "description": TEXT},
                ),
                max_size=3,
            ),
            "messages": st.lists(messages, max_size=3),
            "handler": st.booleans(),
        },
    )
    sources = {"values": st.lists(TEXT, max_size=3), "handler": st.booleans()}
    completions = st.fixed_dictionaries(
        {"argument": argument_names | st.sampled_from(["q", "path"]), "prompt": names},
        optional=sources,
    ) | st.fixed_dictionaries(
        {
            "argument": argument_names | st.sampled_from(["q", "path"]),
            "resource": TEMPLATES | names,
        },
        optional=sources,
    )
    if chaos:
        completions = st.fixed_dictionaries(
            {"argument": argument_names},
            optional={"prompt": names, "resource": TEMPLATES, **sources},
        )
    optional: dict[str, st.SearchStrategy[Any]] = {
        "$defs": st.dictionaries(
            pick(["A", "B", "AddInput", "Note", "SearchOutput"], ["bad-name"], chaos),
            SCHEMAS,
            max_size=3,
        ),
        "tools": st.lists(tools, max_size=4),
        "resources": st.lists(resources, max_size=3),
        "prompts": st.lists(prompts, max_size=3),
        "completions": st.lists(completions, max_size=3),
        "capabilities": st.fixed_dictionaries(
            {},
            optional={
                "logging": st.booleans(),
                "completions": st.booleans(),
                "pageSize": st.integers(-1, 20_000) if chaos else st.integers(1, 10_000),
                "tools": st.fixed_dictionaries({}, optional={"listChanged": st.booleans()}),
            },
        ),
        "transports": st.fixed_dictionaries(
            {},
            optional={
                "default": pick(["stdio", "http", "sse", "websocket"], ["tcp"], chaos),
                "offer": st.lists(pick(["stdio", "http", "sse", "websocket"], ["tcp"], chaos)),
                "http": st.fixed_dictionaries(
                    {},
                    optional={
                        "host": st.sampled_from(["127.0.0.1", "0.0.0.0", "::1"]),
                        "port": st.integers(-1, 70_000) if chaos else st.integers(0, 65535),
                        "path": pick(["/mcp", "/"], ["mcp"], chaos),
                    },
                ),
            },
        ),
        "auth": st.fixed_dictionaries(
            {},
            optional={
                "type": pick(["none", "bearer", "apiKey", "oauth"], ["basic"], chaos),
                "issuer": TEXT,
                "audience": TEXT,
                "jwksUrl": TEXT,
                "header": TEXT,
            },
        ),
    }
    if chaos:
        optional["extra"] = JSON_VALUES
    server = st.fixed_dictionaries(
        {"name": pick(["demo", "my-server", "a_b", "Srv2"], ["x" * 70, "1bad", "a.b", ""], chaos)},
        optional={
            "version": st.sampled_from(["1.0", "0.1.0"])
            | (SCALARS if chaos else TEXT.filter(bool)),
            "package": pick(["demo_pkg", "class", "print"], ["Bad"], chaos),
            "distribution": pick(["demo-dist"], ["-bad"], chaos),
            "description": TEXT,
            "title": TEXT,
            "instructions": TEXT,
            "dependencies": st.lists(TEXT, max_size=2),
        },
    )
    version = st.sampled_from([1, 1, 1, 1, 2, "1", None, True, 1.0]) if chaos else st.just(1)
    return st.fixed_dictionaries({"mcpgen": version, "server": server}, optional=optional)


def write_both(folder: Path, data: Any) -> None:
    """Check ``data`` written as JSON, and as YAML when PyYAML can write it."""
    load_bytes(folder, json.dumps(data, indent=1).encode("utf-8"), "m.json")
    try:
        text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    except yaml.YAMLError:
        return
    load_bytes(folder, text.encode("utf-8", "surrogatepass"))


@FUZZ
@given(data=manifests(chaos=False) | manifests(chaos=True))
def test_generated_manifests(workdir: Path, data: dict[str, Any]) -> None:
    write_both(workdir, data)


@FUZZ
@given(data=JSON_VALUES | st.fixed_dictionaries({"mcpgen": st.just(1), "server": JSON_VALUES}))
def test_arbitrary_json_structures(workdir: Path, data: Any) -> None:
    write_both(workdir, data)


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            out += paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            out += paths(child, (*prefix, index))
    return out


@FUZZ
@given(data=JSON_VALUES, indent=st.sampled_from([None, 0, 1, 2, "\t"]))
def test_json_round_trip_and_positions(data: Any, indent: int | str | None) -> None:
    """JSON loads to exactly what was written; every value has a position, the same one the
    YAML composer finds for the same text (when PyYAML can read it)."""
    text = json.dumps(data, indent=indent)
    assume(text.strip())
    try:
        doc = loader.load_text(text, "m.json", Path("."), json_first=True)
    except InputError as exc:  # only a top-level scalar that is... never: JSON is accepted
        raise AssertionError(exc.problems) from None
    assert doc.data == data
    positions = json_text._json_positions(doc.text, doc.file)
    for path in paths(data):
        assert path in positions.values
        line, column = positions.values[path]
        assert 1 <= line <= text.count("\n") + 1 and column >= 1
    try:
        composed = yaml_text._compose(text, "m.json")[1]
    except InputError:
        return  # valid JSON that is not YAML PyYAML reads (tabs, keys over 1024 characters)
    assert composed.values == positions.values
    assert composed.keys == positions.keys


@FUZZ
@given(data=JSON_VALUES, indent=st.sampled_from([None, 0, 1, 2, "\t"]), extra=st.text(max_size=3))
def test_the_on_demand_json_locator_agrees_with_the_full_index(
    data: Any, indent: int | str | None, extra: str
) -> None:
    """Documents locate JSON paths on demand (``JsonLocator``, for big specs): every value and
    key, and paths that do not exist, land where the full position index puts them."""
    text = json.dumps(data, indent=indent)
    assume(text.strip())
    full = json_text._json_positions(text, "m.json")
    for path in paths(data):
        for probe in (path, (*path, extra), (*path, 0), (*path, extra, 1)):
            for key in (False, True):
                fresh = json_text.JsonLocator(text, "m.json")  # no index yet
                assert fresh.locate(probe, key) == full.locate(probe, key), (probe, key)
    shared = json_text.JsonLocator(text, "m.json")  # one index reused for every path
    for path in reversed(paths(data)):
        assert shared.locate(path, True) == full.locate(path, True)
