"""The front half of the pipeline, the same for every source:
file -> raw document (an OpenAPI document merged in first) -> checked as a whole -> model.

A bare OpenAPI document becomes the manifest it stands for; a manifest's ``openapi:``
section is imported into it. Then structure and semantics are checked together on the
whole document (every tool, whatever its source), and only a document without errors
becomes the model.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from mcpgen.check.semantics import check_semantics
from mcpgen.check.structure import check_structure
from mcpgen.check.view import broken_entries
from mcpgen.load import MAX_DOCUMENT_BYTES, Document, load_file, load_text
from mcpgen.model.build import build_model
from mcpgen.model.types import Manifest
from mcpgen.openapi import is_openapi
from mcpgen.openapi.to_manifest import merge, synthesize
from mcpgen.problems import InputError, Level, Problem, Problems


@dataclass
class Loaded:
    manifest: Manifest | None
    problems: Problems
    document: Document | None = None


@contextmanager
def collector_paused() -> Iterator[None]:
    """For a command that loads a big document and keeps what it made to its end (build,
    diff): the garbage collector is off while it runs (millions of objects for a big API,
    few reference cycles), and what is alive afterwards is frozen, so the collections of
    what the command does next no longer walk it. ``mcpgen build`` runs whole inside it
    (its rendering and parsing make millions of short-lived objects too; the collector's
    passes over them were a tenth of a big rebuild); ``mcpgen diff`` loads its two
    versions inside it. Work that makes cyclic garbage (black, the model generator) runs
    in workers, which collect as usual, or, on one core, with the collector on
    (``pool.done``). The command calls ``gc.unfreeze()`` when it ends (tests run commands
    in one long process)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def load_manifest(path: Path, strict: bool = False, name: str | None = None) -> Loaded:
    """Load, merge, check and model ``path``; ``manifest`` is None when there are errors.
    ``name`` names a server made from a bare OpenAPI document."""
    try:
        doc = load_file(path, MAX_DOCUMENT_BYTES)
    except InputError as exc:
        return _failed(exc)
    return load_document(doc, strict, name)


def load_source_text(text: str, file: str, base_dir: Path, strict: bool = False) -> Loaded:
    """The same for text read elsewhere (a file at a git revision), relative files
    resolved against ``base_dir``."""
    try:
        doc = load_text(text, file, base_dir, json_first=file.endswith(".json"))
    except InputError as exc:
        return _failed(exc)
    return load_document(doc, strict)


def load_document(doc: Document, strict: bool = False, name: str | None = None) -> Loaded:
    problems = Problems()
    if is_openapi(doc.data):
        doc, imported = synthesize(doc, name)
        problems.extend(imported.items)
        if not doc.data["tools"] and not doc.data.get("resources"):
            problems.add(
                Problem(
                    Level.ERROR,
                    doc.locate(("server",)),
                    "paths",
                    "the document has no operation to serve (webhooks and callbacks are not "
                    "imported): there would be no tools",
                )
            )
    elif isinstance(doc.data, dict) and "openapi" in doc.data:
        problems.extend(merge(doc).items)
    problems.extend(check(doc).items)
    if problems.has_errors(strict):
        return Loaded(None, problems, doc)
    return Loaded(build_model(doc), problems, doc)


def check(doc: Document) -> Problems:
    """Every problem of the whole (merged) document: structural and semantic together."""
    problems = check_structure(doc)
    paths = _paths(doc, problems)
    if () in paths:  # not a manifest this mcpgen can read at all: nothing more to say
        return problems
    problems.extend(check_semantics(doc, broken_entries(paths)).items)
    return problems


def _paths(doc: Document, problems: Problems) -> list[tuple[str | int, ...]]:
    return [tuple(p.path) for p in problems.items if p.level is Level.ERROR and p.path is not None]


def _failed(exc: InputError) -> Loaded:
    problems = Problems()
    problems.extend(exc.problems)
    return Loaded(None, problems)
