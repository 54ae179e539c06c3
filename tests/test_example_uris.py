"""A resource template's example URI (the generated package's tests read it) is one the
server's matcher (``runtime/uri.py``) answers for, whatever the RFC 6570 operator."""

from __future__ import annotations

from mcpgen.model.resources import Resource
from mcpgen.runtime.uri import to_regex, variables

OPERATORS = ("", "+", "#", ".", "/", ";", "?", "&")


def example_uri(template: str) -> str:
    names = tuple(variables(template))
    return Resource(
        name="r",
        mime_type=None,
        uri_template=template,
        variables=names,
        content=None,
        ident="r",
        client_method="r",
    ).example_uri


def test_the_example_uri_of_every_operator_matches_the_servers_pattern() -> None:
    templates = [
        f"app://host/x{{{operator}{names}}}"
        for operator in OPERATORS
        for names in ("a", "a,b", "a,b:3,c*")
    ]
    templates.append("app://{a,b}/items{/c,d}{.e,f}{;g,h}{?i,j}{&k}")
    missed = [(t, example_uri(t)) for t in templates if not to_regex(t).fullmatch(example_uri(t))]
    assert missed == []
