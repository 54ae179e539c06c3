"""The front half of the pipeline: file -> Document -> checked -> Manifest model."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mcpgen.check.semantics import check_semantics
from mcpgen.check.structure import check_structure
from mcpgen.load import MAX_DOCUMENT_BYTES, load_file
from mcpgen.model.build import build_model
from mcpgen.model.types import Manifest
from mcpgen.openapi import is_openapi
from mcpgen.openapi.to_manifest import manifest_from_spec, merge_manifest_openapi
from mcpgen.problems import InputError, Problems


@dataclass
class Loaded:
    manifest: Manifest | None
    problems: Problems


def load_manifest(path: Path, strict: bool = False) -> Loaded:
    """Load, validate and normalize; ``manifest`` is None when there are errors."""
    try:
        doc = load_file(path, MAX_DOCUMENT_BYTES)
    except InputError as exc:
        problems = Problems()
        problems.extend(exc.problems)
        return Loaded(None, problems)
    if is_openapi(doc.data):
        synthesized, problems = manifest_from_spec(doc, strict)
        if synthesized is None:
            return Loaded(None, problems)
        return Loaded(build_model(synthesized), problems)
    problems = check_structure(doc)
    if not problems.errors:
        problems.extend(check_semantics(doc).items)
    if not problems.errors and "openapi" in doc.data:
        problems.extend(merge_manifest_openapi(doc, strict).items)
    if problems.has_errors(strict):
        return Loaded(None, problems)
    return Loaded(build_model(doc), problems)
