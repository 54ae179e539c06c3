"""The pipeline, the same for every source: file -> document (a bare OpenAPI document
becomes the manifest it stands for, a manifest's ``openapi:`` section is merged in) ->
checked as a whole -> model; then (``render_files``) rendered files, formatted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mcpgen import timings as timing
from mcpgen.check import formats
from mcpgen.check.semantics import check_semantics
from mcpgen.check.structure import broken_entries, check_structure
from mcpgen.format import Engine, format_files
from mcpgen.load import MAX_DOCUMENT_BYTES, Document, load_file, load_text
from mcpgen.model import remembered
from mcpgen.model.build import build_model
from mcpgen.model.types import Manifest
from mcpgen.openapi import import_openapi, is_openapi
from mcpgen.openapi.sources import Sources, deep_references
from mcpgen.openapi.to_manifest import merge, synthesize
from mcpgen.problems import InputError, Level, Problem, Problems

if TYPE_CHECKING:
    from mcpgen.render import Output


@dataclass
class Loaded:
    manifest: Manifest | None
    problems: Problems
    document: Document | None = None


def load_manifest(path: Path, strict: bool = False, name: str | None = None) -> Loaded:
    """``path`` loaded, merged, checked and modelled (no manifest when there are errors);
    ``name``: of a server made from a bare OpenAPI document."""
    return _load(lambda: load_file(path, MAX_DOCUMENT_BYTES), strict, name)


def load_source_text(text: str, file: str, base_dir: Path, strict: bool = False) -> Loaded:
    """The same for text read elsewhere (a file at a git revision), relative files
    resolved against ``base_dir``."""
    return _load(lambda: load_text(text, file, base_dir, json_first=file.endswith(".json")), strict)


def _load(read: Callable[[], Document], strict: bool, name: str | None = None) -> Loaded:
    try:
        doc = read()
    except InputError as exc:  # the file cannot be read: nothing more to say
        return Loaded(None, Problems(exc.problems))
    return load_document(doc, strict, name)


def load_document(doc: Document, strict: bool = False, name: str | None = None) -> Loaded:
    """Import, merge, check and model ``doc``. A walk that runs out of stack (a long chain
    of definitions each referring to the next) is reported at the chain's start."""
    try:
        return _load_document(doc, strict, name)
    except RecursionError:
        problems = too_deep(doc)
        if not problems.has_errors():
            raise
        return Loaded(None, problems, doc)
    finally:
        formats.save()  # the format verdicts the checks made, kept once


def too_deep(doc: Document | None) -> Problems:
    """After a walk of ``doc`` ran out of stack: an error where its deepest chain of
    references starts (``openapi.sources``); none when there is no such chain."""
    return deep_references(Sources(doc, Problems())) if doc is not None else Problems()


def _load_document(doc: Document, strict: bool, name: str | None) -> Loaded:
    problems = Problems()
    if _other_openapi(doc.data):  # the importer says which version it reads
        problems.extend(import_openapi(doc).problems)
        return Loaded(None, problems, doc)
    if is_openapi(doc.data):
        doc, imported = synthesize(doc, name)
        problems.extend(imported.items)
        if not (doc.data["tools"] or doc.data.get("resources") or imported.has_errors()):
            message = (
                "the document has no operation to serve (webhooks and callbacks are not "
                "imported): there would be no tools"
            )
            problems.add(Problem(Level.ERROR, doc.locate(("server",)), "paths", message))
    elif isinstance(doc.data, dict) and "openapi" in doc.data:
        problems.extend(merge(doc).items)
    problems.extend(check(doc).items)
    if problems.has_errors(strict):
        return Loaded(None, problems, doc)
    if doc.imported is None:  # only imported operations are compacted
        return Loaded(build_model(doc), problems, doc)
    server = doc.data["server"]
    pack = remembered.open_pack(str(server.get("package") or server["name"]))
    manifest = build_model(doc, pack)
    remembered.save_pack(pack)
    return Loaded(manifest, problems, doc)


def _other_openapi(data: object) -> bool:
    """An OpenAPI or Swagger document of a version mcpgen does not read (``openapi: 4.0``),
    not a manifest with an ``openapi:`` section (an object) to be checked as one."""
    if not isinstance(data, dict) or "mcpgen" in data or is_openapi(data):
        return False
    version = data.get("openapi", data.get("swagger"))
    return isinstance(version, str | int | float) and str(version)[:1].isdigit()


def check(doc: Document) -> Problems:
    """Every problem of the whole (merged) document, structural and semantic."""
    problems = check_structure(doc)
    paths = [tuple(p.path) for p in problems.errors if p.path is not None]
    if () in paths:  # not a manifest this mcpgen can read at all: nothing more to say
        return problems
    problems.extend(check_semantics(doc, broken_entries(paths)).items)
    return problems


def render_files(manifest: Manifest, source: str | None, formatter: Engine = "ruff") -> Output:
    """The project's files, formatted: model modules come from the build cache (formatted)
    or are generated in worker processes while the rest is rendered."""
    import os

    from mcpgen import cache, vendoring
    from mcpgen.render import add_models, render_without_models
    from mcpgen.render.model_parts import start_models
    from mcpgen.render.templates import environment

    models = start_models(manifest, cached=True, jobs=os.cpu_count() or 1)
    environment().bytecode_cache = cache.template_cache()
    with vendoring.runtime_imports():
        rendered = render_without_models(manifest, source)
    with timing.phase("models (datamodel-code-generator, waited for)"):
        made = models()
        add_models(rendered, manifest, made)
    with timing.phase("format"):
        format_output(rendered, formatter)
    for name, file in made.fresh.items():  # kept formatted: a rebuild formats it no more
        cache.write(file, rendered.generated[f"src/{manifest.server.package}/models/{name}.py"])
    return rendered


def handler_stub(manifest: Manifest, relative: str) -> str | None:
    """The stub a build writes at ``relative`` (``src/<pkg>/handlers/<kind>/<ident>.py``),
    formatted as on disk; None when it writes none there."""
    from mcpgen.render import context, stub, stubs

    for path, kind, item in stubs(manifest):
        if relative == path:
            return format_files({path: stub(kind, item, context(manifest))})[path]
    return None


def format_output(out: Output, engine: Engine = "ruff") -> None:
    """The Python files of a rendered project formatted in place, but the vendored runtime
    (mcpgen's own formatted source) and ``out.formatted`` (model modules from the cache)."""
    python = {
        path: text
        for files in (out.generated, out.stubs)
        for path, text in files.items()
        if path.endswith(".py") and "/_runtime/" not in path and path not in out.formatted
    }
    done = format_files(python, engine)
    for files in (out.generated, out.stubs):
        files.update({path: done[path] for path in files if path in done})
