"""Formatting piece by piece gives exactly black's result on the whole file.

Big generated files are cut into pieces (``mcpgen.chunking``) that black formats one at a
time, cached and in parallel. These tests compare the glued result with black on the whole
file, over every generated example (re-wrapped at other line lengths so black has work to
do), the raw models of a real spec, and third-party library sources with comments,
decorators, overloads and docstrings our templates never produce.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

import black
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpgen.format import FormatJob, chunking, mode

ROOT = Path(__file__).resolve().parent.parent


def _black(source: str, **changes: object) -> str:
    changed = dataclasses.replace(mode(), **changes)  # type: ignore[arg-type]
    return black.format_str(source, mode=changed)


def _by_pieces(source: str) -> str:
    pieces = chunking.split(source, member_threshold=0)  # cut every class
    assert pieces is not None, "expected the source to be cut"
    return chunking.join(pieces, [_black(p.text) for p in pieces])


def _corpus() -> list[Path]:
    # The examples share most of the runtime: two of them cover every template.
    files: list[Path] = []
    for example in ("conformance", "shop"):
        files += sorted(ROOT.glob(f"generated_examples/{example}/src/*/*.py"))
        files += sorted(ROOT.glob(f"generated_examples/{example}/tests/*.py"))
    return [f for f in files if f.stat().st_size > 200]


@pytest.mark.parametrize("path", _corpus(), ids=lambda p: str(p.relative_to(ROOT)))
@pytest.mark.parametrize("width", [40, 160])
def test_pieces_equal_whole_file_black_on_generated_code(path: Path, width: int) -> None:
    # Re-wrapped at another width and without magic trailing commas, the file is no longer
    # formatted for our mode: black changes long calls, signatures and blank lines.
    source = _black(path.read_text("utf-8"), line_length=width, magic_trailing_comma=False)
    assert _by_pieces(source) == _black(source)


def _library_files() -> list[Path]:
    files: list[Path] = []
    for package in ("click", "jinja2"):
        spec = importlib.util.find_spec(package)
        assert spec is not None and spec.origin is not None
        files += sorted(Path(spec.origin).parent.glob("*.py"))
    return files


def test_pieces_equal_whole_file_black_on_library_sources() -> None:
    checked = 0
    for path in _library_files():
        source = path.read_text("utf-8")
        pieces = chunking.split(source, member_threshold=0)
        if pieces is None:
            continue  # `# fmt:` regions: formatted whole
        assert chunking.join(pieces, [_black(p.text) for p in pieces]) == _black(source), path
        checked += 1
    assert checked > 20


def test_raw_generated_models_of_a_real_spec() -> None:
    from mcpgen.pipeline import load_manifest
    from mcpgen.render.models import _run, model_schemas

    spec = ROOT / "tests/fixtures/openapi-real/star-trek-3.0.json"
    loaded = load_manifest(spec)
    assert loaded.manifest is not None
    manifest = loaded.manifest
    raw = _run(model_schemas(manifest), manifest.shared_defs)  # the generator's own layout
    assert _black(raw) != raw, "expected black to have work to do on this file"
    assert _by_pieces(raw) == _black(raw)


def test_cuts_at_statements_and_class_members() -> None:
    source = (
        "import os\n\n\nclass A:\n    x: int\n\n    def f(self):\n        return 1\n\n"
        "    def g(self):\n        return 2\n\n\ny = 1\n"
    )
    pieces = chunking.split(source, member_threshold=0)
    assert pieces is not None
    assert [(p.first, p.member) for p in pieces] == [
        ("import", False),
        ("def", False),  # the class with its first member
        ("def", True),
        ("def", True),
        ("other", False),
    ]
    assert chunking.split("x = 1; y = 2\n") is None  # two statements on a line
    assert chunking.split("x = 1  # fmt: skip\n") is None


def test_a_changed_method_is_the_only_piece_formatted_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCPGEN_CACHE_DIR", str(tmp_path))
    methods = "".join(
        f"    async def tool_{i}(self, value: int) -> int:\n        return value + {i}\n\n"
        for i in range(600)
    )
    source = "class Client:\n" + methods
    first = FormatJob({"client.py": source})
    assert first.units > 500  # cut into pieces
    formatted = first.run()["client.py"]
    assert formatted == _black(source)

    assert FormatJob({"client.py": source}).units == 0  # the whole file is cached
    changed = source.replace("value + 7\n", "value * 7\n")
    # cut from how the last version was cut (the pack keeps it), without parsing it whole
    with monkeypatch.context() as patch:
        patch.setattr("mcpgen.format.split", _no_whole_parse)
        again = FormatJob({"client.py": changed})
    assert again.units == 1
    assert again.run()["client.py"] == _black(changed)


def _no_whole_parse(source: str) -> None:
    raise AssertionError("parsed whole")


def _client_source() -> str:
    path = next(ROOT.glob("generated_examples/conformance/src/*/client.py"))
    return path.read_text("utf-8")


def _edits(source: str) -> dict[str, str]:
    """Edits a rebuild makes to a typed client (the methods are class members)."""
    methods = [i for i in range(len(source)) if source.startswith("\n    async def ", i)]
    first, second, third = methods[2], methods[3], methods[4]
    doc = source.index('"""', first) + 3
    return {
        "a description changed": source[:doc] + "Changed. " + source[doc:],
        "a method removed": source[:first] + source[second:],
        "a method added": source[:second] + source[first:second] + source[second:],
        "two methods changed": source[:doc] + "x" + source[doc:third] + "\n" + source[third:],
    }


