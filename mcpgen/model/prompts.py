"""Prompts in the model: templated messages or a handler, with their arguments."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from mcpgen.model.resources import StaticContent, Variable, given

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
        content = self.content
        return given(
            ("role", self.role),
            ("kind", self.kind),
            ("text", self.text),
            ("uri", self.uri),
            ("mimeType", self.mime_type),
            *([(content.kind, content.value)] if content is not None else []),
        )


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
        from mcpgen.identifiers import kwarg

        given = [Variable(a.name, kwarg(a.name), not a.required) for a in self.arguments]
        return tuple(sorted(given, key=lambda v: v.optional))

    @property
    def definition(self) -> dict[str, Json]:
        arguments = [
            given(
                ("name", a.name),
                ("title", a.title),
                ("description", a.description),
                ("required", a.required),
            )
            for a in self.arguments
        ]
        return given(
            ("name", self.name),
            ("title", self.title),
            ("description", self.description),
            ("arguments", arguments or None),
            ("icons", list(self.icons) or None),
        )
