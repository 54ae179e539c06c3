"""The files an OpenAPI document spans: loading, ``$ref`` resolution, located problems
(and, when a stage ran out of stack, where its references nest deepest). A reference
resolves to a :data:`Key`: (file index, 0 the main document; path inside it).
Relative files are loaded once and must stay inside the main document's folder; remote
references are refused."""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from mcpgen.check.schemas import pointer, pointer_target
from mcpgen.load import MAX_DOCUMENT_BYTES, Document, JsonPath, load_file
from mcpgen.problems import InputError, Level, Location, Problem, Problems, clip

Key = tuple[int, JsonPath]
Heard = tuple[str, int, JsonPath, str]  # a problem reported: level, file, path, message
MAX_FILES = 256
MAX_REF_CHAIN = 64
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
# what in JSON text may be a `$ref` to another file: a `$ref` key whose value does not start
# with '"#' there, or an escape that may spell the key (`"\u0024ref"`); without either, a
# document parsed as JSON has none, and is not walked (GitHub's: 8 ms of text, not 45 of
# walk; two searches, as one alternation has no literal start and takes 40)
_JSON_MAYBE_OUT = (re.compile(r'\$ref"\s*:\s*(?!\s|"#)'), re.compile(r"\\u00(?:24|6[56]|72)"))
_DATA_KEYS = frozenset({"example", "examples", "default", "const", "enum"})
_NAME_MAPS = frozenset({"properties", "patternProperties"})  # keys there are names, not keywords


@dataclass
class Source:
    index: int
    doc: Document
    path: Path  # resolved
    relative: str  # to the main document's folder, with '/' separators: stable in hashes


@dataclass(frozen=True)
class _Failure:
    """Why a reference does not resolve, and problems located inside a file it names."""

    message: str
    inside: tuple[Problem, ...] = ()


class Sources:
    def __init__(self, main: Document, problems: Problems) -> None:
        self.problems = problems
        self.root = _resolve(main.base_dir)
        main_path = _resolve(main.base_dir / Path(main.file).name)
        first = Source(0, main, main_path, main_path.name)
        self.items: list[Source] = [first]
        self.by_path: dict[Path, Source | _Failure] = {main_path: first}
        self.quiet = False  # while scanning: problems are reported where references are used
        self._targets: dict[tuple[int, str], Key | _Failure] = {}  # each reference's, once
        self.heard: list[Heard] | None = None  # the problems reported, kept (``kept``)

    def report(self, level: Level, src: int, path: Sequence[str | int], message: str) -> None:
        if not self.quiet:
            if self.heard is not None:
                self.heard.append((level.value, src, tuple(path), message))
            self.problems.add(Problem(level, self.location(src, path), pointer(path), message))

    def error(self, src: int, path: Sequence[str | int], message: str) -> None:
        self.report(Level.ERROR, src, path, message)

    def warn(self, src: int, path: Sequence[str | int], message: str) -> None:
        self.report(Level.WARNING, src, path, message)

    def location(self, src: int, path: Sequence[str | int]) -> Location:
        return self.items[src].doc.locate(tuple(path))

    def value(self, key: Key) -> Any:
        return functools.reduce(operator.getitem, key[1], self.items[key[0]].doc.data)

    def parse_ref(self, src: int, where: JsonPath, ref: Any) -> Key | None:
        """Where ``ref`` (found at ``where`` in file ``src``) points; None (reported) if nowhere."""
        if not isinstance(ref, str):
            self.error(src, where, "$ref must be a string")
            return None
        if (src, ref) not in self._targets:
            self._targets[src, ref] = self._parse_ref(src, ref)
        cached = self._targets[src, ref]
        if isinstance(cached, _Failure):
            self.error(src, where, cached.message)
            if not self.quiet:
                self.problems.extend(cached.inside)
            return None
        return cached

    def _parse_ref(self, src: int, ref: str) -> Key | _Failure:
        file_part, _, fragment = ref.partition("#")
        target = src
        if file_part:
            if _URL.match(file_part) or file_part.startswith("//"):
                why = f"remote reference {clip(ref, 80)} is not supported; bundle it into a local file"
                return _Failure(why)
            loaded = self._load(src, unquote(file_part))
            if isinstance(loaded, _Failure):
                return loaded
            target = loaded.index
        if fragment and not fragment.startswith("/"):
            why = f"reference {clip(ref, 80)}: only JSON-pointer fragments (#/...) are supported"
            return _Failure(why)
        found = pointer_target(self.items[target].doc.data, "#" + fragment)
        if found is None:
            return _Failure(f"reference {clip(ref, 80)} does not resolve")
        return target, found[0]

    def _load(self, src: int, relative: str) -> Source | _Failure:
        """The file at ``relative`` (to file ``src``), loaded once; or why it cannot be."""
        shown = clip(relative, 80)
        try:
            if "\0" in relative or Path(relative).is_absolute():
                why = f"reference to {shown}: only paths relative to the document are supported"
                return _Failure(why)
            resolved = _resolve(self.items[src].path.parent / relative)
        except (OSError, ValueError, RuntimeError) as exc:
            return _Failure(f"cannot use file {shown}: {exc}")
        if resolved != self.root and self.root not in resolved.parents:
            return _Failure(f"reference to {shown} points outside the OpenAPI document's folder")
        if resolved in self.by_path:
            return self.by_path[resolved]
        if len(self.items) >= MAX_FILES:
            return _Failure(f"more than {MAX_FILES} referenced files")
        try:
            doc = load_file(resolved, max_bytes=MAX_DOCUMENT_BYTES)
        except InputError as exc:
            located = tuple(p for p in exc.problems if p.location.line)  # where they are
            reasons = "; ".join(p.message for p in exc.problems if p not in located)
            message = f"cannot load referenced file {shown}" + (f": {reasons}" if reasons else "")
            return self.by_path.setdefault(resolved, _Failure(message, located))
        source = Source(len(self.items), doc, resolved, resolved.relative_to(self.root).as_posix())
        self.items.append(source)
        self.by_path[resolved] = source
        return source

    def follow(self, src: int, path: JsonPath, node: Any) -> tuple[int, JsonPath, Any] | None:
        """Follow a chain of ``$ref`` objects (parameters, responses, ...) to its end."""
        seen: set[Key] = set()
        while isinstance(node, dict) and "$ref" in node:
            if len(seen) >= MAX_REF_CHAIN:
                self.error(src, path, "reference chain is too long")
                return None
            key = self.parse_ref(src, (*path, "$ref"), node["$ref"])
            if key is None:
                return None
            if key in seen:
                self.error(src, path, "reference cycle: the reference leads back to itself")
                return None
            seen.add(key)
            src, path = key
            node = self.value(key)
        return src, path, node

    @functools.cached_property
    def several(self) -> bool:
        """Whether the main document refers to another file: any ``$ref`` in it (read from
        the parsed data, however the text spells it) naming a file. A JSON text with no
        ``$ref`` that could be one (``_JSON_MAYBE_OUT``) is not walked; YAML always is."""
        main = self.items[0].doc
        if main.positions is None and not any(p.search(main.text) for p in _JSON_MAYBE_OUT):
            return False
        stack = [main.data]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                ref = node.get("$ref")
                if isinstance(ref, str) and ref.partition("#")[0]:
                    return True
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
        return False

    def scan_refs(self) -> list[Key]:
        """Every reference in every file (none when the main one refers to no other file)."""
        found: list[Key] = []
        if not self.several:
            return found
        self.quiet = True
        for source in self.items:  # (loading a file appends it: it is scanned too)
            stack: list[tuple[Any, JsonPath]] = [(source.doc.data, ())]
            while stack:
                node, path = stack.pop()
                if isinstance(node, list):
                    stack.extend((value, (*path, i)) for i, value in enumerate(node))
                elif isinstance(node, dict):
                    if isinstance(node.get("$ref"), str):
                        key = self.parse_ref(source.index, (*path, "$ref"), node["$ref"])
                        found.extend([key] if key is not None else [])
                    names_map = bool(path) and path[-1] in _NAME_MAPS
                    for name, value in node.items():
                        if names_map or (name not in _DATA_KEYS and not name.startswith("x-")):
                            stack.append((value, (*path, name)))
        self.quiet = False
        return found


