"""A prompt whose embedded resource URI is made from its arguments (``vault://{{ name }}``)
must not tell a resource hidden from the caller (``hideUnauthorizedTools``) from one that
does not exist: resources/read answers both alike, and the prompt is a second way to ask."""

from __future__ import annotations

import pytest
from mcp.shared.exceptions import MCPError

from mcpgen.runtime.identity import Identity
from mcpgen.runtime.prompts import PromptBinding, PromptTable, embedded_uris, render_messages
from mcpgen.runtime.resources import ResourceBinding, ResourceTable
from mcpgen.runtime.scopes import ScopedPolicy

BOB = Identity("bob", frozenset())
ALICE = Identity("alice", frozenset({"hr"}))


def answer(table: PromptTable, identity: Identity, name: str) -> tuple[int, str]:
    """What prompts/get of ``show`` answers (its declared messages rendered, then checked)."""
    binding = table.authorized("show", identity)
    with pytest.raises(MCPError) as refused:
        messages = render_messages(binding.messages, {"name": name}, table.resources)
        table._check_embedded(identity, embedded_uris(messages))
    return refused.value.error.code, refused.value.error.message.replace(name, "<name>")


def test_a_hidden_resource_is_embedded_as_one_that_does_not_exist() -> None:
    salaries = ResourceBinding({"uri": "vault://salaries", "name": "s"}, content={"text": "9000"})
    policy = ScopedPolicy({"resource": {"vault://salaries": ["hr"]}}, hide_unauthorized=True)
    resources = ResourceTable([salaries], policy)
    show = PromptBinding(
        {"name": "show", "arguments": [{"name": "name", "required": True}]},
        [{"kind": "resource", "role": "user", "uri": "vault://{{ name }}"}],
    )
    table = PromptTable([show], resources, policy)
    assert answer(table, BOB, "salaries") == answer(table, BOB, "nothing-here")
    binding = table.authorized("show", ALICE)  # who holds the scope gets it
    messages = render_messages(binding.messages, {"name": "salaries"}, resources)
    table._check_embedded(ALICE, embedded_uris(messages))
    assert "9000" in str(messages)
