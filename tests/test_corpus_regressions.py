"""Defects the real-spec corpus found (docs/corpus.md), each kept as a small spec in
bench/corpus_repro/ and checked here through the same pipeline ``mcpgen build`` runs."""

from __future__ import annotations

from pathlib import Path

from mcpgen.pipeline import load_manifest
from mcpgen.render.spec import spec_data

REPRO = Path(__file__).resolve().parent.parent / "bench" / "corpus_repro"


def test_a_date_version_becomes_a_pep_440_package_version() -> None:
    loaded = load_manifest(REPRO / "version-date.yaml")
    assert loaded.manifest is not None
    server = loaded.manifest.server
    assert (server.version, server.package_version) == ("2018-08-01", "2018.8.1")
    [warning] = [w for w in loaded.problems.warnings if "PEP 440" in w.message]
    assert warning.field.startswith("#/info")  # located in the spec


def test_properties_named_like_keywords_keep_their_definitions() -> None:
    """A property called ``examples`` or ``default`` is a schema: its $refs are bundled."""
    for name in ("property-named-examples.yaml", "property-named-default-input.yaml"):
        loaded = load_manifest(REPRO / name)
        assert loaded.manifest is not None, loaded.problems.sorted()
        for tool in loaded.manifest.tools:
            for schema in (tool.input_schema, tool.output_schema):
                if not isinstance(schema, dict):
                    continue
                text = str(schema)
                for ref in {r for r in text.split("'") if r.startswith("#/$defs/")}:
                    assert ref.split("/")[-1] in schema.get("$defs", {}), (name, ref)


def test_a_pattern_python_cannot_use_is_left_out_with_a_warning() -> None:
    loaded = load_manifest(REPRO / "java-regex-pattern.yaml")
    assert loaded.manifest is not None
    assert any("regular expression Python can use" in w.message for w in loaded.problems.warnings)
    assert "\\p{" not in str(spec_data(loaded.manifest)["tools"])


def test_a_spec_without_operations_is_refused_at_build_time() -> None:
    loaded = load_manifest(REPRO / "webhooks-only.yaml")
    assert loaded.manifest is None
    assert any("no operation to serve" in e.message for e in loaded.problems.errors)
