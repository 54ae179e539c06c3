"""Load YAML or JSON input into plain Python data, remembering where every value stood.

The loader is the only place that touches raw text. It refuses what a code generator must
not trust: huge files, deep nesting, alias bombs, duplicate keys, non-JSON values, and YAML
1.1 surprises (``yes``/``no``/``on``/``off`` stay strings, dates stay strings).
"""

from __future__ import annotations

import bisect
import contextlib
import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import yaml
from yaml.events import (
    CollectionEndEvent,
    CollectionStartEvent,
    MappingStartEvent,
    NodeEvent,
    ScalarEvent,
    StreamEndEvent,
)
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from mcpgen.problems import InputError, Location, fail

PathPart = str | int
JsonPath = tuple[PathPart, ...]

MAX_MANIFEST_BYTES = 8 * 1024 * 1024
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 128
MAX_NODES = 2_000_000
MAX_INT_DIGITS = 1000  # Python refuses to parse more than 4300 digits anyway

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


_Resolver.add_implicit_resolver(_TAG + "bool", _BOOL, list("tTfF"))
_Resolver.add_implicit_resolver(_TAG + "int", _INT, list("-+0123456789"))
_Resolver.add_implicit_resolver(_TAG + "float", _FLOAT, list("-+0123456789."))
_Resolver.add_implicit_resolver(_TAG + "null", _NULL, ["~", "n", "N", ""])


class _PyLoader(
    yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser, yaml.composer.Composer, _Resolver
):
    """Pure-Python parsing, for PyYAML builds without libyaml."""

    def __init__(self, stream: str) -> None:
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)
        yaml.composer.Composer.__init__(self)
        _Resolver.__init__(self)


try:  # the C parser is much faster on big documents; fall back to pure Python
    from yaml._yaml import CParser

    class _CLoader(CParser, _Resolver):
        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            _Resolver.__init__(self)

    _Loader: type[_CLoader] | type[_PyLoader] = _CLoader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    _Loader = _PyLoader


# Scalar tags we accept (implicit or explicit, as in ``!!str 1``), with the text each allows.
_SCALAR_TAGS: dict[str, re.Pattern[str] | None] = {
    _TAG + "str": None,
    _TAG + "int": _INT,
    _TAG + "float": _FLOAT,
    _TAG + "bool": _BOOL,
    _TAG + "null": _NULL,
}


