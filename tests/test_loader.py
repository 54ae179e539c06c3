"""The loader: YAML/JSON to plain data with positions, and everything it refuses."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from mcpgen import load as loader
from mcpgen.load import (
    MAX_DEPTH,
    MAX_NODES,
    Document,
    json_text,
    load_file,
    load_text,
    yaml_text,
)
from mcpgen.problems import InputError, Level, Location, Problem

ROOT = Path(__file__).resolve().parent.parent
CALCULATOR = ROOT / "manifests" / "calculator.yaml"


def load(text: str, name: str = "m.yaml") -> Document:
    return load_text(text, name, Path("."), json_first=name.endswith(".json"))


def refused(text: str, name: str = "m.yaml") -> Problem:
    """The single error the loader raises for ``text``."""
    with pytest.raises(InputError) as info:
        load(text, name)
    assert len(info.value.problems) == 1
    problem = info.value.problems[0]
    assert problem.level is Level.ERROR
    return problem


def where(problem: Problem) -> tuple[int, int]:
    return problem.location.line, problem.location.column


@pytest.fixture(params=["c", "python"])
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test with libyaml's parser and with PyYAML's pure-Python fallback."""
    if request.param == "python":
        monkeypatch.setattr(yaml_text, "_Loader", yaml_text._PyLoader)
    return str(request.param)


# -- positions ----------------------------------------------------------------------------


CALCULATOR_LINES = CALCULATOR.read_text(encoding="utf-8").splitlines()


def at(line: int, token: str, after: str = "") -> Location:
    """Where ``token`` stands on ``line`` of calculator.yaml (after ``after``), found by text."""
    text = CALCULATOR_LINES[line - 1]
    start = text.index(after) + len(after) if after else 0
    return Location("manifests/calculator.yaml", line, text.index(token, start) + 1)


@pytest.fixture
def calculator(monkeypatch: pytest.MonkeyPatch) -> Document:
    monkeypatch.chdir(ROOT)
    return load_file(Path("manifests/calculator.yaml"))


def test_value_positions_in_block_and_flow_style(parser: str, calculator: Document) -> None:
    doc = calculator
    assert doc.locate(("mcpgen",)) == at(3, "1")
    assert doc.locate(("server", "name")) == at(5, "calculator")
    assert doc.locate(("server", "version")) == at(6, "0.1.0")
    assert doc.locate(("tools", 1, "name")) == at(37, "divide")
    # a flow mapping inside a block mapping
    assert doc.locate(("tools", 0, "annotations", "idempotentHint")) == at(
        20, "true", "idempotentHint:"
    )
    assert doc.locate(("tools", 1, "input", "properties", "b", "description")) == at(45, "Divisor")
    # a block mapping value starts at its first key
    assert doc.locate(("tools", 0, "input")) == at(22, "type")


def test_list_item_positions(parser: str, calculator: Document) -> None:
    doc = calculator
    assert doc.locate(("tools", 0)) == at(17, "name")  # after "- "
    assert doc.locate(("tools", 1)) == at(37, "name")
    assert doc.locate(("tools", 1, "input", "required")) == at(47, "[")
    assert doc.locate(("tools", 1, "input", "required", 0)) == at(47, "a")
    assert doc.locate(("tools", 1, "input", "required", 1)) == at(47, "b")


def test_key_positions(parser: str, calculator: Document) -> None:
    doc = calculator
    assert doc.locate(("server", "name"), key=True) == at(5, "name")
    assert doc.locate(("tools", 0, "annotations", "openWorldHint"), key=True) == at(
        20, "openWorldHint"
    )
    assert doc.locate(("$defs", "Number"), key=True) == at(12, "Number")
    # a value without a key (a list item) falls back to the value position
    assert doc.locate(("tools", 0), key=True) == at(17, "name")


def test_missing_paths_locate_their_nearest_ancestor() -> None:
    doc = load_file(CALCULATOR)
    assert doc.locate(("server", "nosuchfield")) == doc.locate(("server",))
    assert doc.locate(("tools", 99, "name")) == doc.locate(("tools",))
    assert doc.locate(()) == Location(doc.file, 3, 1)


def test_both_parsers_give_the_same_data_and_positions(monkeypatch: pytest.MonkeyPatch) -> None:
    with_c = load_file(CALCULATOR)
    monkeypatch.setattr(yaml_text, "_Loader", yaml_text._PyLoader)
    pure = load_file(CALCULATOR)
    assert with_c.data == pure.data
    assert with_c.positions == pure.positions


