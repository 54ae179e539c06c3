"""The tier lists in conftest name real files (a renamed test file must not fall silently
into the unit tier), and each file is in one list only."""

from __future__ import annotations

from tiers import E2E, EXTERNAL, TESTS, tier


def test_every_listed_file_exists_and_has_one_tier() -> None:
    assert sorted(name for name in EXTERNAL | E2E if not (TESTS / name).is_file()) == []
    assert not EXTERNAL & E2E
    assert tier(TESTS / "test_conformance.py") == "external"
    assert tier(TESTS / "security" / "test_seams.py") == "e2e"
    assert tier(TESTS / "test_loader.py") == "unit"
