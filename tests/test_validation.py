"""Structural and semantic validation: messages, locations, strict mode and exit codes."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpgen.cli import main
from mcpgen.pipeline import Loaded, load_manifest
from mcpgen.problems import Level, Location, Problem, Problems

ROOT = Path(__file__).resolve().parent.parent

HEADER = """\
mcpgen: 1
server:
  name: demo
  description: A demo server.
"""


def check(tmp_path: Path, body: str, strict: bool = False, name: str = "m.yaml") -> Loaded:
    path = tmp_path / name
    path.write_text(HEADER + textwrap.dedent(body), encoding="utf-8")
    return load_manifest(path, strict)


def errors(loaded: Loaded) -> list[tuple[int, int, str, str]]:
    """(line, column, field, message) of each error, in report order."""
    return [
        (p.location.line, p.location.column, p.field, p.message)
        for p in loaded.problems.sorted()
        if p.level is Level.ERROR
    ]


def only_error(loaded: Loaded) -> tuple[int, int, str, str]:
    found = errors(loaded)
    assert len(found) == 1, found
    assert loaded.manifest is None
    return found[0]


def validate(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["validate", *args], env={"CI": "1"})
    assert "Traceback" not in result.stderr
    return result.exit_code, result.stdout, result.stderr


# -- structure ----------------------------------------------------------------------------


def test_every_unknown_field_is_reported_at_its_key(tmp_path: Path) -> None:
    loaded = check(
        tmp_path, "tools:\n  - name: a\n    description: d\n    colour: red\n    size: 3\n"
    )
    found = errors(loaded)
    assert [(line, col, field) for line, col, field, _ in found] == [
        (8, 5, "tools[0].colour"),
        (9, 5, "tools[0].size"),
    ]
    assert found[0][3].startswith("unknown field 'colour' (known fields: annotations, context,")


def test_unknown_top_level_field(tmp_path: Path) -> None:
    line, col, field, message = only_error(check(tmp_path, "tool:\n  - name: a\n"))
    assert (line, col, field) == (5, 1, "tool")
    assert "unknown field 'tool'" in message and "tools" in message


def test_missing_required_fields(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text("server:\n  title: x\n")
    found = errors(load_manifest(path))
    assert found == [
        (1, 1, "", "missing required field 'mcpgen'"),
        (2, 3, "server", "missing required field 'name'"),
    ]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("tools:\n", (5, 7, "tools", "expected array, got null")),
        (
            "tools:\n  - name: a\n    timeout: soon\n",
            (7, 14, "tools[0].timeout", 'expected number, got string "soon"'),
        ),
        (
            "capabilities:\n  pageSize: 0\n",
            (6, 13, "capabilities.pageSize", "0 must be at least 1"),
        ),
        (
            "transports:\n  default: tcp\n",
            (
                6,
                12,
                "transports.default",
                '"tcp" is not one of "stdio", "http", "sse", "websocket"',
            ),
        ),
        (
            "transports:\n  http: {path: mcp}\n",
            (6, 16, "transports.http.path", '"mcp" does not match the pattern ^/'),
        ),
        ("tools:\n  - name: ''\n", (6, 11, "tools[0].name", "must not be empty")),
        (
            "resources:\n  - name: r\n",
            (6, 5, "resources[0]", "give exactly one of 'uri' (a fixed resource) or 'uriTemplate'"),
        ),
        (
            "prompts:\n  - name: p\n    messages:\n      - role: user\n",
            (
                8,
                9,
                "prompts[0].messages[0]",
                "a message holds exactly one of 'text', 'resource', 'image' or 'audio'",
            ),
        ),
        (
            "$defs:\n  Good: {type: string}\n  bad-name: {type: string}\n",
            (
                7,
                3,
                "$defs.bad-name",
                'name "bad-name" must match the pattern ^[A-Za-z_][A-Za-z0-9_]*$',
            ),
        ),
    ],
)
def test_structural_messages(
    tmp_path: Path, body: str, expected: tuple[int, int, str, str]
) -> None:
    assert only_error(check(tmp_path, body)) == expected


def test_server_fields(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(f"mcpgen: 1\nserver:\n  name: {'x' * 100}\n  version: 1.10\n")
    found = errors(load_manifest(path))
    assert found[0][:3] == (3, 9, "server.name")
    assert (
        found[0][3] == '"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... must be at most 64 characters long'
    )
    # YAML reads 1.10 as the number 1.1: say how to keep the text
    assert found[1] == (
        4,
        12,
        "server.version",
        "expected string, got number 1.1 (put it in quotes to make it a string)",
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("2", "unsupported manifest version 2; this mcpgen reads version 1"),
        ('"1"', 'must be 1, not "1"'),
        ("true", "must be 1, not true"),
        ("[1]", "must be 1, not [1]"),
    ],
)
def test_manifest_version(tmp_path: Path, value: str, message: str) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(f"mcpgen: {value}\nserver: {{name: demo}}\n")
    assert only_error(load_manifest(path)) == (1, 9, "mcpgen", message)


@pytest.mark.parametrize("text", ["- a\n- b\n", "just text\n", "42\n", "null_is_not: [a]\n"])
def test_not_a_manifest(tmp_path: Path, text: str) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(text)
    loaded = load_manifest(path)
    assert loaded.manifest is None and loaded.problems.errors


@pytest.mark.parametrize(
    "body",
    [
        "transports: {http: x}\n",
        "transports: {default: [1]}\n",
        "transports: {offer: [{a: 1}]}\n",
        "transports: {http: {corsOrigins: 5}}\n",
        "auth: {type: apiKey, env: 5}\n",
        "auth: {type: apiKey, header: [1]}\n",
        "auth: {hideUnauthorizedTools: true}\nobservability: 3\n",
        "prompts: [{name: p, arguments: 5, messages: [{text: hi}]}]\n",
        "prompts: [{name: p, arguments: [{name: 5}], messages: [{text: hi}]}]\n",
        "prompts: [{name: p, arguments: [{name: [1]}], messages: [{text: hi}]}]\n",
        "resources: [{name: [1], uri: 'a://b'}]\n",
        "tools: [{name: [1]}]\n",
    ],
)
def test_a_malformed_field_is_reported_not_a_crash(tmp_path: Path, body: str) -> None:
    """The semantic checks read around what the structural check found malformed."""
    loaded = check(tmp_path, body)
    assert loaded.manifest is None and loaded.problems.errors


# -- semantics ----------------------------------------------------------------------------


def test_duplicate_tool_names_are_reported_once(tmp_path: Path) -> None:
    body = "tools:\n  - {name: a, description: x}\n  - {name: a, description: y}\n"
    assert only_error(check(tmp_path, body)) == (
        7,
        12,
        "tools[1].name",
        "duplicate tool name 'a' (first at tools[0])",
    )


@pytest.mark.parametrize("section", ["resources", "prompts"])
@pytest.mark.parametrize("names", [("a-b", "a_b"), ("cafe", "cafe\u0301")])
def test_two_names_with_one_python_name_are_reported_once(
    section: str, names: tuple[str, str], tmp_path: Path
) -> None:
    """Punctuation, or a combining accent (NFD) dropped: one identifier, one error (the
    typed client's method, made from it, is not a second one)."""
    first, second = names
    item = "uri: 'x://{n}'" if section == "resources" else "handler: true"
    body = f"{section}:\n" + "".join(
        f"  - {{name: '{n}', description: d, {item.format(n=i)}}}\n" for i, n in enumerate(names)
    )
    kind = section.removesuffix("s")
    assert only_error(check(tmp_path, body))[2:] == (
        f"{section}[1].name",
        f"{kind} {second!r} and {first!r} both become the Python name "
        f"{first.replace('-', '_')!r}; rename one",
    )


def test_model_class_collisions_still_reported(tmp_path: Path) -> None:
    # same class name, different Python names: A1b and a_1b -> A1b
    body = "tools:\n  - {name: a1b, description: x}\n  - {name: a_1b, description: y}\n"
    line, col, field, message = only_error(check(tmp_path, body))
    assert (line, col, field) == (7, 12, "tools[1].name")
    assert message == "model class 'A1bInput' for tool 'a_1b' collides with tools[0].name"
    # a tool whose model class is a shared definition's name
    body = "$defs:\n  AddInput: {type: string}\ntools:\n  - {name: add, description: x}\n"
    assert only_error(check(tmp_path, body))[3] == (
        "model class 'AddInput' for tool 'add' collides with $defs.AddInput"
    )


def test_output_schema_must_be_an_object(tmp_path: Path) -> None:
    body = "tools:\n  - name: a\n    description: d\n    output: {type: array}\n"
    assert only_error(check(tmp_path, body)) == (
        8,
        20,
        "tools[0].output.type",
        "a tool's output schema must have 'type: object', not \"array\"",
    )
    body = "tools:\n  - name: a\n    description: d\n    input: {properties: {}}\n"
    assert only_error(check(tmp_path, body))[2:] == (
        "tools[0].input",
        "a tool's input schema must have 'type: object'",
    )


def test_invalid_schema_type_lists(tmp_path: Path) -> None:
    body = "tools:\n  - name: a\n    description: d\n    input: {type: object, properties: {x: {type: [string, nul]}}}\n"
    _, _, field, message = only_error(check(tmp_path, body))
    assert field == "tools[0].input.properties.x.type"
    assert message.startswith(
        'not a valid JSON Schema (2020-12): ["string", "nul"] is not a JSON Schema type'
    )


@pytest.mark.parametrize(
    ("file", "message"),
    [
        ("/etc/passwd", "file paths are relative to the manifest's folder, not absolute"),
        ("a\\0b", "file path contains a NUL character"),
        (
            "x" * 5000,
            "cannot use file '" + "x" * 55 + "...': File name too long",  # clipped
        ),
        (".", "file '.' not found next to the manifest"),
    ],
)
def test_static_file_paths(tmp_path: Path, file: str, message: str) -> None:
    body = f'resources:\n  - {{name: r, description: d, uri: "a://r", file: "{file}"}}\n'
    assert only_error(check(tmp_path, body))[2:] == ("resources[0].file", message)


def test_static_file_inside_the_folder_is_fine(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n")
    loaded = check(
        tmp_path,
        'resources:\n  - {name: r, description: d, uri: "a://r", file: docs/../docs/a.md}\n',
    )
    assert loaded.manifest is not None, loaded.problems.items


def test_template_nested_too_deeply(tmp_path: Path) -> None:
    text = "{{ " + "(" * 5000 + " }}"
    body = f"prompts:\n  - name: p\n    description: d\n    messages:\n      - {{role: user, text: '{text}'}}\n"
    assert only_error(check(tmp_path, body))[2:] == (
        "prompts[0].messages[0].text",
        "template is nested too deeply",
    )


def test_completion_with_values_and_handler(tmp_path: Path) -> None:
    body = """\
    prompts:
      - name: p
        description: d
        arguments: [{name: lang}]
        messages: [{role: user, text: "{{ lang }}"}]
    completions:
      - {prompt: p, argument: lang, values: [py], handler: true}
    """
    assert only_error(check(tmp_path, body)) == (
        11,
        56,
        "completions[0].handler",
        "give 'values' or 'handler: true', not both",
    )


def test_all_semantic_errors_are_reported(tmp_path: Path) -> None:
    body = """\
    tools:
      - {name: "bad name", description: d}
      - {name: ok, description: d, input: {type: object, properties: {x: {$ref: "#/nope"}}}}
    resources:
      - {name: r, description: d, uri: "no-scheme"}
      - {name: t, description: d, uriTemplate: "a://{}"}
    """
    fields = [field for _, _, field, _ in errors(check(tmp_path, body))]
    assert fields == [
        "tools[0].name",
        "tools[1].input.properties.x.$ref",
        "resources[0].uri",
        "resources[1].uriTemplate",
    ]


def test_only_side_by_side_expressions_without_a_lead_character_are_refused(
    tmp_path: Path,
) -> None:
    """``{+a}{b}`` says nothing of where ``a`` ends; ``{+a}{.b}``, ``{a}{/b}``, ``{a}{?q}``
    and ``{+a}{#b}`` do: their operator writes a first character of its own."""
    fine = ["{+a}{.b}x", "{a}{/b}", "{a}{?q}", "{+a}{#b}", "{a}{;b}", "{a}-{b}", "{a,b}"]
    refused = ["{+a}{b}x", "{a}{b}", "{a}{+b}", "{?q}{a}", "{/a}{b}"]
    lines = [f'  - {{name: r{i}, description: d, uriTemplate: "a://{i}/{t}"}}\n'
             for i, t in enumerate(fine + refused)]  # fmt: skip
    found = errors(check(tmp_path, "resources:\n" + "".join(lines)))
    assert [field for _, _, field, _ in found] == [
        f"resources[{i}].uriTemplate" for i in range(len(fine), len(fine) + len(refused))
    ]
    assert all("side by side" in message for _, _, _, message in found)
    first = HEADER.count("\n") + 2 + len(fine)  # "resources:" is the line after the header
    assert found[0][:2] == (first, lines[len(fine)].index('"') + 1)  # the template's place


def test_json_and_yaml_manifests_get_the_same_problems(tmp_path: Path) -> None:
    body = "tools:\n  - {name: 'a b', colour: red}\n  - {name: c, timeout: -1}\n"
    from_yaml = check(tmp_path, body)
    data = yaml.safe_load(HEADER + body)
    path = tmp_path / "m.json"
    path.write_text(json.dumps(data, indent=2))
    from_json = load_manifest(path)
    assert [(f, m) for _, _, f, m in errors(from_yaml)] == [
        (f, m) for _, _, f, m in errors(from_json)
    ]
    assert all(line > 0 for line, _, _, _ in errors(from_json))


# -- warnings and strict mode -------------------------------------------------------------

WARNS = "tools:\n  - name: undocumented\n"


def test_missing_description_is_a_warning(tmp_path: Path) -> None:
    loaded = check(tmp_path, WARNS)
    assert loaded.manifest is not None
    assert [(p.location.line, p.field, p.message) for p in loaded.problems.warnings] == [
        (6, "tools[0]", "tool 'undocumented' has no description; models choose tools by it")
    ]
    strict = check(tmp_path, WARNS, strict=True)
    assert strict.manifest is None
    assert strict.problems.has_errors(strict=True)
    assert not strict.problems.errors


def test_cli_strict_mode_turns_warnings_into_failure(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(HEADER + WARNS)
    code, out, err = validate(str(path))
    assert code == 0
    assert out == f"{path}: ok (1 tool, 0 resources, 0 prompts, 1 warning)\n"
    assert err.count("warning:") == 1 and "error(s)" not in err
    code, out, err = validate(str(path), "--strict")
    assert code == 2
    assert out == ""
    assert err.splitlines() == [
        f"{path}:6:5: warning: tools[0]: tool 'undocumented' has no description; "
        "models choose tools by it",
        "0 error(s), 1 warning(s)",
    ]


def test_strict_mode_without_warnings(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(HEADER)
    assert validate(str(path), "--strict")[0] == 0


# -- exit codes ---------------------------------------------------------------------------


def test_exit_codes(tmp_path: Path) -> None:
    assert validate(str(ROOT / "manifests" / "calculator.yaml"))[0] == 0
    code, out, err = validate(str(tmp_path / "missing.yaml"))
    assert (code, out) == (2, "")
    assert err == f"{tmp_path / 'missing.yaml'}: error: file not found\n1 error(s), 0 warning(s)\n"
    assert validate(str(tmp_path))[0] == 2  # a folder
    bad = tmp_path / "bad.yaml"
    bad.write_text("mcpgen: [\n")
    assert validate(str(bad))[0] == 2
    usage = CliRunner().invoke(main, ["validate"])
    assert usage.exit_code == 2 and "Missing argument" in usage.stderr
    assert CliRunner().invoke(main, ["validate", "--help"]).exit_code == 0


def test_problems_are_sorted_and_deduplicated() -> None:
    problems = Problems()
    later = Problem(Level.ERROR, Location("f", 3, 1), "b", "m")
    earlier = Problem(Level.WARNING, Location("f", 1, 9), "a", "m")
    problems.extend([later, earlier, later])
    assert problems.sorted() == [earlier, later]
    assert problems.has_errors() and problems.has_errors(strict=True)
    assert earlier.format() == "f:1:9: warning: a: m"
    assert Problem(Level.ERROR, Location("f"), "", "m").format() == "f: error: m"


def test_schema_nesting_limit(tmp_path: Path) -> None:
    """Deep schemas are refused before the stages that recurse per level (metaschema check,
    model generation) can run out of stack."""

    def body(levels: int) -> str:
        inner = "{type: string}"
        for _ in range(levels):
            inner = "{items: " + inner + "}"
        return f"tools:\n  - name: a\n    description: d\n    input: {{type: object, properties: {{x: {inner}}}}}\n"

    # properties, x, items * 61, type: 64 levels inside the schema
    assert check(tmp_path, body(61)).manifest is not None
    line, col, field, message = only_error(check(tmp_path, body(62)))
    assert (field, message) == ("tools[0].input", "JSON Schema nested deeper than 64 levels")
    text = body(62).splitlines()[3]
    assert (line, col) == (8, text.index("string") + 1)


def _validate(tmp_path: Path, schema_lines: str, *args: str) -> tuple[int, list[str]]:
    """``mcpgen validate`` of a one-tool manifest whose input is ``schema_lines``."""
    from click.testing import CliRunner

    from mcpgen.cli import main

    manifest = tmp_path / "m.yaml"
    manifest.write_text(
        "mcpgen: 1\nserver: {name: books}\ntools:\n  - name: add_book\n    description: Add.\n"
        "    input:\n      type: object\n" + schema_lines,
        encoding="utf-8",
    )
    done = CliRunner().invoke(main, ["validate", str(manifest), *args])
    return done.exit_code, [line.split(": ", 1)[1] for line in done.output.splitlines()[:-1]]


def test_a_near_miss_of_a_keyword_inside_a_json_schema_is_an_error(tmp_path: Path) -> None:
    """``requried`` or ``propeties`` is no JSON Schema keyword: the field would quietly
    become optional, or (with additionalProperties false) the tool would accept nothing."""
    code, lines = _validate(tmp_path, "      properties: {isbn: {type: string}}\n"
                            "      requried: [isbn]\n")  # fmt: skip
    assert code == 2 and lines == [
        "error: tools[0].input.requried: 'requried' is not a JSON Schema keyword "
        "(did you mean 'required'?)"
    ]
    code, lines = _validate(tmp_path, "      propeties: {isbn: {type: string}}\n"
                            "      additionalProperties: false\n")  # fmt: skip
    assert code == 2 and lines == [
        "error: tools[0].input.propeties: 'propeties' is not a JSON Schema keyword "
        "(did you mean 'properties'?)"
    ]
    code, lines = _validate(tmp_path, "      additionalProperties: false\n      fields: {}\n")
    assert code == 2 and lines == [
        "error: tools[0].input.fields: 'fields' is not a JSON Schema keyword: with "
        "additionalProperties false and no properties, only an empty object is valid"
    ]


def test_an_unknown_word_far_from_any_keyword_is_a_warning_and_an_error_under_strict(
    tmp_path: Path,
) -> None:
    schema = "      properties: {isbn: {type: string}}\n      example: {isbn: x}\n"
    code, lines = _validate(tmp_path, schema)
    assert code == 0 and lines == [
        "warning: tools[0].input.example: 'example' is not a JSON Schema keyword; it is ignored"
    ]
    assert _validate(tmp_path, schema, "--strict")[0] == 2


def test_required_names_an_undeclared_property(tmp_path: Path) -> None:
    schema = "      properties: {color: {type: string}}\n      required: [color, colour]\n"
    code, lines = _validate(tmp_path, schema)
    assert code == 0 and lines == [
        "warning: tools[0].input.required[1]: required property 'colour' is not declared in "
        "properties (did you mean 'color'?)"
    ]
    assert _validate(tmp_path, schema, "--strict")[0] == 2
    code, lines = _validate(tmp_path, schema + "      additionalProperties: false\n")
    assert code == 2 and lines == [
        "error: tools[0].input.required[1]: required property 'colour' is not declared in "
        "properties and additionalProperties is false: no value can be valid "
        "(did you mean 'color'?)"
    ]
    # declared by a pattern, or by another part of an allOf: nothing to say
    code, lines = _validate(tmp_path, "      patternProperties: {'^c': {}}\n"
                            "      properties: {a: {}}\n      required: [colour]\n")  # fmt: skip
    assert (code, lines) == (0, [])
    code, lines = _validate(tmp_path, "      allOf: [{properties: {a: {}}}, {required: [a]}]\n")
    assert (code, lines) == (0, [])


_KEYS = ["properties", "items", "allOf", "anyOf", "$defs", "patternProperties", "not", "enum",
         "default", "const", "examples", "pattern", "$ref", "type", "x-note", "requried",
         "discriminator", "a(", "[x", "name", "required", "additionalProperties"]  # fmt: skip
_LEAVES = st.sampled_from(
    ["#/$defs/A", "#/nowhere", "http://x/s.json", "a(", "[x", "^a+$", 1, None, False]
)
_JSON = st.recursive(
    _LEAVES,
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(_KEYS), inner, max_size=4),
    max_leaves=25,
)


@settings(max_examples=400, deadline=None)
@given(_JSON)
def test_the_checks_locate_what_they_report(schema: Any) -> None:
    """The schema checks make a path only for a node with a problem (``schemas.located``):
    each path they report leads to what it reports on."""
    from mcpgen.check import schemas

    def at(path: tuple[Any, ...]) -> Any:
        node = schema
        for part in path:
            assert isinstance(node, dict | list) and (
                part in node if isinstance(node, dict) else part < len(node)
            )
            node = node[part]
        return node

    nodes = list(schemas.schema_nodes(schema))
    for lenient in (False, True):
        for path, _, _ in schemas.keyword_problems(nodes, lenient):
            at(path)
    for path, message in schemas.bad_patterns(nodes):
        key = path[-1] if path[-2:-1] == ("patternProperties",) else at(path)
        assert repr(key) in message
    for path, ref in schemas.refs(schema):
        assert at(path) == ref
    assert schemas.ref_strings(schema) == {ref for _, ref in schemas.refs(schema)}


def test_a_format_type_is_made_when_a_default_needs_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Defaults are checked against their format by the pydantic type the model uses; each
    type's adapter is made on its first string (making all 13 cost 45 ms of every build
    that checked a default: GitHub's needs ``uri`` only). No verdict kept by an earlier
    test or build answers for it (the cache off, the process's verdicts forgotten)."""
    from mcpgen.check import formats

    monkeypatch.setenv("MCPGEN_CACHE_DIR", "")
    formats._verdicts.cache_clear()
    formats._adapter.cache_clear()
    checker = formats.model_formats()
    assert checker.conforms(7, "uuid") and formats._adapter.cache_info().currsize == 0
    assert checker.conforms("2024-02-29", "date") and not checker.conforms("yesterday", "date")
    assert not checker.conforms("no uri", "uri") and checker.conforms("https://x.test/", "uri")
    assert formats._adapter.cache_info().currsize == 2
