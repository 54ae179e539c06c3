"""What one tool call can make the server's JSON Schema checks do (round 23, m9; review r7).

Arguments a strict model does not take, and results, are checked by jsonschema on the event
loop: every other request waits. Some of its keywords did work quadratic in the instance,
or found every problem before the caller's cap on the ones it reads (``MAX_ERRORS``):

- ``uniqueItems`` compares every pair of items it cannot sort (a string among 8,000
  numbers: 21 s; 10,000 objects: 94 s);
- ``anyOf``, ``oneOf`` keep every problem of every branch in the error's ``context``
  (400,000 items, every other one a string: 20 s and 580 MB);
- ``unevaluatedItems``, ``unevaluatedProperties`` search a list of the evaluated ones for
  each item.

``bounded.KEYWORDS`` does each in linear work; the tests count the work (comparisons,
problems made, list items searched), not the time. The property test checks their verdicts
and top-level errors are jsonschema's own on small random schemas and instances.
"""

from __future__ import annotations

import re
import tracemalloc
from collections.abc import Iterator
from typing import Any, ClassVar

import anyio
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator, _keywords, _utils
from jsonschema.exceptions import ValidationError
from mcp.shared.exceptions import MCPError

from mcpgen.runtime import bounded, operation_binding, schemas, tools
from mcpgen.runtime.tools import ToolBinding


