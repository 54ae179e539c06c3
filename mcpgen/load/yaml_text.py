"""YAML input, composed safely: YAML 1.1 surprises, alias bombs, deep nesting and custom
tags refused, every problem located."""

from __future__ import annotations

import math
import re
from typing import Any, cast

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from mcpgen.load.limits import MAX_DEPTH, MAX_INT_DIGITS, MAX_NODES
from mcpgen.load.positions import JsonPath, PathPart, Positions, dotted, short_field
from mcpgen.problems import InputError, cut, fail

_TAG = "tag:yaml.org,2002:"
_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_INT = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_FLOAT = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")


class _Resolver(yaml.resolver.BaseResolver):
    """YAML 1.2 core-schema scalars: only true/false are booleans; no dates, no sexagesimal."""


# Scalar tags we accept (implicit or explicit, as in ``!!str 1``), with the text each allows.
_SCALAR_TAGS: dict[str, re.Pattern[str] | None] = {_TAG + "str": None}
for _kind, _pattern, _first in (
    ("bool", _BOOL, [*"tTfF"]),
    ("int", _INT, [*"-+0123456789"]),
    ("float", _FLOAT, [*"-+0123456789."]),
    ("null", _NULL, [*"~nN", ""]),
):
    _Resolver.add_implicit_resolver(_TAG + _kind, _pattern, _first)
    _SCALAR_TAGS[_TAG + _kind] = _pattern


class _PyLoader(yaml.BaseLoader, _Resolver):
    """Pure-Python parsing, for PyYAML builds without libyaml (composing only: nodes are
    turned into data by ``_convert``, never by a constructor)."""


try:  # the C parser is much faster on big documents; fall back to pure Python
    from yaml import CBaseLoader

    class _CLoader(CBaseLoader, _Resolver):
        pass

    _Loader: type[_CLoader] | type[_PyLoader] = _CLoader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    _Loader = _PyLoader


def _mark(node: Node) -> tuple[int, int]:
    return (node.start_mark.line + 1, node.start_mark.column + 1)


def _at(node: Node, file: str, path: JsonPath, message: str) -> InputError:
    """An error located at ``node``, naming the (shortened) field ``path``."""
    return fail(file, message, *_mark(node), short_field(path))


def _compose(text: str, file: str) -> tuple[Any, Positions]:
    try:
        loader = _Loader(text)
        try:
            root = loader.get_single_node()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        raise _yaml_error(exc, file, text) from None
    except yaml.reader.ReaderError as exc:
        raise _reader_error(exc, file, text) from None
    except yaml.YAMLError as exc:
        raise fail(file, f"invalid YAML: {exc}") from None
    except RecursionError:
        raise _depth_error(text, file) from None
    if root is None or (
        isinstance(root, ScalarNode) and root.tag == _TAG + "null" and not root.value
    ):
        raise fail(file, "file is empty", 1, 1)
    _check_expansion(root, file)
    positions = Positions(file)
    return _convert(root, (), positions, file), positions


def _yaml_error(exc: yaml.MarkedYAMLError, file: str, text: str) -> InputError:
    mark = exc.problem_mark or exc.context_mark
    line, col = (mark.line + 1, mark.column + 1) if mark else (0, 0)
    problem = (exc.problem or "").strip()
    context = (exc.context or "").strip()
    if "maximum nesting depth" in problem:  # libyaml stops at 1000 levels; we stop earlier
        return _depth_error(text, file)
    lines = _YAML_LINE_BREAK.split(text)
    in_line = lines[line - 1][col - 1 :] if 0 < line <= len(lines) and col > 0 else ""
    found = in_line[:1]
    if found == "\t" and ("cannot start any token" in problem or "tab" in problem):
        problem, context = "a tab character is not allowed here; use spaces", ""
    elif problem == "found character that cannot start any token" and found:
        problem = f"found character {found!r} that cannot start any token"  # as pure-Python says
    elif problem == "found undefined alias" and found == "*":
        name = re.match(r"\*([^\s,\[\]{}]*)", in_line)
        problem += f" {name.group(1)!r}" if name else ""
    if "expected a single document" in context or "expected a single document" in problem:
        problem, context = "the file holds more than one YAML document", ""
    message = problem or context
    if problem and context:
        other = exc.context_mark
        if other is not None and other is not mark:
            context += f" at line {other.line + 1}, column {other.column + 1}"
        message = f"{problem} ({context})"
    return fail(file, f"invalid YAML: {message}", line, col)


def _reader_error(exc: yaml.reader.ReaderError, file: str, text: str) -> InputError:
    """A character YAML does not allow (control characters, U+FFFE, ...), located."""
    code = exc.character if isinstance(exc.character, int) else ord(exc.character[:1] or "?")
    index = text.find(chr(code))  # the first one is the one the reader stopped at
    if index < 0:  # pragma: no cover - the reader found it in this text
        index = min(exc.position, len(text))
    before = _YAML_LINE_BREAK.split(text[:index])
    line, column = len(before), len(before[-1]) + 1
    message = f"invalid YAML: character {chr(code)!r} (U+{code:04X}) is not allowed"
    return fail(file, message, line, column)


_YAML_LINE_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")  # as YAML counts lines


