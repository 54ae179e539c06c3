"""Load YAML or JSON input into plain Python data, remembering where every value stood.

The loader is the only place that touches raw text. It refuses what a code generator must
not trust: huge files, deep nesting, alias bombs, duplicate keys, non-JSON values, and YAML
1.1 surprises (``yes``/``no``/``on``/``off`` stay strings, dates stay strings).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from .errors import InputError, Location, fail

PathPart = str | int
JsonPath = tuple[PathPart, ...]

MAX_MANIFEST_BYTES = 8 * 1024 * 1024
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 128
MAX_NODES = 2_000_000


class _Resolver(yaml.resolver.BaseResolver):
    """YAML 1.2 core-schema scalars: only true/false are booleans; no dates, no sexagesimal."""


_Resolver.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_Resolver.add_implicit_resolver(
    "tag:yaml.org,2002:int",
    re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"),
    list("-+0123456789"),
)
_Resolver.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+0123456789."),
)
_Resolver.add_implicit_resolver(
    "tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"), ["~", "n", "N", ""]
)

try:  # the C parser is much faster on big documents; fall back to pure Python
    from yaml import CParser as _Parser
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml.parser import Parser as _Parser  # type: ignore[assignment]

if _Parser.__module__ == "yaml._yaml":

    class _Loader(_Parser, yaml.composer.Composer, _Resolver):  # type: ignore[misc]
        def __init__(self, stream: str) -> None:
            _Parser.__init__(self, stream)
            _Resolver.__init__(self)

else:  # pragma: no cover

    class _Loader(  # type: ignore[no-redef]
        yaml.reader.Reader, yaml.scanner.Scanner, _Parser, yaml.composer.Composer, _Resolver
    ):
        def __init__(self, stream: str) -> None:
            yaml.reader.Reader.__init__(self, stream)
            yaml.scanner.Scanner.__init__(self)
            _Parser.__init__(self)
            yaml.composer.Composer.__init__(self)
            _Resolver.__init__(self)


_SCALARS = SafeConstructor()
_PLAIN_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
}


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


@dataclass
class Document:
    """Parsed input: plain JSON-compatible data plus the position of each value."""

    file: str
    base_dir: Path
    data: Any
    text: str
    _positions: Positions | None = None

    @property
    def positions(self) -> Positions:
        if self._positions is None:  # JSON is parsed fast; positions only when asked
            self._positions = _compose(self.text, self.file)[1]
        return self._positions

    def locate(self, path: Sequence[PathPart], key: bool = False) -> Location:
        return self.positions.locate(path, key)


def display_path(path: Path) -> str:
    """A path as the user should see it: relative to the working directory when inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
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
        raise fail(shown, f"file is not valid UTF-8 (byte {exc.start})") from None
    return load_text(text, shown, path.parent, json_first=path.suffix.lower() == ".json")


def load_text(text: str, file: str, base_dir: Path, json_first: bool = False) -> Document:
    if not text.strip():
        raise fail(file, "file is empty", 1, 1)
    if json_first or text.lstrip().startswith("{"):
        data = _fast_json(text)
        if data is not _NOT_JSON:
            _check_json_values(data, file, text)
            return Document(file, base_dir, data, text)
    data, positions = _compose(text, file)
    return Document(file, base_dir, data, text, positions)


_NOT_JSON = object()


class _DuplicateKey(Exception):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKey(key)
        result[key] = value
    return result


def _fast_json(text: str) -> Any:
    """Parse strict JSON quickly; anything odd goes through the YAML path for a located error."""
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates)
    except (ValueError, _DuplicateKey, RecursionError):
        return _NOT_JSON


def _check_json_values(data: Any, file: str, text: str) -> None:
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise fail(file, f"nesting deeper than {MAX_DEPTH} levels", 1, 1)
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)
        elif isinstance(value, float) and not math.isfinite(value):
            _compose(text, file)  # locates the value
            raise fail(file, "NaN and Infinity are not JSON values", 1, 1)


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
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (0, 0)
        message = " ".join(part for part in (exc.context, exc.problem) if part)
        if "expected a single document" in message:
            message = "the file holds more than one YAML document"
        raise fail(file, f"invalid YAML: {message}", line, col) from None
    except yaml.YAMLError as exc:
        raise fail(file, f"invalid YAML: {exc}") from None
    except RecursionError:
        raise fail(file, f"nesting deeper than {MAX_DEPTH} levels") from None
    if root is None:
        raise fail(file, "file is empty", 1, 1)
    budget = [MAX_NODES]
    data = _convert(root, (), 0, positions, budget, file)
    return data, positions


def _convert(
    node: Node, path: JsonPath, depth: int, positions: Positions, budget: list[int], file: str
) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        line, col = _mark(node)
        raise fail(
            file, f"document expands to more than {MAX_NODES} values (YAML alias bomb?)", line, col
        )
    if depth > MAX_DEPTH:
        line, col = _mark(node)
        raise fail(file, f"nesting deeper than {MAX_DEPTH} levels", line, col)
    positions.values.setdefault(path, _mark(node))
    if isinstance(node, ScalarNode):
        return _scalar(node, file)
    if isinstance(node, SequenceNode):
        if node.tag != "tag:yaml.org,2002:seq":
            raise _bad_tag(node, file)
        return [
            _convert(item, (*path, index), depth + 1, positions, budget, file)
            for index, item in enumerate(node.value)
        ]
    if isinstance(node, MappingNode):
        if node.tag != "tag:yaml.org,2002:map":
            raise _bad_tag(node, file)
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, ScalarNode):
                line, col = _mark(key_node)
                raise fail(file, "mapping keys must be plain scalars", line, col)
            if key_node.tag == "tag:yaml.org,2002:merge":
                line, col = _mark(key_node)
                raise fail(file, "YAML merge keys (<<) are not supported", line, col)
            key = key_node.value  # keys are strings, as in JSON: `200:` and `on:` stay text
            if key in result:
                line, col = _mark(key_node)
                shown = ".".join(str(p) for p in (*path, key))
                raise fail(file, f"duplicate key {key!r}", line, col, shown)
            child = (*path, key)
            positions.keys[child] = _mark(key_node)
            result[key] = _convert(value_node, child, depth + 1, positions, budget, file)
        return result
    raise _bad_tag(node, file)  # pragma: no cover


def _bad_tag(node: Node, file: str) -> InputError:
    line, col = _mark(node)
    return fail(file, f"unsupported YAML tag {node.tag!r}", line, col)


def _scalar(node: ScalarNode, file: str) -> Any:
    if node.tag not in _PLAIN_TAGS:
        raise _bad_tag(node, file)
    if node.tag == "tag:yaml.org,2002:bool":
        return node.value.lower() == "true"
    if node.tag == "tag:yaml.org,2002:null":
        return None
    if node.tag == "tag:yaml.org,2002:int" and node.style is None:
        value = node.value
        if value.startswith("0o"):
            return int(value[2:], 8)
        return int(value, 0) if value.startswith("0x") else int(value)
    value = _SCALARS.construct_object(node)
    if isinstance(value, float) and not math.isfinite(value):
        line, col = _mark(node)
        raise fail(file, "NaN and Infinity are not JSON values", line, col)
    return value