def dotted(path: Sequence[PathPart]) -> str:
    """``tools[0].input.properties.x``: how a field is named in messages."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + printable(part)
    return out


def printable(text: str) -> str:
    """``text`` with control characters (and lone surrogates) escaped, for one-line messages."""
    if text.isprintable():
        return text
    return "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text
    )


def _short_field(path: Sequence[PathPart], keep: int = 6) -> str:
    """A dotted field name cut short: deep paths would fill the terminal."""
    if len(path) <= keep:
        return dotted(path)
    return dotted(path[:keep]) + "..."


@dataclass
class Positions:
    """Where each value (and each mapping key) of a document stood in its file."""

    file: str
    values: dict[JsonPath, tuple[int, int]] = field(default_factory=dict)
    keys: dict[JsonPath, tuple[int, int]] = field(default_factory=dict)

    def locate(self, path: Sequence[PathPart], key: bool = False) -> Location:
        """The location of ``path``, or of its nearest ancestor that has one."""
        current = tuple(path)
        table = self.keys if key else self.values
        while True:
            found = table.get(current) or self.values.get(current)
            if found:
                return Location(self.file, found[0], found[1])
            if not current:
                return Location(self.file, 1, 1)
            current = current[:-1]


@dataclass(frozen=True)
class Overlay:
    """Where a part of a merged document came from: an entry imported from an OpenAPI
    document is located at its operation in that document (``pointer`` names it)."""

    locate: Callable[[], Location]
    pointer: str


@dataclass
class Document:
    """Parsed input: plain JSON-compatible data plus the position of each value.

    ``overlays`` maps the path of an entry merged in from another file (an imported tool)
    to where it was written, so that every problem points at the file the user wrote."""

    file: str
    base_dir: Path
    data: Any
    text: str
    _positions: Positions | None = None
    _locator: JsonLocator | None = None
    overlays: dict[JsonPath, Overlay] = field(default_factory=dict)

    def overlay(self, path: Sequence[PathPart]) -> Overlay | None:
        if not self.overlays:
            return None
        current = tuple(path)
        while current:
            found = self.overlays.get(current)
            if found is not None:
                return found
            current = current[:-1]
        return None

    def field(self, path: Sequence[PathPart]) -> str:
        """How a problem names ``path``: its dotted name, and the JSON pointer of the
        operation it was imported from."""
        found = self.overlay(path)
        name = dotted(path)
        return f"{found.pointer} ({name})" if found is not None else name

    @property
    def positions(self) -> Positions:
        if self._positions is None:  # JSON is parsed fast; positions only when asked
            try:
                self._positions = _json_positions(self.text, self.file)
            except (_ScanError, InputError):  # pragma: no cover - the text parsed as JSON
                self._positions = Positions(self.file)
        return self._positions

    def locate(self, path: Sequence[PathPart], key: bool = False) -> Location:
        found = self.overlay(path)
        if found is not None:
            return found.locate()
        if not self.text and self._positions is None:
            return Location(self.file, 1, 1)
        if self._positions is None:  # JSON: find this one place, not every position
            if self._locator is None:
                self._locator = JsonLocator(self.text, self.file)
            return self._locator.locate(path, key)
        return self._positions.locate(path, key)


_INDENT = re.compile(r"[ \t]*")


class JsonLocator:
    """Positions in a JSON text found on demand: the members of a container are indexed when
    a path first goes through it, and the values a path does not enter are skipped by the C
    scanner. Locating a few warnings in a 13 MB spec costs a fraction of indexing it all.
    Same answers as ``Positions.locate`` (the fuzz tests compare them)."""

    _decoder = json.JSONDecoder(parse_int=str, parse_float=str, parse_constant=str)

    def __init__(self, text: str, file: str) -> None:
        self.text = text
        self.file = file
        # container path -> member -> (key offset or -1, value offset)
        self.members: dict[JsonPath, dict[PathPart, tuple[int, int]]] = {}
        self.line_starts: list[int] | None = None
        self.located = 0
        self.found: dict[tuple[JsonPath, str], tuple[int, int] | None] = {}
        self.spans: dict[JsonPath, tuple[int, str, str] | None] = {}
        self.clean: dict[JsonPath, int] = {}  # object -> offset its closing line is after
        self.counted = (0, 1)  # (offset, its line): lines are counted on from the last one

    def _skip(self, offset: int) -> int:
        return _JSON_WS.match(self.text, offset).end()  # type: ignore[union-attr]

    def _value_offset(self, path: JsonPath) -> int | None:
        if not path:
            return self._skip(0)
        found = self._member(path[:-1], path[-1])
        return found[1] if found else None

    def _member(self, path: JsonPath, part: PathPart) -> tuple[int, int] | None:
        """(key offset or -1, value offset) of member ``part`` of the container at ``path``."""
        if path not in self.members and isinstance(part, str):
            found = self._indented_member(path, part)
            if found is not None:
                return found
        members = self._members(path)
        return members.get(part) if members is not None else None

    def _indented_member(self, path: JsonPath, key: str) -> tuple[int, int] | None:
        """The member found by its line, without reading the container, when the JSON is
        indented (specs usually are): a member key starts a line indented one step more than
        the container's line, before the line that closes it. None: look the slow way."""
        if (path, key) in self.found:
            return self.found[path, key]
        span = self._indented_span(path)
        self.found[path, key] = None
        if span is None:
            return None
        start, outer, inner = span
        text = self.text
        at = text.find("\n" + inner + json.dumps(key, ensure_ascii=False), start)
        if at < 0:
            return None
        # The line that closes the object must not come first. The stretch known to hold
        # no such line grows with the keys looked up: each part of the text is searched
        # once, and never beyond the last key (a spec's root object closes 13 MB on).
        # (Nothing but white space follows the root object: no check for it.)
        clean = self.clean.get(path, start) if path else len(text)
        if at > clean:
            if text.find("\n" + outer + "}", clean, at) >= 0:
                return None  # after the line that closes the object
            self.clean[path] = at
        key_offset = at + 1 + len(inner)
        match = _JSON_STRING.match(text, key_offset)
        if match is None:  # pragma: no cover - it is the quoted key just searched for
            return None
        colon = self._skip(match.end())
        if text[colon] != ":":
            return None
        self.found[path, key] = key_offset, self._skip(colon + 1)
        return self.found[path, key]

    def _indented_span(self, path: JsonPath) -> tuple[int, str, str] | None:
        """(start, its indentation, its members' indentation) of the object at ``path``."""
        if path not in self.spans:
            self.spans[path] = None
            start = self._value_offset(path)
            text = self.text
            if start is None or text[start] != "{":
                return None
            line = text.rfind("\n", 0, start) + 1
            outer = text[line : _INDENT.match(text, line).end()]  # type: ignore[union-attr]
            inner = self._indent_before(self._skip(start + 1))
            if inner is None or len(inner) <= len(outer) or not inner.startswith(outer):
                return None  # on one line, or not indented step by step
            self.spans[path] = start, outer, inner
        return self.spans[path]

    def _indent_before(self, offset: int) -> str | None:
        """The whitespace that starts the line ``offset`` is on (None: something else does)."""
        line = self.text.rfind("\n", 0, offset) + 1
        prefix = self.text[line:offset]
        if prefix.strip(" \t"):
            return None
        return prefix

    def _members(self, path: JsonPath) -> dict[PathPart, tuple[int, int]] | None:
        if path in self.members:
            return self.members[path]
        start = self._value_offset(path)
        if start is None or self.text[start] not in "{[":
            return None
        text, members = self.text, {}
        is_object = text[start] == "{"
        offset, index = self._skip(start + 1), 0
        while text[offset] not in "}]":
            key_offset = -1
            part: PathPart = index
            if is_object:
                match = _JSON_STRING.match(text, offset)
                assert match is not None
                raw = match.group()
                part = raw[1:-1] if "\\" not in raw else json.loads(raw)
                key_offset = offset
                offset = self._skip(self._skip(match.end()) + 1)  # past the ':'
            members[part] = (key_offset, offset)
            _, end = self._decoder.raw_decode(text, offset)
            offset = self._skip(end)
            if text[offset] == ",":
                offset = self._skip(offset + 1)
            index += 1
        self.members[path] = members
        return members

    def _where(self, offset: int) -> tuple[int, int]:
        self.located += 1
        if self.line_starts is None and self.located <= 32:  # a few: count, do not index
            since, line = self.counted
            if offset < since:
                since, line = 0, 1
            line += self.text.count("\n", since, offset)
            self.counted = offset, line
            return line, offset - self.text.rfind("\n", 0, offset)
        if self.line_starts is None:
            self.line_starts = [0] + [m.end() for m in re.finditer("\n", self.text)]
        line = bisect.bisect_right(self.line_starts, offset)
        return line, offset - self.line_starts[line - 1] + 1

    def locate(self, path: Sequence[PathPart], key: bool = False) -> Location:
        """The location of ``path``, or of its nearest ancestor that has one."""
        current = tuple(path)
        try:
            while current:
                found = self._member(current[:-1], current[-1])
                if found is not None:
                    offset = found[0] if key and found[0] >= 0 else found[1]
                    return Location(self.file, *self._where(offset))
                current = current[:-1]
            return Location(self.file, *self._where(self._skip(0)))
        except (AssertionError, IndexError, ValueError):  # pragma: no cover - parsed before
            return Location(self.file, 1, 1)


