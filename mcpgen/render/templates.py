"""The Jinja environment: templates get the model and literal-safe filters, nothing else."""

from __future__ import annotations

import contextlib
import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
import jinja2.bccache

from mcpgen import identifiers as names
from mcpgen.literals import py


def templates_dir() -> Path:
    """Templates ship inside the wheel as mcpgen/templates; in a checkout they are at the top."""
    packaged = Path(str(resources.files("mcpgen"))) / "templates"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "templates"


LINE_LENGTH = 100  # black's line length for generated code (``formatting.MODE``)


class DictArg(str):
    """A dict literal given to ``call``: black puts its entries one per line when it does
    not fit on its own line."""

    entries: list[str]

    def __new__(cls, entries: list[str]) -> DictArg:
        literal = super().__new__(cls, "{" + ", ".join(entries) + "}")
        literal.entries = entries
        return literal


def dict_arg(entries: list[str]) -> DictArg:
    return DictArg(list(entries))


def entries(params: list[Any], required: bool) -> list[str]:
    """``"wire key": python_name`` dict entries for the required (or optional) ``params``."""
    return [f"{py(p.key)}: {p.name}" for p in params if p.required == required]


def variable_dict(variables: list[Any]) -> DictArg:
    """``{"wire name": python_name, ...}`` for template variables or prompt arguments."""
    return DictArg([f"{py(v.name)}: {v.python}" for v in variables])


def call(indent: int, head: str, args: list[str], tail: str = "") -> str:
    """A call statement laid out as black lays it out (``head`` ends with the opening
    bracket): on one line if it fits, else the arguments on one indented line, else one
    per line with a trailing comma (a ``DictArg`` that still does not fit, one entry per
    line). black still formats the result; this only spares it the work of splitting
    thousands of long generated lines."""
    one = f"{head}{', '.join(args)}){tail}"
    if indent + len(one) <= LINE_LENGTH or not args:
        return one
    inner = " " * (indent + 4)
    close = " " * indent + ")" + tail
    if len(args) == 1 and not isinstance(args[0], DictArg):
        return f"{head}\n{inner}{args[0]}\n{close}"
    if len(inner) + len(", ".join(args)) <= LINE_LENGTH:
        return f"{head}\n{inner}{', '.join(args)}\n{close}"
    lines = []
    for arg in args:
        if isinstance(arg, DictArg) and arg.entries and len(inner) + len(arg) + 1 > LINE_LENGTH:
            entries = "".join(f"{inner}    {entry},\n" for entry in arg.entries)
            lines.append(f"{inner}{{\n{entries}{inner}}},\n")
        else:
            lines.append(f"{inner}{arg},\n")
    return head + "\n" + "".join(lines) + close


def assign_call(target: str, head: str, args: list[str]) -> str:
    """``target = head(args)`` at the top level, laid out as black does: on one line; else
    split after the call's bracket when that line fits; else the value in parentheses."""
    one = f"{target} = {head}{', '.join(args)})"
    if len(one) <= LINE_LENGTH:
        return one
    if args and len(f"{target} = {head}") <= LINE_LENGTH:
        return call(0, f"{target} = {head}", args)
    return f"{target} = (\n    {call(4, head, args)}\n)"


def keywords(params: list[Any], values: dict[str, Any]) -> list[str]:
    """``name=literal`` call arguments for the ``params`` (``pytypes.params``) that
    ``values`` (wire keys) has."""
    return [f"{p.name}={py(values[p.key])}" for p in params if p.key in values]


def docstring(text: str | None) -> str:
    """Text made safe inside a triple-quoted docstring (no escapes or quotes end it early)."""
    if not text:
        return ""
    if '"' not in text and "\\" not in text and _printable(text):
        return text.strip()  # nothing to escape (most texts; the loop below is slow)
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch in "\n\t":
            out.append(ch)
        elif not ch.isprintable():
            out.append(ch.encode("unicode_escape").decode("ascii"))
        else:
            out.append(ch)
    return "".join(out).strip()


def _printable(text: str) -> bool:
    """Every character printable, line breaks and tabs aside."""
    return text.isprintable() or text.replace("\n", "").replace("\t", "").isprintable()


def comment(text: str | None) -> str:
    """Text made safe for a single ``#`` comment line."""
    return " ".join((text or "").split()).encode("unicode_escape").decode("ascii")


def toml_string(value: str) -> str:
    """A TOML basic string: JSON escapes for quotes, backslashes and control characters
    (valid TOML), every other character as itself (TOML has no surrogate-pair escapes)."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def oneline(text: str | None, limit: int = 200) -> str:
    """Whitespace folded to single spaces and cut to ``limit`` characters (package summaries)."""
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def markdown_inline(text: str | None) -> str:
    """Text safe inside Markdown prose: one line, no HTML, no code fences."""
    flat = " ".join((text or "").split())
    for ch in "\\`*_[]<>|#":
        flat = flat.replace(ch, "\\" + ch)
    return flat


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    """Compiled templates kept in the build cache: compiling them is a fixed cost of every build.
    (jinja keys each entry by the template's name and source, so an edited template is
    compiled again.)"""
    from mcpgen.format import cache

    store = cache.cache_dir()
    if store is None:
        return None
    try:
        (store / "templates").mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return _QuietBytecodeCache(str(store / "templates"))


class _QuietBytecodeCache(jinja2.FileSystemBytecodeCache):
    """A cache that cannot be read or written only costs time (like ``cache``)."""

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except OSError:
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        bytecode_cache=_bytecode_cache(),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    from mcpgen.model.examples import invalid_example, valid_example

    env.globals["call"] = call
    env.globals["assign_call"] = assign_call
    env.filters["dict_arg"] = dict_arg
    env.filters["entries"] = entries
    env.filters["variable_dict"] = variable_dict
    env.filters["prompt_dict"] = variable_dict
    env.filters.update(
        valid_example=valid_example,
        invalid_example=invalid_example,
        py=py,
        keywords=keywords,
        docstring=docstring,
        comment=comment,
        toml=toml_string,
        oneline=oneline,
        md=markdown_inline,
        snake=names.snake,
        pascal=names.pascal,
        json=lambda v: json.dumps(v, sort_keys=True, ensure_ascii=False),
    )
    return env


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)