def _resolve(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # pragma: no cover - a symlink loop
        return path.absolute()


def _target(sources: Sources, src: int, node: dict[str, Any]) -> tuple[Key, Any] | None:
    """(file, path) and value of the container ``node``'s ``$ref`` (in file ``src``) names."""
    ref = node.get("$ref")
    key = sources.parse_ref(src, (), ref) if isinstance(ref, str) else None
    found = None if key is None else sources.value(key)
    return (key, found) if key is not None and _nested(found) else None


def _nested(value: Any) -> bool:
    return isinstance(value, dict | list)


def deep_references(sources: Sources) -> Problems:
    """An error at the referenced definition that nests deepest, counting through references
    (a recursive one counts nothing); none when the document refers to nothing."""
    data = sources.items[0].doc.data
    height: dict[int, int] = {}  # id of a container -> levels at and below it
    targets: dict[int, Key] = {}  # id of a referenced container -> its file and path
    active: set[int] = set()
    stack: list[tuple[int, Any, bool]] = [(0, data, False)] if _nested(data) else []
    quiet, sources.quiet = sources.quiet, True  # a broken reference is reported elsewhere
    while stack:
        src, node, done = stack.pop()
        key = id(node)
        if not done and (key in height or key in active):
            continue
        kids = [(src, k) for k in (node.values() if isinstance(node, dict) else node) if _nested(k)]
        found = _target(sources, src, node) if isinstance(node, dict) else None
        kids += [(found[0][0], found[1])] if found is not None else []  # (in the target's file)
        if done:
            active.discard(key)
            height[key] = 1 + max((height.get(id(k), 0) for _, k in kids), default=0)
        else:
            active.add(key)
            stack += [(src, node, True), *((s, k, False) for s, k in kids)]
            if found is not None:
                targets[id(found[1])] = found[0]
    sources.quiet = quiet
    problems = Problems()
    if deep := [(height[key], where) for key, where in targets.items()]:
        levels, (src, path) = max(deep, key=lambda item: item[0])
        message = (
            f"nests {levels} levels deep once its $ref are followed (a chain of definitions "
            "each referring to the next), too deep for mcpgen to walk: shorten the chain"
        )
        merged = sources.items[src].doc.overlay(path)  # a definition imported from OpenAPI
        field = pointer(path) if merged is None else merged.pointer
        problems.add(Problem(Level.ERROR, sources.location(src, path), field, message, path))
    return problems
