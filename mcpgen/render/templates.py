"""The Jinja environment: templates get the model and literal-safe filters, nothing else."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from mcpgen.literals import py
from mcpgen.problems import cut, printable


def entries(params: list[Any], required: bool) -> str:
    """``{"wire key": python_name, ...}`` for the ``params`` always sent (or the optional
    ones, left out when ``None``). One with a default always has a value: ``None`` given to
    ``str | None = "x"`` is sent as null, not left out (which meant "x")."""
    chosen = (p for p in params if (p.required or p.default is not None) == required)
    return "{" + ", ".join(f"{py(p.key)}: {p.name}" for p in chosen) + "}"


def variable_dict(variables: list[Any]) -> str:
    """The same for template variables or prompt arguments."""
    return "{" + ", ".join(f"{py(v.name)}: {v.python}" for v in variables) + "}"


def keywords(params: list[Any], values: dict[str, Any]) -> list[str]:
    """``name=literal`` call arguments for the ``params`` that ``values`` (wire keys) has."""
    return [f"{p.name}={py(values[p.key])}" for p in params if p.key in values]


def docstring(text: str | None) -> str:
    """Text made safe inside a triple-quoted docstring: backslashes and quotes escaped (no
    escape or quote ends it early), unprintable characters but line breaks and tabs too."""
    return printable((text or "").replace("\\", "\\\\").replace('"', '\\"'), "\n\t").strip()


def comment(text: str | None) -> str:
    """Text made safe for one ``#`` comment line."""
    return " ".join((text or "").split()).encode("unicode_escape").decode("ascii")


def toml_string(value: str) -> str:
    """A TOML basic string: JSON escapes for quotes, backslashes and control characters
    (valid TOML), every other character as itself (TOML has no surrogate-pair escapes)."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def oneline(text: str | None, limit: int = 200) -> str:
    return cut(" ".join((text or "").split()), limit)


def markdown_inline(text: str | None) -> str:
    """Text safe inside Markdown prose: one line, no HTML, no code fences."""
    return re.sub(r"([\\`*_\[\]<>|#])", r"\\\1", " ".join((text or "").split()))


def markdown_code(text: str | None) -> str:
    """Text as a Markdown code span, shown as written (a backslash escape inside backticks
    is printed, not applied: `a\\_b`), on one line, its ``|`` escaped for a table cell.
    Text holding ``\\|`` is every punctuation mark escaped instead, not in backticks: the
    span's ``\\\\|`` ends a table cell in marked (GitHub and markdown-it keep it whole)."""
    body = " ".join((text or "").split())
    if "\\|" in body:
        return re.sub(r"([!-/:-@\[-`{-~])", r"\\\1", body)
    body = body.replace("|", "\\|")
    fence = "`" * (max(map(len, re.findall("`+", body)), default=0) + 1)
    pad = " " if body[:1] == "`" or body[-1:] == "`" else ""
    return f"{fence}{pad}{body}{pad}{fence}"


def import_order(names: Iterable[str]) -> list[str]:
    """Names in the order ruff's isort wants them in one ``from ... import``: constants
    (``ABC``), then classes, then the rest, each case-insensitively (``TRexClient``,
    ``ToolCallError``, ``TRexSyncClient``); not Python's order, which puts capitals first."""

    def key(name: str) -> tuple[int, str, str]:
        kind = 0 if len(name) > 1 and name.isupper() else 1 if name[:1].isupper() else 2
        return kind, name.lower(), name

    return sorted(names, key=key)


@cache
def environment() -> jinja2.Environment:
    # templates ship inside the wheel as mcpgen/templates; in a checkout they are at the top
    packaged = Path(str(resources.files("mcpgen"))) / "templates"
    folder = packaged if packaged.is_dir() else Path(__file__).resolve().parents[2] / "templates"
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(folder)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    from mcpgen.model.examples import invalid_example, valid_example

    named = (entries, variable_dict, valid_example, invalid_example, py, import_order, keywords)
    env.filters.update({f.__name__: f for f in (*named, docstring, comment, oneline)})
    env.filters.update(toml=toml_string, md=markdown_inline, code=markdown_code)
    env.filters["json"] = lambda v: json.dumps(v, sort_keys=True, ensure_ascii=False)
    return env


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)
