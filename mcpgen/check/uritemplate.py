"""Just enough of RFC 6570 to validate a URI template and list its variables."""

from __future__ import annotations

import re

_EXPRESSION = re.compile(r"\{([^{}]*)\}")
_OPERATORS = "+#./;?&"
_VARNAME = re.compile(r"^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*$")
_MODIFIER = re.compile(r"^(?P<name>[^:*]+)(?::(?P<prefix>[1-9][0-9]{0,3})|(?P<explode>\*))?$")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def parse(template: str) -> tuple[list[str], str | None]:
    """Return (variable names in order, error message or None)."""
    if not _SCHEME.match(template):
        return [], "URI template must start with a scheme such as 'app://'"
    stripped = _EXPRESSION.sub("", template)
    if "{" in stripped or "}" in stripped:
        return [], "unbalanced '{' or '}'"
    names: list[str] = []
    previous = None
    for found in _EXPRESSION.finditer(template):
        expression = found.group(1)
        if not expression:
            return [], "empty expression '{}'"
        body = expression[1:] if expression[0] in _OPERATORS else expression
        if expression[0] in "=,!@|":
            return [], f"reserved operator {expression[0]!r} in '{{{expression}}}'"
        # right after another, an expression must write a first character ('#./;?&')
        if previous and previous.end() == found.start() and expression[0] not in "#./;?&":
            return [], (
                f"'{previous.group()}' and '{found.group()}' are side by side: no URI says "
                "where one value ends and the next begins; put a literal such as '/' or '-' "
                "between them"
            )
        previous = found
        for spec in body.split(","):
            match = _MODIFIER.match(spec)
            if not match or not _VARNAME.match(match.group("name")):
                return [], f"invalid variable {spec!r} in '{{{expression}}}'"
            name = match.group("name")
            if name in names:
                return [], f"variable {name!r} appears more than once"
            names.append(name)
    if not names:
        return [], "a URI template needs at least one {variable}; use 'uri' for a fixed URI"
    return names, None


def shape(template: str) -> str:
    """The template without its variable names: templates of one shape match the same URIs."""

    def blank(match: re.Match[str]) -> str:
        expression = match.group(1)
        operator = expression[0] if expression[:1] in _OPERATORS else ""
        specs = expression[len(operator) :].split(",")
        return "{" + operator + ",".join(re.sub(r"^[^:*]+", "", spec) for spec in specs) + "}"

    return _EXPRESSION.sub(blank, template)


def check_uri(uri: str) -> str | None:
    """Error message for a fixed resource URI, or None when it is acceptable."""
    if not _SCHEME.match(uri):
        return "URI must start with a scheme such as 'app://'"
    if "{" in uri or "}" in uri:
        return "URI contains '{' or '}': declare it as 'uriTemplate' instead"
    if any(ch.isspace() for ch in uri):
        return "URI must not contain whitespace"
    return None