def test_multiline_and_quoted_scalars_start_where_they_start() -> None:
    doc = load("a: |\n  one\n  two\nb: >-\n  folded\nc: \"quoted\"\nd:\n  - 'x'\n")
    assert doc.data == {"a": "one\ntwo\n", "b": "folded", "c": "quoted", "d": ["x"]}
    assert doc.locate(("a",)) == Location("m.yaml", 1, 4)
    assert doc.locate(("b",)) == Location("m.yaml", 4, 4)
    assert doc.locate(("c",)) == Location("m.yaml", 6, 4)
    assert doc.locate(("d", 0)) == Location("m.yaml", 8, 5)


def test_json_positions_match_yaml_positions() -> None:
    data = json.loads(json.dumps(load_file(CALCULATOR).data))
    text = json.dumps(data, indent=2)
    from_json = load(text, "m.json")
    assert from_json.data == data
    composed = yaml_text._compose(text, "m.json")[1]
    scanned = json_text._json_positions(from_json.text, from_json.file)
    assert scanned.values == composed.values
    assert scanned.keys == composed.keys


def test_json_positions_with_tabs_escapes_and_long_keys() -> None:
    """Valid JSON that PyYAML cannot read as YAML still gets positions (and no crash)."""
    long_key = "k" * 2000
    text = '{\t"a":\t[1,\t{"b\\"\\u00e9": "x\\n"}],\n\t"' + long_key + '": null}'
    doc = load(text, "m.json")
    assert doc.data == {"a": [1, {'b"é': "x\n"}], long_key: None}
    assert doc.locate(("a",)) == Location("m.json", 1, 8)
    assert doc.locate(("a", 1, 'b"é')) == Location("m.json", 1, text.index('"x') + 1)
    assert doc.locate(("a", 1, 'b"é'), key=True) == Location("m.json", 1, text.index('"b') + 1)
    assert doc.locate((long_key,), key=True) == Location("m.json", 2, 2)


# -- scalars: YAML 1.2, JSON-compatible ---------------------------------------------------


def test_yaml_11_booleans_dates_and_sexagesimals_stay_strings() -> None:
    doc = load(
        "a: yes\nb: no\nc: on\nd: off\ne: y\nf: N\ng: 2024-01-31\nh: 1:30\ni: 12:30:00\n"
        "j: true\nk: False\nl: TRUE\nm: ~\nn: null\no:\np: 0o17\nq: 0x1F\nr: 017\ns: -3\n"
        "t: 1.5\nu: 1e3\nv: .5\nw: +7\nx: 1_000\ny: '1'\nz: !!str 2\n"
    )
    assert doc.data == {
        "a": "yes",
        "b": "no",
        "c": "on",
        "d": "off",
        "e": "y",
        "f": "N",
        "g": "2024-01-31",
        "h": "1:30",
        "i": "12:30:00",
        "j": True,
        "k": False,
        "l": True,
        "m": None,
        "n": None,
        "o": None,
        "p": 15,
        "q": 31,
        "r": 17,
        "s": -3,
        "t": 1.5,
        "u": 1000.0,
        "v": 0.5,
        "w": 7,
        "x": "1_000",
        "y": "1",
        "z": "2",
    }


