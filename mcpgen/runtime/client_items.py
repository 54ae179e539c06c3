"""The typed client's side of resources, prompts and completions: carried only by a package
whose server has one of them."""

from __future__ import annotations

from typing import Literal

import mcp_types as types

from .client import BaseClient

Contents = list[types.TextResourceContents | types.BlobResourceContents]


class ItemsClient(BaseClient):
    """``BaseClient`` that also reads resources, renders prompts and asks for completions."""

    async def read(self, uri: str) -> Contents:
        """Read any resource by URI."""
        return list((await self.client.read_resource(uri)).contents)

    async def prompt(
        self, name: str, arguments: dict[str, str | None]
    ) -> list[types.PromptMessage]:
        """Render a prompt by name (arguments that are None are left out)."""
        given = {key: value for key, value in arguments.items() if value is not None}
        return list((await self.client.get_prompt(name, given)).messages)

    async def complete(
        self, kind: Literal["prompt", "resource"], ref: str, argument: str, value: str
    ) -> list[str]:
        """Completions for a prompt argument or a URI template variable."""
        reference: types.PromptReference | types.ResourceTemplateReference
        if kind == "prompt":
            reference = types.PromptReference(name=ref)
        else:
            reference = types.ResourceTemplateReference(uri=ref)
        result = await self.client.complete(reference, {"name": argument, "value": value})
        return list(result.completion.values)
