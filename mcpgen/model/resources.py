"""Resources (fixed or templates) and prompts in the model, with their arguments."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote

from mcpgen.identifiers import kwarg
from mcpgen.model.examples import valid_example
from mcpgen.model.params import Param
from mcpgen.model.settings import camel
from mcpgen.openapi.result import Operation

Json = Any
EMPTY: tuple[Json, ...] = (None, (), [])  # what a definition leaves out ({} is a value)


def wire(item: object, names: str, **values: Json) -> dict[str, Json]:
    """A definition as MCP shows it: the fields ``names`` of ``item`` (or ``values``, which
    take their place) under their camelCase names, in order; None, () and [] left out."""
    found = ((n, values[n] if n in values else getattr(item, n)) for n in names.split())
    return {camel(n): list(v) if type(v) is tuple else v for n, v in found if v not in EMPTY}


@dataclass(frozen=True)
class StaticContent:
    kind: Literal["text", "blob"]
    value: str  # text, or base64 for blobs


@dataclass(frozen=True)
class Variable:
    """A URI template variable (or prompt argument) and its keyword argument."""

    name: str
    python: str
    optional: bool = False

    @property
    def declaration(self) -> str:
        """``python: str`` (``str | None = None`` when optional), as ``Param.declaration``."""
        return Param(self.python, self.name, "str", not self.optional, None).declaration


@dataclass(frozen=True, kw_only=True)
class Resource:
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None
    size: int | None = None
    uri: str | None = None
    uri_template: str | None = None
    variables: tuple[str, ...]
    content: StaticContent | None
    context: bool = False
    subscribe: bool = False
    annotations: Json | None = None
    icons: tuple[Json, ...] = ()
    ident: str
    client_method: str
    http: Operation | None = None  # the GET operation behind it (OpenAPI resources)
    scopes: tuple[str, ...] = ()
    input_schema: Json | None = None  # an imported resource: its operation's parameters

    @property
    def is_template(self) -> bool:
        return self.uri_template is not None

    @property
    def parameters(self) -> tuple[Variable, ...]:
        """The template's variables: handler and client keyword arguments (query ones optional)."""
        query = {
            name.split(":")[0].rstrip("*")
            for body in re.findall(r"\{[?&]([^}]*)\}", self.uri_template or "")
            for name in body.split(",")
        }
        return tuple(Variable(v, kwarg(v), v in query) for v in self.variables)

    @property
    def example_uri(self) -> str:
        """A URI this resource answers for: example values for the variables (not query ones)."""
        if self.uri_template is None:
            return str(self.uri)
        example = valid_example(self.input_schema) if self.input_schema else None
        values = example if isinstance(example, dict) else {}

        def expand(match: re.Match[str]) -> str:
            body = match.group(1)
            operator = body[0] if body[0] in "+#./;?&" else ""
            if operator in ("?", "&"):
                return ""  # optional: left out
            names = [n.split(":")[0].rstrip("*") for n in body[len(operator) :].split(",")]
            safe = "/" if operator in ("+", "#") else ""
            parts = [quote(str(values.get(n, "example")), safe=safe) for n in names]
            if operator == ";":
                return "".join(f";{n}={p}" for n, p in zip(names, parts, strict=True))
            lead = "" if operator == "+" else operator
            return lead + (lead if operator in (".", "/") else ",").join(parts)

        return re.sub(r"\{([^{}]+)\}", expand, self.uri_template)

    @property
    def has_handler(self) -> bool:
        return self.content is None and self.http is None

    @property
    def definition(self) -> dict[str, Json]:
        """The resource (or template) as resources/list or resources/templates/list shows it."""
        names = "uri_template uri name title description mime_type size annotations icons"
        return wire(self, names)


@dataclass(frozen=True)
class PromptArgument:
    name: str
    title: str | None = None
    description: str | None = None
    required: bool = False


@dataclass(frozen=True)
class PromptMessage:
    role: Literal["user", "assistant"]
    kind: Literal["text", "resource", "image", "audio"]
    text: str | None = None  # a template, for kind == "text"
    uri: str | None = None
    mime_type: str | None = None
    content: StaticContent | None = None

    def to_data(self) -> dict[str, Json]:
        content = {} if self.content is None else {self.content.kind: self.content.value}
        return wire(self, "role kind text uri mime_type") | content


@dataclass(frozen=True, kw_only=True)
class Prompt:
    name: str
    title: str | None = None
    description: str | None = None
    arguments: tuple[PromptArgument, ...]
    messages: tuple[PromptMessage, ...]
    handler: bool = False
    context: bool = False
    enabled: bool = True
    icons: tuple[Json, ...] = ()
    ident: str
    client_method: str
    class_name: str
    scopes: tuple[str, ...] = ()

    @property
    def parameters(self) -> tuple[Variable, ...]:
        """The arguments as the typed client's keyword arguments, required ones first."""
        given = [Variable(a.name, kwarg(a.name), not a.required) for a in self.arguments]
        return tuple(sorted(given, key=lambda v: v.optional))

    @property
    def definition(self) -> dict[str, Json]:
        arguments = [wire(a, "name title description required") for a in self.arguments]
        return wire(self, "name title description arguments icons", arguments=arguments)