def test_non_string_keys_become_strings() -> None:
    doc = load("200: a\ntrue: b\n1.5: c\nnull: d\n~: e\non: f\n0x10: g\n")
    assert doc.data == {
        "200": "a",
        "true": "b",
        "1.5": "c",
        "null": "d",
        "~": "e",
        "on": "f",
        "0x10": "g",
    }
    assert all(isinstance(k, str) for k in doc.data)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: .nan\n", "NaN and Infinity are not JSON values"),
        ("a: .inf\n", "NaN and Infinity are not JSON values"),
        ("a: -.Inf\n", "NaN and Infinity are not JSON values"),
        ("a: 1e400\n", "number 1e400 is too large"),
        ("a: " + "1" * 5000 + "\n", "number 11111111111111111... is too large"),
        ("a: 0x" + "f" * 2000 + "\n", "number 0xfffffffffffffff... is too large"),
        ('a: !!float "nan"\n', "'nan' is not a valid !!float"),
    ],
)
def test_nan_and_infinity_are_refused_in_yaml(text: str, message: str) -> None:
    problem = refused(text)
    assert problem.message == message
    assert where(problem) == (1, 4)
    assert problem.field == "a"


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e400", "9" * 5000])
def test_nan_and_infinity_are_refused_in_json(value: str) -> None:
    problem = refused('{"a": 1,\n "b": [2, ' + value + "]}", "m.json")
    assert where(problem) == (2, 11)
    assert problem.field == "b[1]"
    expected = "NaN and Infinity are not JSON values"
    if value[0].isdigit():
        expected = f"number {value if len(value) < 20 else '9' * 17 + '...'} is too large"
    assert problem.message == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('a: !!int "12"\n', None),
        ("a: !!int abc\n", "'abc' is not a valid !!int"),
        ("a: !!bool maybe\n", "'maybe' is not a valid !!bool"),
        ("a: !!null x\n", "'x' is not a valid !!null"),
        ("a: !!binary aGVsbG8=\n", "unsupported YAML tag '!!binary'"),
        ("a: !!timestamp 2024-01-01\n", "unsupported YAML tag '!!timestamp'"),
        ("a: !custom x\n", "unsupported YAML tag '!custom'"),
        ("a: !!python/object:os.system x\n", "unsupported YAML tag '!!python/object:os.system'"),
        ("a: !!set {x, y}\n", "unsupported YAML tag '!!set'"),
        ("a: !!omap [x: 1]\n", "unsupported YAML tag '!!omap'"),
    ],
)
def test_explicit_tags(text: str, message: str | None) -> None:
    if message is None:
        assert load(text).data == {"a": 12}
        return
    problem = refused(text)
    assert problem.message == message
    assert where(problem) == (1, 4)
    assert problem.field == "a"


def test_tagged_keys_are_refused() -> None:
    problem = refused("!!python/name:os.system k: 1\n")
    assert problem.message == "unsupported YAML tag '!!python/name:os.system'"


def test_complex_and_merge_keys_are_refused() -> None:
    assert refused("? [a, b]\n: 1\n").message == "mapping keys must be plain scalars"
    problem = refused("base: &b {x: 1}\nother:\n  <<: *b\n")
    assert problem.message == "YAML merge keys (<<) are not supported"
    assert (where(problem), problem.field) == ((3, 3), "other")
    assert load("'<<': 1\n").data == {"<<": 1}  # a quoted '<<' is just a key


# -- duplicate keys -----------------------------------------------------------------------


def test_duplicate_yaml_key_names_both_places(parser: str) -> None:
    problem = refused("tools:\n  - name: a\n    title: t\n    name: b\n")
    assert problem.message == "duplicate key 'name' (first at line 2, column 5)"
    assert where(problem) == (4, 5)
    assert problem.field == "tools[0].name"


def test_keys_equal_as_text_are_duplicates() -> None:
    problem = refused('1: a\n"1": b\n')
    assert problem.message.startswith("duplicate key '1'")


@pytest.mark.parametrize("name", ["m.json", "m.yaml"])
def test_duplicate_json_key(name: str) -> None:
    problem = refused('{"a": {"x": 1,\n  "y": 2, "x": 3}}', name)
    assert problem.message == "duplicate key 'x' (first at line 1, column 8)"
    assert where(problem) == (2, 11)
    assert problem.field == "a.x"


# -- JSON syntax --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message", "at"),
    [
        ('{"a": 1,}', "invalid JSON: Expecting property name enclosed in double quotes", (1, 9)),
        ('{"a": 1\n "b": 2}', "invalid JSON: Expecting ',' delimiter", (2, 2)),
        ("{a: 1}", "invalid JSON: Expecting property name enclosed in double quotes", (1, 2)),
        ('{"a": 1} x', "invalid JSON: Extra data", (1, 10)),
        ("mcpgen: 1\n", "invalid JSON: Expecting value", (1, 1)),
    ],
)
def test_json_files_must_be_json(text: str, message: str, at: tuple[int, int]) -> None:
    problem = refused(text, "m.json")
    assert (problem.message, where(problem)) == (message, at)


def test_yaml_file_may_use_flow_style_that_is_not_json() -> None:
    assert load("{a: 1, b: [x, y],}").data == {"a": 1, "b": ["x", "y"]}


# -- YAML syntax and documents ------------------------------------------------------------


def test_yaml_syntax_error_names_the_start_of_the_construct(parser: str) -> None:
    problem = refused('a: 1\nb: "open\n')
    assert problem.message == (
        "invalid YAML: found unexpected end of stream "
        "(while scanning a quoted scalar at line 2, column 4)"
    )
    assert where(problem) == (3, 1)


