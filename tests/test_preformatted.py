"""``preformatted.looks_formatted`` lets pieces of the typed client and of the generated
tests skip black: it must never say yes to a piece black would change. Checked on
handmade cases, on both files of every shipped example and OpenAPI fixture (and GitHub's,
when ``bench/out/github`` holds its spec), and on those of random manifests with hostile
descriptions, names and enum values."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import black
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mcpgen.format import chunking, mode
from mcpgen.format.preformatted import looks_formatted
from mcpgen.pipeline import load_manifest
from mcpgen.render import CLIENT_TEMPLATE, GENERATED_TEMPLATES, context, render
from mcpgen.render import LAID_OUT as LAID_OUT_PATHS

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [
    *sorted(ROOT.glob("manifests/*.yaml")),
    *sorted(ROOT.glob("tests/fixtures/openapi-real/*.json")),
    *sorted(ROOT.glob("tests/fixtures/openapi-e2e/*.yaml")),
    *ROOT.glob("bench/out/github/api.github.com.json"),  # when downloaded (bench/github_spec.sh)
]

METHOD = '''class _mcpgen_piece:
    async def get_thing(
        self,
        *,
        name: str,
        progress: ProgressCallback | None = None,
    ) -> models.GetThingOutput:
        """Get a thing

        Returns the thing called `name`.
        """
        arguments = _arguments({"name": name}, {})
        result = await self._call("get_thing", arguments, progress)
        return list(result.content)
'''


def _black(text: str) -> str:
    return black.format_str(text, mode=mode())


def test_a_method_laid_out_as_black_does_is_recognised() -> None:
    assert _black(METHOD) == METHOD
    assert looks_formatted(METHOD)


@pytest.mark.parametrize(
    ("old", "new", "why"),
    [
        ("\n\n        Returns the thing called `name`.", "", "one-line docstring: black joins it"),
        ("Get a thing", " Get a thing", "space after the opening quotes"),
        ("        Returns", "            Returns", "body indented deeper than the quotes"),
        ("        Returns", "\tReturns", "a tab"),
        ("called `name`.", "called `name`.  ", "trailing whitespace"),
        ('"get_thing"', "'get_thing'", "single quotes"),
        ('{"name": name}', '{"name":name}', "a code line black respaces (caught: fits, but...)"),
        ("        name: str,", "        name: " + "x" * 100 + ",", "a long code line"),
        ("`name`.", "`name` \\x41.", "an escape black rewrites"),
        ("        arguments", "\n\n        arguments", "two blank lines"),
        ('        """\n        arguments', '"""\n        arguments', "closing quotes not alone"),
    ],
)
def test_what_black_would_change_is_not_recognised(old: str, new: str, why: str) -> None:
    changed = METHOD.replace(old, new, 1)
    assert changed != METHOD, why
    if why.startswith("a code line black respaces"):
        # not every change is detectable: this one is why the test is a template test,
        # whose fixed text is black's; the variable parts are what the checks cover
        assert _black(changed) != changed
        return
    assert not looks_formatted(changed), why


TEMPLATES = {**GENERATED_TEMPLATES, "src/{pkg}/_upstream.py": "package/_upstream.py.jinja"}
LAID_OUT = [CLIENT_TEMPLATE, *(TEMPLATES[path] for path in LAID_OUT_PATHS)]


def _pieces(template: str, manifest_path: Path) -> list[str]:
    manifest = load_manifest(manifest_path).manifest
    assert manifest is not None
    # every class cut into its members, as in a big API's files
    pieces = chunking.split(render(template, **context(manifest)), member_threshold=1)
    return [piece.text for piece in pieces or []]


@pytest.mark.parametrize("template", LAID_OUT)
@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_no_piece_is_wrongly_recognised(source: Path, template: str) -> None:
    pieces = _pieces(template, source)
    recognised = [text for text in pieces if looks_formatted(text)]
    assert recognised, "nothing recognised: the check is of no use"
    wrong = [text for text in recognised if _black(text) != text]
    assert not wrong, wrong[0]


TEXT = st.lists(
    st.sampled_from(
        [
            *"abc XYZ09_-.,:;`*#>()[]{}|/'\"\\\n\t ",
            *["\u00e9", "\u4e2d", "\U0001f600", "\u200b", "\u2028", "\u00a0", "\\x41", "\\u0041"],
            *["word " * 12, "        indented", "\n\n", '"""', "- item\n  - nested"],
        ]
    ),
    max_size=40,
).map("".join)
NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,60}", fullmatch=True)
PARAM = st.one_of(
    st.just({"type": "string"}),
    st.just({"type": "integer", "minimum": 0}),
    st.just({"type": "array", "items": {"type": "number"}}),
    st.lists(
        st.one_of(TEXT, st.integers(-(10**20), 10**20)), min_size=1, max_size=6, unique=True
    ).map(lambda values: {"enum": values}),
)


@st.composite
def manifests(draw: Any) -> dict[str, Any]:
    tools = []
    for name in draw(st.lists(NAMES, min_size=1, max_size=4, unique=True)):
        properties = draw(st.dictionaries(NAMES, PARAM, max_size=5))
        tool: dict[str, Any] = {
            "name": name,
            "description": draw(TEXT) or "x",
            "input": {
                "type": "object",
                "properties": properties,
                "required": (
                    draw(st.lists(st.sampled_from(sorted(properties)), unique=True))
                    if properties
                    else []
                ),
            },
        }
        title = draw(st.one_of(st.none(), TEXT))
        if title and title.strip():
            tool["title"] = title
        tools.append(tool)
    return {"mcpgen": 1, "server": {"name": "fuzz", "version": "1.0.0"}, "tools": tools}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(manifests())
def test_random_clients_are_never_wrongly_recognised(document: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "m.yaml"
        path.write_text(json.dumps(document), "utf-8")
        manifest = load_manifest(path).manifest
        if manifest is None:  # the fuzzer made a manifest mcpgen refuses
            return
        raws = [render(template, **context(manifest)) for template in LAID_OUT]
    methods = 0
    for raw in raws:
        for piece in chunking.split(raw, member_threshold=1) or []:
            if looks_formatted(piece.text):
                assert _black(piece.text) == piece.text, piece.text
                methods += "await self._call(" in piece.text
    event(f"tool methods recognised: {min(methods, 3)}+")


def test_a_laid_out_client_formats_to_the_same_bytes_with_less_black(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The whole path: ``FormatJob`` skips the recognised pieces of a big client and still
    returns what black gives for the file."""
    from mcpgen.format import CHUNK_LINES, FormatJob

    monkeypatch.setenv("MCPGEN_CACHE_DIR", "")
    manifest = load_manifest(ROOT / "tests/fixtures/openapi-real/star-trek-3.0.json").manifest
    assert manifest is not None
    text = render(CLIENT_TEMPLATE, **context(manifest))
    assert text.count("\n") >= CHUNK_LINES  # cut into pieces
    path = "src/x/client.py"
    plain = FormatJob({path: text})
    laid_out = FormatJob({path: text}, laid_out={path})
    assert laid_out.units < plain.units / 2  # most pieces skip black
    assert laid_out.run() == plain.run() == {path: _black(text)}