@pytest.fixture
def comparisons(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many times jsonschema compares two values (``_utils.equal``)."""
    count = [0]
    equal = _utils.equal

    def counted(one: Any, two: Any) -> bool:
        count[0] += 1
        return bool(equal(one, two))

    monkeypatch.setattr(_utils, "equal", counted)
    yield count


@pytest.fixture
def problems(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many problems (``ValidationError``) the validators make."""
    count = [0]
    init = ValidationError.__init__

    def counted(self: Any, *args: Any, **kwargs: Any) -> None:
        count[0] += 1
        init(self, *args, **kwargs)

    monkeypatch.setattr(ValidationError, "__init__", counted)
    yield count


UNIQUE = {"type": "array", "uniqueItems": True}


@pytest.mark.parametrize(
    "items",
    [
        ["a"] + [i + 0.5 for i in range(2000)],  # r7's: a string among numbers (unsortable)
        [{"n": i} for i in range(2000)],  # objects
        [[i, "x"] for i in range(1000)] + [["x", i] for i in range(1000)],
    ],
    ids=["mixed", "objects", "arrays"],
)
def test_unique_items_is_linear(comparisons: list[int], items: list[Any]) -> None:
    """Distinct items are told distinct without comparing pairs (jsonschema: 2 million
    comparisons for 2,000 items), and a repeat at the end is still found."""
    check = schemas.validator(UNIQUE)
    assert check.is_valid(items)
    repeated = [*items, items[len(items) // 2]]
    (error,) = check.iter_errors(repeated)
    assert error.message.endswith(" has non-unique elements") and error.validator == "uniqueItems"
    assert comparisons[0] <= len(items), comparisons[0]


@pytest.mark.parametrize(
    ("one", "two", "same"),
    [
        (1, 1.0, True),
        (True, 1, False),
        (False, 0, False),
        ({"a": 1, "b": [2.0]}, {"b": [2], "a": 1.0}, True),
        ([1, True], [1, 1], False),
        ({"a": None}, {"a": False}, False),
        ("1", 1, False),
        (2**60 + 1, float(2**60), False),
        (-0.0, 0, True),
    ],
)
def test_unique_items_equality_is_json_schemas(one: Any, two: Any, same: bool) -> None:
    check = schemas.validator(UNIQUE)
    assert check.is_valid(["x", one, two]) is not same
    assert Draft202012Validator(UNIQUE).is_valid(["x", one, two]) is not same


UNION = {
    "type": "object",
    "properties": {
        "numbers": {"anyOf": [{"type": "array", "items": {"type": "number"}}, {"type": "null"}]},
        "picked": {"oneOf": [{"type": "array", "items": {"type": "number"}}, {"type": "null"}]},
    },
}


@pytest.mark.parametrize("name", ["numbers", "picked"])
def test_a_union_does_not_find_every_problem_of_a_branch(problems: list[int], name: str) -> None:
    """r7's: 20,000 invalid items under an ``anyOf`` (or ``oneOf``) branch: the call's answer
    is made of a few problems (jsonschema made 20,000 and kept them in the error's context)."""
    binding = ToolBinding({"name": "t", "inputSchema": UNION}, call=None)  # type: ignore[arg-type]
    (problem,) = binding.argument_errors({name: [0.5, "a"] * 20_000})
    assert problem.startswith(f"{name}: [0.5, 'a',") and "not valid under any of" in problem
    assert problems[0] <= 2 * bounded.CONTEXT + 2, problems[0]
    (error,) = binding.validator.iter_errors({name: [0.5, "a"] * 20_000})
    *first, other = [e.message for e in error.context]
    assert first == ["'a' is not of type 'number'"] * bounded.CONTEXT
    assert other.endswith("is not of type 'null'")


def test_one_of_still_refuses_two_valid_branches() -> None:
    check = schemas.validator({"oneOf": [{"type": "integer"}, {"minimum": 0}, {"maximum": 9}]})
    assert check.is_valid(-1.5) and check.is_valid(10.5) and not check.is_valid(-1)
    (error,) = check.iter_errors(3)
    each = "{'minimum': 0}, {'maximum': 9}, {'type': 'integer'}"
    assert error.message == f"3 is valid under each of {each}"


class Searched(list[Any]):
    """A list that counts the items its ``in`` searches (what jsonschema's unevaluated
    keywords did for each item)."""

    searched = 0

    def __contains__(self, value: object) -> bool:
        Searched.searched += len(self)
        return list.__contains__(self, value)


@pytest.mark.parametrize(
    ("schema", "instance", "finder"),
    [
        (
            {"contains": {"type": "number"}, "unevaluatedItems": False},
            list(range(3000)),
            "find_evaluated_item_indexes_by_schema",
        ),
        (  # (not patternProperties: ``patterns`` has its own finder, a set)
            {"additionalProperties": {}, "unevaluatedProperties": False},
            {f"k{i}": i for i in range(3000)},
            "find_evaluated_property_keys_by_schema",
        ),
    ],
    ids=["items", "properties"],
)
def test_unevaluated_keywords_do_not_search_a_list_per_item(
    monkeypatch: pytest.MonkeyPatch, schema: Any, instance: Any, finder: str
) -> None:
    """Each item (property) is looked up in a set of the evaluated ones: jsonschema
    searched a list of them for each, 4.5 million steps for 3,000 items."""
    found = getattr(_utils, finder)
    monkeypatch.setattr(Searched, "searched", 0)
    for module in (_utils, _keywords):
        monkeypatch.setattr(module, finder, lambda *a: Searched(found(*a)))
    check = schemas.validator(schema)
    assert check.is_valid(instance)
    assert Searched.searched <= len(instance), Searched.searched


UNEVALUATED = {
    "type": "object",
    "properties": {
        "a": {"type": "integer"},
        "items": {"type": "array", "prefixItems": [{}], "unevaluatedItems": False},
    },
    "unevaluatedProperties": False,
}


@pytest.mark.parametrize(
    ("arguments", "told"),
    [
        ({f"k{i:05}": 0 for i in range(20_000)}, "'k00019' and 19980 more were unexpected)"),
        ({"items": list(range(20_001))}, "20 and 19980 more were unexpected)"),
    ],
    ids=["properties", "items"],
)
def test_an_unevaluated_keywords_error_names_a_few(
    problems: list[int], arguments: Any, told: str
) -> None:
    """20,000 unevaluated keys (items) under a false ``unevaluated*``: one problem, naming
    the first ``NAMES`` and the count (jsonschema's made 20,000 problems, 40,000 for keys,
    and named every one)."""
    binding = ToolBinding({"name": "t", "inputSchema": UNEVALUATED}, call=None)  # type: ignore[arg-type]
    (problem,) = binding.argument_errors(arguments)
    assert problem.endswith(told) and len(problem) < 400, problem
    assert problems[0] <= 2, problems[0]


def test_an_invalid_unevaluated_property_is_named_a_few_times(problems: list[int]) -> None:
    """A key whose value has 20,000 problems under ``unevaluatedProperties``: jsonschema's
    named it once for each, after finding all of them."""
    schema = {"unevaluatedProperties": {"type": "array", "items": {"type": "number"}}}
    binding = ToolBinding({"name": "t", "inputSchema": schema}, call=None)  # type: ignore[arg-type]
    (problem,) = binding.argument_errors({"k": ["a"] * 20_000})
    assert problem.endswith(", 'k' and more were unevaluated and invalid)"), problem
    assert problem.count("'k'") == bounded.NAMES
    assert problems[0] <= bounded.NAMES + 3, problems[0]  # (+ the finder's, the error)


def test_a_few_unevaluated_ones_are_named_as_jsonschema_does() -> None:
    arguments = {"a": 1, "zz": 2, "yy": [1], "items": [0, "x", None]}
    binding = ToolBinding({"name": "t", "inputSchema": UNEVALUATED}, call=None)  # type: ignore[arg-type]
    theirs = Draft202012Validator(UNEVALUATED).iter_errors(arguments)
    assert binding.argument_errors(arguments) == [
        tools.located(e.absolute_path, e.message) for e in sorted(theirs, key=lambda e: e.path)
    ]
    assert binding.argument_errors({"zz": 2}) == [
        "(arguments): Unevaluated properties are not allowed ('zz' was unexpected)"
    ]


def test_a_long_unevaluated_key_is_quoted_in_part() -> None:
    binding = ToolBinding({"name": "t", "inputSchema": UNEVALUATED}, call=None)  # type: ignore[arg-type]
    (problem,) = binding.argument_errors({"x" * 1_000_000: 0})
    assert problem.endswith("x... (1000000 characters) was unexpected)"), problem
    assert len(problem) < 200


CLOSED = {"type": "object", "properties": {"a": {}}, "additionalProperties": False}
PATTERNED = {**CLOSED, "patternProperties": {"^x": {}}}
EMPTY_PATTERNS = {**CLOSED, "patternProperties": {}}  # (found by review r12)
UNKNOWN = {"a": 0, **{f"k{i:05}": 0 for i in range(100_000)}}


@pytest.mark.parametrize(
    ("schema", "arguments", "told"),
    [
        (CLOSED, UNKNOWN, "'k00019' and 99980 more were unexpected)"),
        (PATTERNED, UNKNOWN, "'k00019' and 99980 more do not match any of the regexes: '^x'"),
        (CLOSED, {"y" * 1_000_000: 0}, "yyy... (1000000 characters) was unexpected)"),
        (EMPTY_PATTERNS, UNKNOWN, "'k00019' and 99980 more do not match any of the regexes: "),
    ],
    ids=["properties", "patternProperties", "long", "empty patternProperties"],
)
def test_a_false_additional_properties_names_a_few(schema: Any, arguments: Any, told: str) -> None:
    """100,000 keys a false ``additionalProperties`` refuses: its error names the first
    ``NAMES`` and the count, a long one by its start (jsonschema's named every one, whole:
    a 1 MB message); a few keys, jsonschema's words."""
    (error,) = schemas.validator(schema).iter_errors(arguments)
    assert error.message.endswith(told) and len(error.message) < 400, error.message[-200:]
    few = {"a": 0, "k1": 0, "k2": 0}
    (mine,) = schemas.validator(schema).iter_errors(few)
    assert mine.message == next(Draft202012Validator(schema).iter_errors(few)).message


def test_unknown_arguments_cost_little_memory() -> None:
    """The problem of 100,000 unknown arguments: no list of their names is made, nor the
    ``repr`` of the arguments (``tools._quoted``, looking for it in the message): 12 MB of
    tracemalloc peak before (50 MB for 400,000 keys), a few kB now."""
    binding = ToolBinding({"name": "t", "inputSchema": CLOSED}, call=None)  # type: ignore[arg-type]
    assert binding.validator is not None  # (built outside the measure)
    tracemalloc.start()
    try:
        (problem,) = binding.argument_errors(UNKNOWN)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert problem.endswith("and 99980 more were unexpected); known: a"), problem
    assert peak < 100_000, peak


def test_a_resource_uri_makes_a_few_problems(problems: list[int]) -> None:
    """An imported resource template's variable, an array of integers, given 20,000 items
    none of which is one: the read is refused naming 5 problems, and 5 are made (every one
    was, and kept: an 800 kB URI of 400,000 items, 4.6 s on the event loop)."""
    schema = {
        "type": "object",
        "properties": {"ids": {"type": "array", "items": {"type": "integer"}}},
    }
    read = operation_binding.resource_read(None, {"params": []}, schema)  # type: ignore[arg-type]
    with pytest.raises(MCPError) as refused:
        anyio.run(read, {"ids": ",".join(["a"] * 20_000)}, None)
    assert str(refused.value).count("'a' is not of type 'integer'") == 5, str(refused.value)
    assert problems[0] <= 5, problems[0]


class Searches:
    """Python's ``re`` for jsonschema's ``_utils``, counting its searches."""

    searched: ClassVar[list[str]] = []

    @staticmethod
    def search(pattern: str, text: str) -> Any:
        Searches.searched.append(pattern)
        return re.search(pattern, text)


def test_unevaluated_properties_match_pattern_properties_in_linear_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The keys ``patternProperties`` evaluated are told with ``patterns.matcher`` (linear
    time), not Python's backtracking ``re`` (jsonschema's: ``^(a+)+$`` against 40 letters
    and a ``b`` is 2**40 steps)."""
    monkeypatch.setattr(_utils, "re", Searches)
    monkeypatch.setattr(Searches, "searched", [])
    schema = {
        "type": "object",
        "allOf": [{"patternProperties": {"^(a+)+$": {}}}],
        "patternProperties": {"^b": {}},
        "unevaluatedProperties": False,
    }
    check = schemas.validator(schema)
    assert check.is_valid({"a" * 40: 1, "b" * 40: 2})
    (error,) = check.iter_errors({"a" * 20 + "b": 1, "bb": 2, "aa": 3})
    assert error.message == f"Unevaluated properties are not allowed ('{'a' * 20}b' was unexpected)"
    assert not Searches.searched, Searches.searched


def test_a_long_string_is_quoted_with_its_own_length() -> None:
    """The ``(N characters)`` of a long quoted value counts the string's characters, not its
    ``repr``'s (1,000 backslashes were said to be 2,002 characters)."""
    schema = {"type": "object", "properties": {"n": {"type": "number"}}}
    binding = ToolBinding({"name": "t", "inputSchema": schema}, call=None)  # type: ignore[arg-type]
    (problem,) = binding.argument_errors({"n": "\\" * 1000})
    assert problem.endswith("... (1000 characters) is not of type 'number'"), problem


# Small random schemas of the keywords above and the ones that take subschemas.
KEYS = ["a", "b", "ka"]
JSON = st.recursive(
    st.sampled_from([None, True, False, 0, 1, 2, 1.0, 0.5, -0.0, "", "a", "1"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(KEYS), inner),
    max_leaves=10,
)
INSTANCE = JSON | st.lists(JSON, min_size=2, max_size=5)  # more arrays, more repeats
LEAF = st.sampled_from(
    [
        True,
        False,
        {},
        {"type": "number"},
        {"type": "array"},
        {"type": "object"},
        {"type": ["string", "null"]},
        {"minimum": 1},
        {"const": 1},
        {"enum": [0, "a", [1]]},
        {"uniqueItems": True},
        {"type": "array", "uniqueItems": True},
        {"minItems": 2},
        {"required": ["a"]},
    ]
)


UNARY = ("additionalProperties", "unevaluatedItems", "unevaluatedProperties")


def keyword(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    branches = st.lists(inner, min_size=1, max_size=3)
    named = st.dictionaries(st.sampled_from(KEYS), inner, max_size=2)
    return st.one_of(
        *(branches.map(lambda b, k=k: {k: b}) for k in ("anyOf", "oneOf", "allOf")),
        *(
            inner.map(lambda s, k=k: {k: s})
            for k in ("not", "if", "then", "else", "contains", "items", *UNARY)
        ),
        branches.map(lambda b: {"prefixItems": b}),
        named.map(lambda m: {"properties": m}),
        named.map(lambda m: {"dependentSchemas": m}),
        inner.map(lambda s: {"patternProperties": {"^k": s}}),
        st.just({"uniqueItems": True}),
    )


def merged(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {key: value for part in parts for key, value in part.items()}


SCHEMA = st.recursive(
    LEAF, lambda inner: st.lists(keyword(inner), max_size=3).map(merged), max_leaves=12
)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=SCHEMA, instance=INSTANCE)
@example(schema={"unevaluatedItems": {"not": True}}, instance=[None, {"k": "x" * 120}])
def test_the_same_verdicts_and_errors_as_jsonschema(schema: Any, instance: Any) -> None:
    """The bounded keywords accept what jsonschema's accept, and report the same errors (the
    ``context`` of a union's aside: fewer problems there)."""
    ours, theirs = schemas.validator(schema), Draft202012Validator(schema)
    assert ours.is_valid(instance) == theirs.is_valid(instance)

    def errors(check: Any) -> list[tuple[str, str]]:
        found = check.iter_errors(instance)  # (in any order: jsonschema's additionalProperties
        # goes through a set of names, in an order that changes with PYTHONHASHSEED)
        return sorted((repr((list(e.absolute_path), e.validator)), e.message) for e in found)

    mine, jsonschemas = errors(ours), errors(theirs)
    assert [where for where, _ in mine] == [where for where, _ in jsonschemas]
    for (_, message), (_, expected) in zip(mine, jsonschemas, strict=True):
        # the same message, except where ours quotes an unexpected item by the first
        # ``errors.ECHOED`` characters of its repr and its length (``errors.echoed``)
        cut = ECHO_CUT.search(message)
        assert message == expected or (cut and expected.startswith(message[: cut.start()]))


ECHO_CUT = re.compile(r"\.\.\. \(\d+ characters\)")


@settings(max_examples=400, deadline=None)
@given(items=st.lists(JSON, max_size=6))
def test_unique_items_agrees_with_jsonschema(items: list[Any]) -> None:
    """Items drawn from few values, so that many arrays repeat one (in some other form)."""
    check = schemas.validator(UNIQUE)
    assert check.is_valid(items) == Draft202012Validator(UNIQUE).is_valid(items)