def test_tab_indentation_gets_a_hint(parser: str) -> None:
    problem = refused("a:\n\tb: 1\n")
    assert problem.message == "invalid YAML: a tab character is not allowed here; use spaces"
    assert where(problem) == (2, 1)


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_control_characters_are_located(parser: str, newline: str) -> None:
    problem = refused(f"a: é{newline}b: x\x1b{newline}")
    assert problem.message == "invalid YAML: character '\\x1b' (U+001B) is not allowed"
    assert where(problem) == (2, 5)


def test_undefined_alias_is_named(parser: str) -> None:
    problem = refused("a: 1\nb: *nope\n")
    assert problem.message.startswith("invalid YAML: found undefined alias")
    assert "nope" in problem.message
    assert where(problem) == (2, 4)


def test_more_than_one_document(parser: str) -> None:
    problem = refused("a: 1\n---\nb: 2\n")
    assert problem.message == "invalid YAML: the file holds more than one YAML document"
    assert where(problem) == (2, 1)


def test_explicit_single_document_markers_are_fine() -> None:
    assert load("%YAML 1.2\n---\na: 1\n...\n").data == {"a": 1}


@pytest.mark.parametrize("text", ["", "   \n\n", "# only a comment\n", "---\n", "---\n...\n"])
def test_empty_documents(text: str) -> None:
    problem = refused(text)
    assert problem.message == "file is empty"
    assert where(problem) == (1, 1)


def test_top_level_scalar_loads_as_data() -> None:
    assert load("just text\n").data == "just text"  # validation says it is not a manifest


# -- limits -------------------------------------------------------------------------------


def nested(depth: int) -> str:
    """A mapping key holding ``depth`` nested lists: the innermost is at len(path) == depth."""
    return "a: " + "[" * depth + "]" * depth + "\n"


def test_depth_limit_boundary(parser: str) -> None:
    assert load(nested(MAX_DEPTH)).data is not None
    problem = refused(nested(MAX_DEPTH + 1))
    assert problem.message == f"nesting deeper than {MAX_DEPTH} levels"
    assert where(problem) == (1, 4 + MAX_DEPTH)
    assert problem.field == "a[0][0][0][0][0]..."


def test_depth_limit_in_json() -> None:
    ok = '{"a": ' + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "}"
    assert load(ok, "m.json").data is not None
    problem = refused('{"a": ' + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "}", "m.json")
    assert problem.message == f"nesting deeper than {MAX_DEPTH} levels"
    assert where(problem) == (1, 7 + MAX_DEPTH)


def test_depth_limit_in_json_with_a_mapping_of_scalars_last() -> None:
    # the innermost mapping holds no container: the collector does not track it, and
    # ``too_deep`` must still count its level
    def text(lists: int) -> str:
        return '{"a": ' + "[" * lists + '{"k": 1, "s": "x"}' + "]" * lists + "}"

    assert load(text(MAX_DEPTH - 2), "m.json").data is not None
    problem = refused(text(MAX_DEPTH - 1), "m.json")
    assert problem.message == f"nesting deeper than {MAX_DEPTH} levels"
    assert json_text.too_deep({"a": [{}]}, 2) and not json_text.too_deep({"a": [{}]}, 3)
    assert json_text.too_deep([[{"k": "v"}]], 2) and not json_text.too_deep([[{"k": 1}]], 3)
    assert json_text.too_deep([[[]]], 2) and not json_text.too_deep([[[]], {"k": 1}], 3)


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_very_deep_nesting_is_refused_quickly_with_a_location(parser: str, depth: int) -> None:
    message = f"nesting deeper than {MAX_DEPTH} levels"
    for text in (nested(depth), "a: " + "[" * depth):  # closed or not, the same place
        problem = refused(text)
        assert (problem.message, where(problem)) == (message, (1, 4 + MAX_DEPTH))
        assert problem.field == "a[0][0][0][0][0]..."
    problem = refused("a: " + "{x: " * depth)
    assert (problem.message, problem.field) == (message, "a.x.x.x.x.x...")
    assert where(problem) == (1, 4 + 4 * MAX_DEPTH)
    block = "a:\n" + "".join("  " * i + "-\n" for i in range(min(depth, 1500)))
    problem = refused(block)
    assert (problem.message, where(problem)) == (message, (MAX_DEPTH + 2, 2 * MAX_DEPTH + 1))


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_very_deep_json(depth: int) -> None:
    problem = refused('{"a": ' + "[" * depth + "]" * depth + "}", "m.json")
    assert problem.message == f"nesting deeper than {MAX_DEPTH} levels"
    assert where(problem) == (1, 7 + MAX_DEPTH)


