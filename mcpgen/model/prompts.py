"""Prompts in the model: templated messages or a handler, with their arguments."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from mcpgen.identifiers import kwarg
from mcpgen.model.resources import StaticContent, Variable, wire

Json = Any


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
