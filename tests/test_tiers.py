"""The tier lists in conftest name real files (a renamed test file must not fall silently
into the unit tier), and each file is in one list only."""

from __future__ import annotations

from tiers import E2E, EXTERNAL, FUZZ, TESTS, tier


def test_every_listed_file_exists_and_has_one_tier() -> None:
    listed = [*EXTERNAL, *FUZZ, *E2E]
    assert sorted(name for name in listed if not (TESTS / name).is_file()) == []
    assert len(set(listed)) == len(listed)
    assert tier(TESTS / "test_conformance.py") == "external"
    assert tier(TESTS / "security" / "test_seams.py") == "e2e"
    assert tier(TESTS / "test_loader.py") == "unit"
    assert tier(TESTS / "test_fuzz_loader.py") == "fuzz"