@pytest.mark.parametrize("edit", ["a description changed", "a method removed", "a method added",
                                  "two methods changed"])  # fmt: skip
def test_a_new_version_is_cut_from_the_last_cut(edit: str) -> None:
    old = _client_source()
    new = _edits(old)[edit]
    pieces = chunking.split(old, member_threshold=0)
    assert pieces is not None
    again = chunking.resplit(new, old, pieces, member_threshold=0)
    assert again is not None
    assert again == chunking.split(new, member_threshold=0)


_SNIPPETS = [
    "",
    "\n",
    "    # a comment\n",
    '    """a bare string"""\n',
    "    x = 1\n",
    "    def f(self): ...\n",
    "    @property\n    def g(self) -> int:\n        return 1\n",
    "x = 1\n",
    "class Other:\n    y = 2\n",
    "        indented = 1\n",
    '    """open\n',
    "    def h(self):\n",
    "# fmt: off\n",
    "    else:\n        pass\n",
    "\\\n",
    "    async def k(\n        self,\n    ) -> None:\n        pass\n\n",
]


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_a_cut_from_the_last_cut_is_the_whole_cut_or_none(data: st.DataObject) -> None:
    """Whatever the edit (a line range replaced by code, comments, strings, broken code), a
    cut made from the last one is exactly the cut of the whole new source, or None."""
    old = _client_source()
    lines = old.splitlines(keepends=True)
    start = data.draw(st.integers(0, len(lines)))
    end = data.draw(st.integers(start, min(len(lines), start + 12)))
    inserted = data.draw(st.lists(st.sampled_from(_SNIPPETS), max_size=3))
    new = "".join(lines[:start] + inserted + lines[end:])
    pieces = chunking.split(old, member_threshold=0)
    assert pieces is not None
    again = chunking.resplit(new, old, pieces, member_threshold=0)
    if again is not None:
        assert again == chunking.split(new, member_threshold=0)


def test_unparsable_code_is_reported_with_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpgen.format import FormatError

    monkeypatch.setenv("MCPGEN_CACHE_DIR", str(tmp_path))
    with pytest.raises(FormatError, match=r"broken\.py"):
        FormatJob({"broken.py": "def f(:\n" + "x = 1\n" * 1200}).run()
