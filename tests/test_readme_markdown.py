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
