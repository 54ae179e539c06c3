"""Golden tests: every manifest in ``manifests/invalid`` fails ``mcpgen validate`` with exactly
the messages stored next to it in ``NAME.expected`` (stderr, no colour, run from the repo root).

Each bad manifest shows one kind of problem (its file name says which); ``multiple-*`` ones show
that every problem is reported at once. Every manifest in ``manifests/*.yaml`` must validate.

After changing a message on purpose, regenerate the expected files and review the diff::

    python tests/test_invalid_manifests.py --regen
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpgen.cli import main

ROOT = Path(__file__).resolve().parent.parent
INVALID = ROOT / "manifests" / "invalid"
BAD = sorted(p for p in INVALID.iterdir() if p.suffix in (".yaml", ".json"))
GOOD = sorted((ROOT / "manifests").glob("*.yaml"))


def run_validate(manifest: Path, *args: str) -> tuple[int, str, str]:
    """``mcpgen validate`` in-process, from the repo root, with colour off: (code, out, err)."""
    relative = manifest.relative_to(ROOT).as_posix()
    previous = Path.cwd()
    os.chdir(ROOT)
    try:
        result = CliRunner().invoke(main, ["validate", relative, *args], env={"CI": "1"})
    finally:
        os.chdir(previous)
    return result.exit_code, result.stdout, result.stderr


def expected_path(manifest: Path) -> Path:
    return manifest.with_suffix(".expected")


def test_there_are_bad_manifests() -> None:
    assert len(BAD) >= 20
    orphans = [
        p.name for p in INVALID.glob("*.expected") if not any(p == expected_path(m) for m in BAD)
    ]
    assert not orphans, f"expected files without a manifest: {orphans}"


@pytest.mark.parametrize("manifest", BAD, ids=lambda p: p.name)
def test_invalid_manifest_messages(manifest: Path) -> None:
    expected = expected_path(manifest)
    assert expected.is_file(), f"missing {expected.name}; run python {__file__} --regen"
    code, out, err = run_validate(manifest)
    assert "Traceback" not in err and "internal error" not in err
    assert code == 2, f"exit {code}\n{err}"
    assert out == ""
    assert err == expected.read_text(encoding="utf-8")
    relative = manifest.relative_to(ROOT).as_posix()
    for line in err.splitlines()[:-1]:  # every problem names file:line:col
        # the manifest, or a document it imports (located at its own line)
        assert line.startswith((f"{relative}:", relative.rsplit(".", 1)[0] + "/")), line
        assert line.split(":")[1].isdigit() and line.split(":")[2].isdigit(), line
    assert err.splitlines()[-1].endswith("warning(s)")


@pytest.mark.parametrize("manifest", GOOD, ids=lambda p: p.name)
def test_example_manifests_validate(manifest: Path) -> None:
    code, out, err = run_validate(manifest)
    assert code == 0, err
    assert ": ok (" in out
    assert "error" not in err


def regenerate() -> None:
    for manifest in BAD:
        code, _, err = run_validate(manifest)
        if code != 2 or "Traceback" in err or "internal error" in err:
            print(f"{manifest.name}: exit {code}, not written\n{err}", file=sys.stderr)
            continue
        target = expected_path(manifest)
        old = target.read_text(encoding="utf-8") if target.exists() else None
        if old != err:
            target.write_text(err, encoding="utf-8")
            print(f"{'updated' if old is not None else 'created'} {target.relative_to(ROOT)}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--regen"]:
        sys.exit(__doc__)
    regenerate()