def display_path(path: Path) -> str:
    """A path as the user should see it: relative to the working directory when inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError, RuntimeError):  # RuntimeError: a symlink loop
        return str(path)


def load_file(path: Path, max_bytes: int = MAX_MANIFEST_BYTES) -> Document:
    """Read and parse ``path``; raise InputError with a located message on any problem."""
    shown = display_path(path)
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise fail(shown, "not a regular file")
        if size > max_bytes:
            raise fail(shown, f"file is {size} bytes, larger than the limit of {max_bytes} bytes")
        raw = path.read_bytes()
    except FileNotFoundError:
        raise fail(shown, "file not found") from None
    except OSError as exc:
        raise fail(shown, f"cannot read file: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - raw.rfind(b"\n", 0, exc.start)  # in bytes
        message = f"file is not valid UTF-8 (byte 0x{raw[exc.start]:02x})"
        raise fail(shown, message, line, column) from None
    return load_text(text, shown, path.parent, json_first=path.suffix.lower() == ".json")


def load_text(text: str, file: str, base_dir: Path, json_first: bool = False) -> Document:
    """Parse ``text``: JSON when it is (fast), YAML otherwise. A ``.json`` file must be JSON."""
    if not text.strip():
        raise fail(file, "file is empty", 1, 1)
    if json_first or text.lstrip().startswith("{"):
        try:
            watch = _NumberWatch()
            data = json.loads(
                text,
                object_pairs_hook=_no_duplicates,
                parse_int=watch.integer,
                parse_float=watch.real,
                parse_constant=watch.constant,
            )
        except json.JSONDecodeError as exc:
            if json_first:
                raise fail(file, f"invalid JSON: {exc.msg}", exc.lineno, exc.colno) from None
        except (_DuplicateKey, RecursionError) as exc:
            with contextlib.suppress(_ScanError):  # the scanner locates the duplicate/depth
                _json_positions(text, file)
            if json_first:  # pragma: no cover - the scanner raised the located error
                if isinstance(exc, _DuplicateKey):
                    raise fail(file, f"duplicate key {exc.args[0]!r}") from None
                raise fail(file, f"nesting deeper than {MAX_DEPTH} levels") from None
        else:
            _check_json_values(data, file, text, watch)
            return Document(file, base_dir, data, text)
    data, positions = _compose(text, file)
    return Document(file, base_dir, data, text, positions)


class _DuplicateKey(Exception):
    pass


class _HugeInt(str):
    """An integer with too many digits, kept as text until it is reported with its place."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return result


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _may_hold_surrogates(text: str) -> bool:
    """Whether a string parsed from ``text`` can hold a lone surrogate: written as an
    escape, or already in the text (which UTF-8 cannot encode)."""
    if _SURROGATE_ESCAPE.search(text):
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


