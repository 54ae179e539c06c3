"""The manifest -> code promise, on random manifests (issue 17, item 7).

For every manifest hypothesis draws (``manifest_strategies``: names that clash once made
Python, keywords, builtins, generated names, URI templates, prompts, completions, $defs and
$ref, enums, defaults, patterns, and OpenAPI operations mixed in), either ``mcpgen validate``
refuses it with located errors (exit 2; file, line and field; no traceback), or
``mcpgen build`` makes code that compiles, passes ``ruff check``, ``black --check`` and
``mypy --strict`` and imports, its server listing in memory what its ``mcp-surface.json``
says. See ``property_harness`` for the checks and docs/property-test.md for the figures.

CI runs a small derandomized sample (MCPGEN_PROPERTY_EXAMPLES, default 20), mypy once over
all of its builds. The big run::

    MCPGEN_PROPERTY_EXAMPLES=500 MCPGEN_PROPERTY_REPORT=/tmp/property.json \\
        nice python -m pytest tests/test_property_manifests.py -k promise -s
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import property_harness as harness
import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from manifest_cases import Case, manifests

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = int(os.environ.get("MCPGEN_PROPERTY_EXAMPLES", "20"))
REPORT = os.environ.get("MCPGEN_PROPERTY_REPORT")
# record a broken case and go on (to count them all) instead of shrinking the first one
KEEP_GOING = bool(os.environ.get("MCPGEN_PROPERTY_KEEP_GOING"))
# another fixed seed draws other cases (default: hypothesis's derandomized ones)
SEED = os.environ.get("MCPGEN_PROPERTY_SEED")
# mypy's cache of the SDK and pydantic outlives a run (cold it costs ~25 s)
MYPY_CACHE = Path(tempfile.gettempdir()) / "mcpgen-property-mypy-cache"
# seconds: ~1 s a case to validate and build, mypy ~4 s a build, the probe ~1 s a build
TIMEOUT = 300 + 8 * EXAMPLES


def _case_name(index: int, manifest: dict[str, object]) -> str:
    """A server name unique in the run (one mypy run sees every package at once)."""
    return f"c{index:05d}"


@pytest.mark.timeout(TIMEOUT)
def test_promise_on_random_manifests(tmp_path: Path) -> None:
    survey = harness.Survey()

    @settings(
        max_examples=EXAMPLES,
        derandomize=SEED is None,  # CI sees the same cases every run
        database=None,
        deadline=None,
        phases=[Phase.generate, Phase.shrink],
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(case=manifests())
    @seed(int(SEED or 0))
    def one(case: Case) -> None:
        manifest, api, wild = case
        survey.cases += 1
        survey.wild += wild
        folder = tmp_path / f"case{survey.cases:05d}"
        manifest["server"] = {**manifest["server"], "name": _case_name(survey.cases, manifest)}  # type: ignore[dict-item]
        harness.write_case(folder, manifest, api)
        try:
            kinds = harness.validate(folder)
            if kinds is not None:
                survey.refused_cases += 1
                survey.refused.update(kinds)
                return
            survey.built.append(harness.build(folder))
        except harness.Broken as exc:
            survey.broken.append((folder, str(exc)))
            if not KEEP_GOING:
                raise

    one()
    failed = harness.mypy(survey.built, tmp_path / "batch", MYPY_CACHE)
    failed_probe = harness.probe([b for b in survey.built if b.package not in failed])
    for item in survey.built:
        reason = failed.get(item.package) or failed_probe.get(item.package)
        if reason:
            survey.broken.append((item.folder, reason))
    summary = survey.summary(len(survey.built) - len(failed) - len(failed_probe))
    print("\nproperty run:", json.dumps(summary, indent=2, ensure_ascii=False))
    if REPORT:
        Path(REPORT).write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    details = [
        f"{folder / harness.MANIFEST}:\n{(folder / harness.MANIFEST).read_text('utf-8')}\n{why}"
        for folder, why in survey.broken
    ]
    assert not survey.broken, "\n\n".join(details)
    # the generator reaches both sides of the promise, or the test proves nothing
    assert survey.refused_cases and survey.built, summary
