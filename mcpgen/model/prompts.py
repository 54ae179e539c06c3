"""Prompts in the model: templated messages or a handler, with their arguments."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from mcpgen.model.resources import StaticContent, Variable

Json = Any


@dataclass(frozen=True)
class PromptArgument:
    name: str
    title: str | None
    description: str | None
    required: bool


@dataclass(frozen=True)
class PromptMessage:
    role: Literal["user", "assistant"]
    kind: Literal["text", "resource", "image", "audio"]
    text: str | None = None  # a template, for kind == "text"
    uri: str | None = None
    mime_type: str | None = None
    content: StaticContent | None = None

    def to_data(self) -> dict[str, Json]:
        data: dict[str, Json] = {"role": self.role, "kind": self.kind}
        if self.text is not None:
            data["text"] = self.text
        if self.uri is not None:
            data["uri"] = self.uri
        if self.mime_type is not None:
            data["mimeType"] = self.mime_type
        if self.content is not None:
            data[self.content.kind] = self.content.value
        return data


@dataclass(frozen=True)
class Prompt:
    name: str
    title: str | None
    description: str | None
    arguments: tuple[PromptArgument, ...]
    messages: tuple[PromptMessage, ...]
    handler: bool
    context: bool
    enabled: bool
    icons: tuple[Json, ...]
    ident: str
    class_name: str
    scopes: tuple[str, ...] = ()

    @property
    def client_method(self) -> str:
        from mcpgen.identifiers import prompt_method

        return prompt_method(self.ident)

    @property
    def parameters(self) -> tuple[Variable, ...]:
        """The arguments as the typed client's keyword arguments, required ones first."""
        from mcpgen.identifiers import kwarg

        given = [Variable(a.name, kwarg(a.name), not a.required) for a in self.arguments]
        return tuple(sorted(given, key=lambda v: v.optional))

    @property
    def definition(self) -> dict[str, Json]:
        result: dict[str, Json] = {"name": self.name}
        if self.title is not None:
            result["title"] = self.title
        if self.description is not None:
            result["description"] = self.description
        if self.arguments:
            result["arguments"] = [
                {
                    k: v
                    for k, v in (
                        ("name", a.name),
                        ("title", a.title),
                        ("description", a.description),
                        ("required", a.required),
                    )
                    if v is not None
                }
                for a in self.arguments
            ]
        if self.icons:
            result["icons"] = list(self.icons)
        return result