class _NumberWatch:
    """Parse hooks that note NaN, Infinity and numbers too big (the C parser calls them for
    numbers only, so the data need not be walked for them afterwards)."""

    def __init__(self) -> None:
        self.suspicious = False

    def integer(self, text: str) -> int | _HugeInt:
        if len(text) > MAX_INT_DIGITS:
            self.suspicious = True
            return _HugeInt(text)
        return int(text)

    def real(self, text: str) -> float:
        value = float(text)
        if not math.isfinite(value):
            self.suspicious = True
        return value

    def constant(self, text: str) -> float:
        self.suspicious = True
        return float(text)


def _too_deep(data: Any) -> bool:
    """Whether containers nest deeper than MAX_DEPTH (a walk level by level)."""
    level, depth = [data], 0
    while level:
        depth += 1
        if depth > MAX_DEPTH:
            return True
        deeper: list[Any] = []
        for container in level:
            values = container.values() if type(container) is dict else container
            deeper.extend([v for v in values if type(v) is dict or type(v) is list])
        level = deeper
    return False


def _check_json_values(data: Any, file: str, text: str, watch: _NumberWatch) -> None:
    """Reject NaN, Infinity and numbers too big for a float, lone surrogates, and too deep
    nesting. Cheap checks first (the parse hooks, the text, a walk of the containers); the
    located report comes from the slower pass that tracks paths."""
    deep = isinstance(data, dict | list) and _too_deep(data)
    surrogates = _may_hold_surrogates(text) and _holds_surrogates(data)
    if watch.suspicious or deep or surrogates:
        _locate_json_value_problem(data, file, text)


def _holds_surrogates(data: Any) -> bool:
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            if any(_SURROGATE.search(k) for k in value):
                return True
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, str) and _SURROGATE.search(value):
            return True
    return False


def _locate_json_value_problem(data: Any, file: str, text: str) -> None:
    stack: list[tuple[Any, JsonPath]] = [(data, ())]
    while stack:
        value, path = stack.pop()
        if len(path) > MAX_DEPTH:
            _json_positions(text, file)  # raises the located error
            raise fail(file, f"nesting deeper than {MAX_DEPTH} levels", 1, 1)  # pragma: no cover
        if isinstance(value, dict):
            for key in value:
                if _SURROGATE.search(key):
                    _surrogate_error(text, file, path)
            stack.extend((v, (*path, k)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, (*path, i)) for i, v in enumerate(value))
        elif isinstance(value, str) and not isinstance(value, _HugeInt):
            if _SURROGATE.search(value):
                _surrogate_error(text, file, path)
        elif isinstance(value, _HugeInt) or (isinstance(value, float) and not math.isfinite(value)):
            try:
                where = _json_positions(text, file).locate(path)
            except _ScanError:  # pragma: no cover - the text parsed as JSON
                where = Location(file, 1, 1)
            number = _json_number_at(text, where)
            message = "NaN and Infinity are not JSON values"
            if isinstance(value, _HugeInt) or number:
                message = f"number {_clip(number)} is too large"
            raise fail(file, message, where.line, where.column, dotted(path))