class _DepthFinder(_PyLoader):
    """Composes (pure Python: libyaml scans far ahead in flow style and fails at 1000
    levels) until the first node nested deeper than MAX_DEPTH, and refuses it, located."""

    def __init__(self, stream: str, file: str) -> None:
        super().__init__(stream)
        self.file = file
        self.path: list[PathPart] = []

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        # A sequence's item by its index, a mapping's value by its key; a key (index None,
        # "?") is not itself a value, but what a complex one holds is. The root's part is
        # left out of the path.
        scalar = isinstance(index, ScalarNode)
        self.path.append(index if isinstance(index, int) else index.value if scalar else "?")
        if index is not None and len(self.path) > MAX_DEPTH + 1:
            mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
            message = f"nesting deeper than {MAX_DEPTH} levels"
            field = short_field(tuple(self.path[1:]))
            raise fail(self.file, message, mark.line + 1, mark.column + 1, field)
        try:
            return super().compose_node(parent, index)
        finally:
            self.path.pop()


def _depth_error(text: str, file: str) -> InputError:
    """The composer ran out of stack: the first node nested too deeply, located."""
    loader = _DepthFinder(text, file)
    try:
        loader.get_single_node()
    except InputError as exc:
        return exc
    except (yaml.YAMLError, RecursionError, IndexError):  # pragma: no cover - best effort
        pass
    finally:
        loader.dispose()
    return fail(file, f"nesting deeper than {MAX_DEPTH} levels")  # pragma: no cover


def _children(node: Node) -> list[tuple[PathPart, Node]]:
    if isinstance(node, SequenceNode):
        return list(enumerate(node.value))
    if isinstance(node, MappingNode):
        return [(str(key.value), value) for key, value in node.value]
    return []


def _check_expansion(root: Node, file: str) -> None:
    """Refuse documents whose aliases expand to too many values, or refer to themselves.
    Sizes are computed once per distinct node, so a billion-laughs document costs no more
    to check than its text; the error points at the outermost field that expands too far."""
    sizes: dict[int, int] = {}
    active: set[int] = set()
    stack: list[tuple[Node, bool, JsonPath]] = [(root, False, ())]
    while stack:
        node, done, path = stack.pop()
        ident = id(node)
        if done:
            active.discard(ident)
            sizes[ident] = 1 + sum(sizes[id(child)] for _, child in _children(node))
            continue
        if ident in sizes:
            continue
        if ident in active:
            message = (
                "this alias refers to a collection that contains it, so it would expand forever"
            )
            raise _at(node, file, path, message)
        active.add(ident)
        stack.append((node, True, path))
        stack.extend(
            (child, False, (*path, part))
            for part, child in _children(node)
            if id(child) not in sizes
        )
    if sizes[id(root)] <= MAX_NODES:
        return
    node, path = root, cast(JsonPath, ())  # down the first child that expands too far
    while big := [(part, kid) for part, kid in _children(node) if sizes[id(kid)] > MAX_NODES]:
        path, node = (*path, big[0][0]), big[0][1]
    hint = " (YAML alias bomb?)" if len(sizes) <= MAX_NODES else ""
    message = f"expands to more than {MAX_NODES} values{hint}"
    raise _at(node, file, path, message if path else "document " + message)


def _convert(node: Node, path: JsonPath, positions: Positions, file: str) -> Any:
    """Plain data from a node (recursion is bounded by MAX_DEPTH)."""
    if len(path) > MAX_DEPTH:
        raise _at(node, file, path, f"nesting deeper than {MAX_DEPTH} levels")
    positions.values.setdefault(path, _mark(node))
    if isinstance(node, ScalarNode):
        return _scalar(node, file, path)
    if node.tag != _TAG + ("seq" if isinstance(node, SequenceNode) else "map"):
        raise _bad_tag(node, file, path)
    if isinstance(node, SequenceNode):
        return [
            _convert(item, (*path, index), positions, file) for index, item in enumerate(node.value)
        ]
    result: dict[str, Any] = {}  # (a MappingNode: the composer makes no other kind)
    for key_node, value_node in node.value:
        line, col = _mark(key_node)
        if not isinstance(key_node, ScalarNode):
            raise fail(file, "mapping keys must be plain scalars", line, col, dotted(path))
        if key_node.tag == _TAG + "merge" or (key_node.value == "<<" and not key_node.style):
            raise fail(file, "YAML merge keys (<<) are not supported", line, col, dotted(path))
        if key_node.tag not in _SCALAR_TAGS:
            raise _bad_tag(key_node, file, path)
        key = key_node.value  # keys are strings, as in JSON: `200:` and `on:` stay text
        child = (*path, key)
        positions.add_key(child, line, col)
        result[key] = _convert(value_node, child, positions, file)
    return result


def _bad_tag(node: Node, file: str, path: JsonPath) -> InputError:
    tag = "!!" + node.tag[len(_TAG) :] if node.tag.startswith(_TAG) else node.tag
    return _at(node, file, path, f"unsupported YAML tag {tag!r}")


def _scalar(node: ScalarNode, file: str, path: JsonPath) -> Any:
    tag, value = node.tag, node.value
    if tag not in _SCALAR_TAGS:
        raise _bad_tag(node, file, path)
    if (pattern := _SCALAR_TAGS[tag]) is None:
        return value
    if not pattern.match(value):
        raise _at(node, file, path, f"{value!r} is not a valid !!{tag[len(_TAG) :]}")
    if tag == _TAG + "bool":
        return value.lower() == "true"
    if tag == _TAG + "null":
        return None
    too_large = f"number {cut(value, 20)} is too large"
    if tag == _TAG + "int":
        if len(value) > MAX_INT_DIGITS:
            raise _at(node, file, path, too_large)
        return int(value, 8 if value.startswith("0o") else 16 if value.startswith("0x") else 10)
    if "inf" in value.lower() or "nan" in value.lower():
        raise _at(node, file, path, "NaN and Infinity are not JSON values")
    number = float(value)
    if not math.isfinite(number):
        raise _at(node, file, path, too_large)
    return number