def billion_laughs(levels: int = 9) -> str:
    lines = ["mcpgen: 1", 'l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_alias_bomb_is_refused_fast_and_located(parser: str) -> None:
    start = time.perf_counter()
    problem = refused(billion_laughs())
    assert time.perf_counter() - start < 2
    assert problem.message == f"expands to more than {MAX_NODES} values (YAML alias bomb?)"
    assert problem.field == "l6"  # 9**7 values: the first field that is too big on its own
    assert where(problem) == (8, 5)


def test_many_small_aliases_are_fine() -> None:
    text = "base: &b {type: string, description: shared}\nitems:\n" + "  - *b\n" * 2000
    doc = load(text)
    assert len(doc.data["items"]) == 2000
    assert doc.data["items"][0] == {"type": "string", "description": "shared"}
    assert doc.data["items"][0] is not doc.data["items"][1]  # plain, independent data


def test_many_values_without_aliases(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yaml_text, "MAX_NODES", 50)
    problem = refused("a: [" + ", ".join(["1"] * 60) + "]\n")
    assert problem.message == "expands to more than 50 values"
    assert problem.field == "a"


def test_recursive_alias(parser: str) -> None:
    problem = refused("a: &a\n  b: [1, *a]\n")
    assert "alias refers to a collection that contains it" in problem.message
    assert problem.field == "a.b[1]"
    assert where(problem) == (1, 4)


def test_size_limit(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text("a: " + "x" * 200 + "\n")
    with pytest.raises(InputError) as info:
        load_file(path, max_bytes=100)
    assert "larger than the limit of 100 bytes" in info.value.problems[0].message
    assert load_file(path, max_bytes=1000).data == {"a": "x" * 200}
    assert loader.MAX_MANIFEST_BYTES == 8 * 1024 * 1024


# -- files --------------------------------------------------------------------------------


def test_file_problems(tmp_path: Path) -> None:
    def message(path: Path) -> str:
        with pytest.raises(InputError) as info:
            load_file(path)
        return info.value.problems[0].message

    assert message(tmp_path / "missing.yaml") == "file not found"
    assert message(tmp_path) == "not a regular file"
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes(b"a: caf\xe9\n")
    with pytest.raises(InputError) as info:
        load_file(bad)
    problem = info.value.problems[0]
    assert problem.message == "file is not valid UTF-8 (byte 0xe9)"
    assert where(problem) == (1, 7)


def test_byte_order_mark_and_crlf(tmp_path: Path) -> None:
    path = tmp_path / "bom.yaml"
    path.write_bytes(b"\xef\xbb\xbfa: 1\r\nb: [x, y]\r\n")
    doc = load_file(path)
    assert doc.data == {"a": 1, "b": ["x", "y"]}
    assert doc.locate(("b", 1)) == Location(doc.file, 2, 8)
    json_path = tmp_path / "bom.json"
    json_path.write_bytes(b'\xef\xbb\xbf{"a":\r\n 1}')
    doc = load_file(json_path)
    assert doc.data == {"a": 1}
    assert doc.locate(("a",)) == Location(doc.file, 2, 2)


def test_display_path_is_relative_inside_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    assert loader.display_path(tmp_path / "sub" / "m.yaml") == str(Path("sub") / "m.yaml")
    outside = tmp_path.parent / "elsewhere.yaml"
    assert loader.display_path(outside) == str(outside)


def test_problem_text_is_one_printable_line() -> None:
    problem = refused('{"a\\u001b[31m\\nb": 1, "a\\u001b[31m\\nb": 2}', "m.json")
    text = problem.format()
    assert "\n" not in text and "\x1b" not in text
    assert "a\\x1b[31m\\nb" in text


def test_a_lone_surrogate_is_refused_whether_the_text_was_read_or_given(tmp_path: Path) -> None:
    """A file's text is decoded from UTF-8, which has no surrogate: only an escape can make
    one. Text given as a string (a file at a git revision) may hold one itself."""
    with pytest.raises(InputError, match="surrogate"):
        loader.load_text('{"a": "x\ud800"}', "m.json", tmp_path, json_first=True)
    (tmp_path / "m.json").write_text('{"a": "x\\ud800"}', "utf-8")
    with pytest.raises(InputError, match="surrogate"):
        loader.load_file(tmp_path / "m.json")
    (tmp_path / "m.json").write_bytes(b'{"a": "x\xed\xa0\x80"}')  # a surrogate's UTF-8 bytes
    with pytest.raises(InputError, match="not valid UTF-8"):
        loader.load_file(tmp_path / "m.json")