_SURROGATE = re.compile("[\ud800-\udfff]")


def _surrogate_error(text: str, file: str, path: JsonPath) -> None:
    try:
        where = _json_positions(text, file).locate(path)
    except _ScanError:  # pragma: no cover - the text parsed as JSON
        where = Location(file, 1, 1)
    message = "string holds a lone UTF-16 surrogate (\\ud800-\\udfff), which is not text"
    raise fail(file, message, where.line, where.column, dotted(path))


def _json_number_at(text: str, where: Location) -> str:
    """The JSON number written at ``where``, or "" (NaN and Infinity are not numbers)."""
    lines = text.split("\n")
    if not 0 < where.line <= len(lines):
        return ""
    match = re.match(r"-?[0-9][0-9.eE+-]*", lines[where.line - 1][where.column - 1 :])
    return match.group() if match else ""


# -- JSON positions -----------------------------------------------------------------------

_JSON_WS = re.compile(r"[ \t\n\r]*")
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_JSON_ATOM = re.compile(r"[^\s,:\[\]{}\"]+")


class _ScanError(Exception):
    """The text is not the JSON the scanner expected."""


def _json_positions(text: str, file: str) -> Positions:
    """Positions of every value and key of a JSON text (without recursion).

    Also reports duplicate keys and nesting deeper than MAX_DEPTH, located.
    """
    positions = Positions(file)
    line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def where(offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(line_starts, offset)
        return line, offset - line_starts[line - 1] + 1

    def skip(offset: int) -> int:
        return _JSON_WS.match(text, offset).end()  # type: ignore[union-attr]

    def char(offset: int) -> str:
        if offset >= len(text):
            raise _ScanError("unexpected end")
        return text[offset]

    # a frame: [path of the container, keys seen (objects) or None (arrays), next index]
    stack: list[tuple[JsonPath, dict[str, tuple[int, int]] | None, list[int]]] = []

    def read_key(
        offset: int, frame: tuple[JsonPath, dict[str, tuple[int, int]] | None, list[int]]
    ) -> tuple[int, JsonPath]:
        match = _JSON_STRING.match(text, offset)
        if not match:
            raise _ScanError("expected a key")
        raw = match.group()
        key = raw[1:-1] if "\\" not in raw else json.loads(raw)  # most keys have no escapes
        container, seen, _ = frame
        if seen is None:  # pragma: no cover - only objects have keys
            raise _ScanError("a key outside an object")
        child = (*container, key)
        line, col = where(offset)
        if key in seen:
            first = seen[key]
            raise fail(
                file,
                f"duplicate key {key!r} (first at line {first[0]}, column {first[1]})",
                line,
                col,
                dotted(child),
            )
        seen[key] = (line, col)
        positions.keys[child] = (line, col)
        offset = skip(match.end())
        if char(offset) != ":":
            raise _ScanError("expected ':'")
        return skip(offset + 1), child

    path: JsonPath = ()
    offset = skip(0)
    while True:
        positions.values.setdefault(path, where(offset))
        if len(path) > MAX_DEPTH:
            line, col = where(offset)
            raise fail(
                file, f"nesting deeper than {MAX_DEPTH} levels", line, col, _short_field(path)
            )
        ch = char(offset)
        if ch in "{[":
            offset = skip(offset + 1)
            close = "}" if ch == "{" else "]"
            if char(offset) == close:
                offset = skip(offset + 1)
            else:
                frame: tuple[JsonPath, dict[str, tuple[int, int]] | None, list[int]] = (
                    path,
                    {} if ch == "{" else None,
                    [0],
                )
                stack.append(frame)
                if ch == "{":
                    offset, path = read_key(offset, frame)
                else:
                    path = (*path, 0)
                continue
        else:
            match = (
                _JSON_STRING.match(text, offset) if ch == '"' else _JSON_ATOM.match(text, offset)
            )
            if not match:
                raise _ScanError("expected a value")
            offset = skip(match.end())
        # a value ended: move on to the next one, closing containers on the way
        while stack:
            frame = stack[-1]
            ch = char(offset)
            if ch == ",":
                offset = skip(offset + 1)
                if frame[1] is None:
                    frame[2][0] += 1
                    path = (*frame[0], frame[2][0])
                else:
                    offset, path = read_key(offset, frame)
                break
            if ch != ("]" if frame[1] is None else "}"):
                raise _ScanError("expected ',' or a closing bracket")
            offset = skip(offset + 1)
            stack.pop()
        else:
            return positions


# -- YAML ---------------------------------------------------------------------------------


def _mark(node: Node) -> tuple[int, int]:
    return (node.start_mark.line + 1, node.start_mark.column + 1)


def _compose(text: str, file: str) -> tuple[Any, Positions]:
    positions = Positions(file)
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
    data = _convert(root, (), positions, file)
    return data, positions


def _yaml_error(exc: yaml.MarkedYAMLError, file: str, text: str) -> InputError:
    mark = exc.problem_mark or exc.context_mark
    line, col = (mark.line + 1, mark.column + 1) if mark else (0, 0)
    problem = (exc.problem or "").strip()
    context = (exc.context or "").strip()
    if "maximum nesting depth" in problem:  # libyaml stops at 1000 levels; we stop earlier
        return _depth_error(text, file)
    found = _char_at(text, line, col)
    if found == "\t" and ("cannot start any token" in problem or "tab" in problem):
        return fail(
            file, "invalid YAML: a tab character is not allowed here; use spaces", line, col
        )
    if problem == "found character that cannot start any token" and found:
        problem = f"found character {found!r} that cannot start any token"  # as pure-Python says
    elif problem == "found undefined alias" and found == "*":
        name = re.match(r"\*([^\s,\[\]{}]*)", _YAML_LINE_BREAK.split(text)[line - 1][col - 1 :])
        problem += f" {name.group(1)!r}" if name else ""
    if "expected a single document" in context or "expected a single document" in problem:
        return fail(file, "invalid YAML: the file holds more than one YAML document", line, col)
    message = problem or context
    if problem and context:
        context_mark = exc.context_mark
        if context_mark is not None and context_mark is not mark:
            at = f"line {context_mark.line + 1}, column {context_mark.column + 1}"
            message = f"{problem} ({context} at {at})"
        else:
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


def _char_at(text: str, line: int, col: int) -> str:
    lines = _YAML_LINE_BREAK.split(text)
    if 0 < line <= len(lines) and 0 < col <= len(lines[line - 1]):
        return lines[line - 1][col - 1]
    return ""


def _depth_error(text: str, file: str) -> InputError:
    """The composer ran out of stack: find the first node nested too deeply, from events."""
    message = f"nesting deeper than {MAX_DEPTH} levels"
    frames: list[_Frame] = []
    loader = _PyLoader(text)  # libyaml scans far ahead in flow style and fails at 1000 levels
    try:
        while True:
            event = loader.get_event()  # type: ignore[no-untyped-call]
            if isinstance(event, StreamEndEvent):
                break
            if isinstance(event, CollectionEndEvent):
                frames.pop()
                continue
            if not isinstance(event, NodeEvent):
                continue
            top = frames[-1] if frames else None
            if top is not None and top.mapping and top.want_key:
                top.key = event.value if isinstance(event, ScalarEvent) else "?"
                top.want_key = False
                if isinstance(event, CollectionStartEvent):  # a complex key; rejected later
                    frames.append(_Frame((*top.path, "?"), isinstance(event, MappingStartEvent)))
                continue
            path: JsonPath = ()
            if top is not None and top.mapping:
                path = (*top.path, top.key)
                top.want_key = True
            elif top is not None:
                path = (*top.path, top.index)
                top.index += 1
            if len(path) > MAX_DEPTH and event.start_mark is not None:
                line, col = event.start_mark.line + 1, event.start_mark.column + 1
                return fail(file, message, line, col, _short_field(path))
            if isinstance(event, CollectionStartEvent):
                frames.append(_Frame(path, isinstance(event, MappingStartEvent)))
    except (yaml.YAMLError, RecursionError, IndexError):  # pragma: no cover - best effort
        pass
    finally:
        loader.dispose()
    return fail(file, message)  # pragma: no cover


@dataclass
class _Frame:
    """An open collection while scanning events."""

    path: JsonPath
    mapping: bool
    index: int = 0
    key: PathPart = ""
    want_key: bool = True


def _children(node: Node) -> list[tuple[PathPart, Node]]:
    if isinstance(node, SequenceNode):
        return list(enumerate(node.value))
    if isinstance(node, MappingNode):
        return [(str(key.value), value) for key, value in node.value]
    return []


def _check_expansion(root: Node, file: str) -> None:
    """Refuse documents whose aliases expand to too many values, or refer to themselves.

    Sizes are computed once per distinct node, so a billion-laughs document costs no more
    to check than its text; the error points at the outermost field that expands too far.
    """
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
            line, col = _mark(node)
            message = (
                "this alias refers to a collection that contains it, so it would expand forever"
            )
            raise fail(file, message, line, col, _short_field(path))
        active.add(ident)
        stack.append((node, True, path))
        stack.extend(
            (child, False, (*path, part))
            for part, child in _children(node)
            if id(child) not in sizes
        )
    if sizes[id(root)] <= MAX_NODES:
        return
    node, path = root, cast(JsonPath, ())
    while True:
        big = [(part, child) for part, child in _children(node) if sizes[id(child)] > MAX_NODES]
        if not big:
            break
        path = (*path, big[0][0])
        node = big[0][1]
    line, col = _mark(node)
    hint = " (YAML alias bomb?)" if len(sizes) <= MAX_NODES else ""
    message = f"expands to more than {MAX_NODES} values{hint}"
    if not path:
        message = "document " + message
    raise fail(file, message, line, col, _short_field(path))


def _convert(node: Node, path: JsonPath, positions: Positions, file: str) -> Any:
    """Plain data from a node (recursion is bounded by MAX_DEPTH)."""
    if len(path) > MAX_DEPTH:
        line, col = _mark(node)
        raise fail(file, f"nesting deeper than {MAX_DEPTH} levels", line, col, _short_field(path))
    positions.values.setdefault(path, _mark(node))
    if isinstance(node, ScalarNode):
        return _scalar(node, file, path)
    if isinstance(node, SequenceNode):
        if node.tag != _TAG + "seq":
            raise _bad_tag(node, file, path)
        return [
            _convert(item, (*path, index), positions, file) for index, item in enumerate(node.value)
        ]
    if isinstance(node, MappingNode):
        if node.tag != _TAG + "map":
            raise _bad_tag(node, file, path)
        result: dict[str, Any] = {}
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
            if key in result:
                first = positions.keys[child]
                raise fail(
                    file,
                    f"duplicate key {key!r} (first at line {first[0]}, column {first[1]})",
                    line,
                    col,
                    dotted(child),
                )
            positions.keys[child] = (line, col)
            result[key] = _convert(value_node, child, positions, file)
        return result
    raise _bad_tag(node, file, path)  # pragma: no cover


def _clip(text: str, limit: int = 20) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _bad_tag(node: Node, file: str, path: JsonPath) -> InputError:
    line, col = _mark(node)
    tag = "!!" + node.tag[len(_TAG) :] if node.tag.startswith(_TAG) else node.tag
    return fail(file, f"unsupported YAML tag {tag!r}", line, col, _short_field(path))


def _scalar(node: ScalarNode, file: str, path: JsonPath) -> Any:
    tag = node.tag
    if tag not in _SCALAR_TAGS:
        raise _bad_tag(node, file, path)
    value: str = node.value
    pattern = _SCALAR_TAGS[tag]
    if pattern is None:
        return value
    if not pattern.match(value):
        line, col = _mark(node)
        raise fail(
            file, f"{value!r} is not a valid !!{tag[len(_TAG) :]}", line, col, _short_field(path)
        )
    if tag == _TAG + "bool":
        return value.lower() == "true"
    if tag == _TAG + "null":
        return None
    if tag == _TAG + "int" and len(value) > MAX_INT_DIGITS:
        line, col = _mark(node)
        raise fail(file, f"number {_clip(value)} is too large", line, col, _short_field(path))
    if tag == _TAG + "int":
        if value.startswith("0o"):
            return int(value[2:], 8)
        return int(value, 16) if value.startswith("0x") else int(value)
    line, col = _mark(node)
    if "inf" in value.lower() or "nan" in value.lower():
        raise fail(file, "NaN and Infinity are not JSON values", line, col, _short_field(path))
    number = float(value)
    if not math.isfinite(number):
        raise fail(file, f"number {_clip(value)} is too large", line, col, _short_field(path))
    return number
