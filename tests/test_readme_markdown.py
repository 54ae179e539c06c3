"""The generated README as Markdown renders it: a name shown in backticks is printed as
written, since a backslash escape inside a code span is not applied (``convert\\_units``
was shown, backslash and all, in every README's table of handlers)."""

from __future__ import annotations

import re
from pathlib import Path

from mcpgen.pipeline import load_manifest
from mcpgen.render import render_without_models
from mcpgen.render.templates import markdown_code

MANIFEST = """\
mcpgen: 1
server: {name: shop_front}
auth: {type: oauth, issuer: "https://issuer.example", audience: shop, jwksUrl: "https://issuer.example/jwks"}
tools:
  - {name: word_count, scopes: [items:read_all], input: {type: object}}
  - {name: long_export, task: optional, input: {type: object}}
resources:
  - {uri: "shop://about_page", name: about_page, text: hi}
prompts:
  - {name: plan_trip, messages: [{role: user, text: go}]}
"""


def code_spans(markdown: str) -> list[str]:
    """The contents of the code spans of ``markdown`` (CommonMark: a run of backticks
    closed by a run of the same length; one space stripped each side when both have one)."""
    spans = []
    for _, body in re.findall(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", markdown):
        both = body[:1] == " " and body[-1:] == " " and body.strip()
        spans.append(body[1:-1] if both else body)
    return spans


def test_names_in_backticks_are_shown_as_written(tmp_path: Path) -> None:
    (tmp_path / "mcpgen.yaml").write_text(MANIFEST, "utf-8")
    model = load_manifest(tmp_path / "mcpgen.yaml").manifest
    assert model is not None
    spans = code_spans(render_without_models(model).generated["README.md"])
    for name in ["word_count", "long_export", "about_page", "plan_trip", "items:read_all"]:
        assert name in spans, name
    assert not [s for s in spans if "\\_" in s]


def test_a_code_span_holds_any_text() -> None:
    assert markdown_code("a_b") == "`a_b`"
    assert code_spans(markdown_code("say `hi`")) == ["say `hi`"]
    assert code_spans(markdown_code("``x")) == ["``x"]
    assert markdown_code("a|b\n c") == "`a\\|b c`"  # a table cell's pipe, one line


def marked_cells(row: str) -> list[str]:
    """A table row's cells as marked splits it: at each ``|`` after an even number of
    backslashes, code spans or not (GitHub and markdown-it skip a code span's ``\\\\|``)."""
    cells, start, slashes = [], 0, 0
    for at, char in enumerate(row):
        if char == "|" and slashes % 2 == 0:
            cells.append(row[start:at].strip())
            start = at + 1
        slashes = slashes + 1 if char == "\\" else 0
    return cells[1:]


def test_a_name_holding_a_pipe_stays_in_one_cell(tmp_path: Path) -> None:
    """A resource or prompt named ``a\\|b`` was the code span ``a\\\\|b``, which marked split
    into two cells (GitHub and markdown-it kept one; checked with npm ``marked`` 18.3 and
    ``markdown-it`` 15.0 and cmarkgfm 2025.10): such a name is written escaped instead, one cell
    everywhere, and reads back as written (CommonMark: ``\\`` + punctuation is that mark)."""
    names = ["a\\|b", "x|y", "back\\", "p\\\\|q"]
    resources = "".join(
        f"  - {{uri: 'r://{i}', name: '{n}', text: hi}}\n" for i, n in enumerate(names)
    )
    prompts = "".join(
        f"  - {{name: 'p{n}', messages: [{{role: user, text: go}}]}}\n" for n in names
    )
    source = f"mcpgen: 1\nserver: {{name: pipes}}\nresources:\n{resources}prompts:\n{prompts}"
    (tmp_path / "mcpgen.yaml").write_text(source, "utf-8")
    model = load_manifest(tmp_path / "mcpgen.yaml").manifest
    assert model is not None
    readme = render_without_models(model).generated["README.md"]
    rows = [line for line in readme.splitlines() if line.startswith(("| resource |", "| prompt |"))]
    assert len(rows) == 2 * len(names)
    shown = []
    for row in rows:
        cells = marked_cells(row)
        assert len(cells) == 3, row
        cell = cells[1].replace("\\|", "|")  # a table's escaped pipe, before inlines
        spans = code_spans(cell)
        shown.append(spans[0] if spans else re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", cell))
    assert shown == [*names, *(f"p{n}" for n in names)]
