"""Matching a URI against an RFC 6570 template (the server side) and expanding one (the
typed client, with the ``uritemplate`` package). Templates were validated when the server
was generated."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from .errors import REDACTED

_EXPRESSION = re.compile(r"\{([^{}]*)\}")
_OPERATORS = "+#./;?&"
MAX_URI = 4096  # characters of a URI a template is matched against (longer: no match)


def _names(expression: str) -> tuple[str, list[str]]:
    operator = expression[0] if expression[0] in _OPERATORS else ""
    body = expression[1:] if operator else expression
    return operator, [re.split(r"[:*]", spec, maxsplit=1)[0] for spec in body.split(",")]


def variables(template: str) -> list[str]:
    """The template's variable names, in order."""
    return [name for e in _EXPRESSION.findall(template) for name in _names(e)[1]]


def to_regex(template: str) -> Any:
    """A pattern (a named group per variable, ``v0``, ``v1``...) matching URIs made from
    ``template``: simple ``{var}`` matches within one segment, ``{/var}`` a segment,
    ``{+var}``/``{#var}`` anything, ``{?a,b}``/``{&a}`` optional query parameters (one
    group for adjacent ones, which ``spans`` splits),
    ``{.var}`` a dotted suffix, ``{;var}`` a path parameter. Compiled with RE2, whose time
    is linear in the URI and whose groups are those a backtracking match would give:
    Python's ``re`` took 4 s for 4,000 characters against ``{+a}x{b}y{+c}z{d}w{+e}v``."""
    import re2  # type: ignore[import-untyped]

    index = {name: i for i, name in enumerate(variables(template))}
    out: list[str] = []
    position = 0

    def group(name: str, body: str) -> str:
        return f"(?P<v{index[name]}>{body})"

    run: list[str] = []  # the names of adjacent {?a,b}{&c}: one group of pairs, any order
    leads = ""

    def query() -> None:
        nonlocal leads
        if run:
            pair = f"(?:{'|'.join(re.escape(n) for n in run)})=[^&#]*"
            out.append(f"(?P<q{len(out)}>[{re.escape(leads)}]{pair}(?:&{pair})*)?")
        run.clear()
        leads = ""

    for match in _EXPRESSION.finditer(template):
        literal = template[position : match.start()]
        operator, names = _names(match.group(1))
        if literal or operator not in ("?", "&"):
            query()
        out.append(re.escape(literal))
        # A variable right after a literal that follows another variable stops before that
        # literal's first character: the earlier one still takes all it can ("a.tar.gz" by
        # "{name}.{ext}": "a.tar", "gz").
        after = re.escape(literal[0]) if position and literal else ""
        position = match.end()
        if operator in ("?", "&"):
            run.extend(names)
            leads += operator
        elif operator in ("+", "#"):
            out.append("#" if operator == "#" else "")
            out.extend(("," if i else "") + group(name, ".*?") for i, name in enumerate(names))
        elif operator == ";":
            out.extend(f";{re.escape(n)}=?{group(n, '[^/;?#]*')}" for n in names)
        elif operator in ("/", "."):
            body = "[^/?#.]*" if operator == "." else "[^/?#]*"
            out.extend(re.escape(operator) + group(n, body) for n in names)
        else:
            comma = "," if len(names) > 1 else ""  # one variable's list value: a,b
            out.append(",".join(group(n, f"[^/?#{comma}{after}]+") for n in names))
    query()
    out.append(re.escape(template[position:]))
    return re2.compile("".join(out))


def spans(pattern: Any, names: list[str], uri: str) -> dict[str, tuple[int, int]] | None:
    """Where in ``uri`` each of its variables' values is, or None when it does not match
    (a query variable given twice neither). Absent optional (query) variables are left out."""
    found = pattern.fullmatch(uri) if len(uri) <= MAX_URI else None
    if found is None:
        return None
    at: dict[str, tuple[int, int]] = {}
    for key, number in sorted(pattern.groupindex.items(), key=lambda item: item[1]):
        start, end = found.span(number)
        if key[0] == "v" and start >= 0:
            at[names[int(key[1:])]] = (start, end)
        elif start >= 0:  # "?a=1&b=2": each name once, in any order (a form-style query)
            for pair in uri[start + 1 : end].split("&"):
                name = pair.partition("=")[0]
                if name in at:
                    return None
                at[name] = (start + len(name) + 2, start + len(pair) + 1)
                start += len(pair) + 1
    return at


def match(pattern: Any, names: list[str], uri: str, decode: bool = True) -> dict[str, str] | None:
    """The decoded variables of ``uri`` (as written when not ``decode``: a list's items are
    split on its literal commas before they are decoded), or None when it does not match."""
    found = spans(pattern, names, uri)
    if found is None:
        return None
    return {
        name: unquote(uri[start:end]) if decode else uri[start:end]
        for name, (start, end) in found.items()
    }


def redacted(uri: str, spans: list[tuple[int, int]]) -> str:
    """``uri`` with each ``(start, end)`` span REDACTED (overlapping ones as one)."""
    parts, at = [], 0
    for start, end in sorted(spans):
        if start >= at:  # (one within or across a span cut: the same REDACTED)
            parts += [uri[at:start], REDACTED]
        at = max(at, end)
    return "".join(parts) + uri[at:]


def expand(template: str, values: Mapping[str, Any]) -> str:
    """A URI from an RFC 6570 template (the ``uritemplate`` package)."""
    import uritemplate

    return str(uritemplate.expand(template, {k: v for k, v in values.items() if v is not None}))
