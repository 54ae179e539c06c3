"""A file argument that names one of the server's resources is read as ``resources/read``
would read it for the same caller, and no further (docs/openapi.md, "Files"): a resource
hidden from the caller is named like one that does not exist; one call reads at most one
file's worth of bytes and ``MAX_READS`` resources (a short URI must not make the server
fetch far more than the caller sent); a ``%2F`` in a template variable cannot smuggle a
``..`` segment to a handler; an unwritten resource stub says which file to write."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from mcpgen.runtime import files
from mcpgen.runtime.errors import ToolError
from mcpgen.runtime.identity import Identity
from mcpgen.runtime.resources import ResourceBinding, ResourceTable
from mcpgen.runtime.scopes import ScopedPolicy
from mcpgen.runtime.wire_body import Blob

pytestmark = [pytest.mark.anyio]
ALICE = Identity("alice", frozenset({"secret"}))
BOB = Identity("bob", frozenset())
MULTIPART = {  # an upload operation's body: one array of files
    "content_type": "multipart/form-data",
    "argument": None,
    "properties": ["files"],
    "arguments": ["files"],
    "parts": {"files": {"file": True}},
}


def table(hide: bool = False) -> tuple[ResourceTable, list[dict[str, str]]]:
    """A secret fixed resource, an open 600-byte template, and the variables each read of
    the template got."""
    seen: list[dict[str, str]] = []

    async def read_file(variables: dict[str, str], ctx: Any) -> bytes:
        seen.append(variables)
        return b"x" * 600

    bindings = [
        ResourceBinding({"uri": "vault://secret", "name": "secret"}, content={"text": "TOP"}),
        ResourceBinding({"uriTemplate": "vault://files/{name}", "name": "files"}, read=read_file),
    ]
    policy = ScopedPolicy({"resource": {"vault://secret": ["secret"]}}, hide_unauthorized=hide)
    return ResourceTable(bindings, policy), seen


def caller(resources: ResourceTable, identity: Identity) -> Any:
    return SimpleNamespace(identity=identity, registry={"resources": resources})


async def refusal(resources: ResourceTable, identity: Identity, uri: str) -> str:
    with pytest.raises(ToolError) as refused:
        await files.read(resources, uri, "photo", caller(resources, identity), 10_000)
    return str(refused.value)


async def test_a_hidden_resource_is_named_like_one_that_does_not_exist() -> None:
    hidden, _ = table(hide=True)
    absent = await refusal(hidden, BOB, "vault://nothing")
    assert await refusal(hidden, BOB, "vault://secret") == absent.replace("nothing", "secret")
    assert "not a resource of this server" in absent
    shown, _ = table(hide=False)  # without hiding, the missing scope is named
    assert "needs scope(s) secret" in await refusal(shown, BOB, "vault://secret")
    blob = await files.read(hidden, "vault://secret", "photo", caller(hidden, ALICE), 100)
    assert blob.data == b"TOP"


async def test_one_call_reads_at_most_one_files_worth_from_resources() -> None:
    resources, seen = table()
    ctx = caller(resources, ALICE)
    two = {"files": ["vault://files/a", "vault://files/b"]}  # 1200 bytes
    with pytest.raises(ToolError, match="more than 1000 bytes, the most one call may read"):
        await files.resolve(MULTIPART, two, ctx, 1000)
    resolved = await files.resolve(MULTIPART, two, ctx, 1200)
    assert [blob.data for blob in resolved["files"]] == [b"x" * 600] * 2
    inline = {"files": ["data:,abc"] * (files.MAX_READS + 1) + ["vault://files/a"]}
    assert len((await files.resolve(MULTIPART, inline, ctx, 1200))["files"]) == len(
        inline["files"]
    )  # what data: URIs carry, the caller sent
    seen.clear()
    many = {"files": [f"vault://files/{n}" for n in range(files.MAX_READS + 1)]}
    with pytest.raises(ToolError, match=f"at most {files.MAX_READS} resources"):
        await files.resolve(MULTIPART, many, ctx, 10**9)
    assert seen == []  # refused before any read


@pytest.mark.parametrize(
    "uri",
    ["vault://files/..%2F..%2Fetc%2Fpasswd", "vault://files/..%5Csecret", "vault://files/a%2F."],
)
async def test_an_encoded_dot_segment_reaches_no_handler(uri: str) -> None:
    resources, seen = table()
    assert "not a resource of this server" in await refusal(resources, ALICE, uri)
    assert seen == []
    assert resources.find("vault://files/a%2Fb") is not None  # a slash alone is a value


async def test_an_unwritten_resource_stub_names_its_file(tmp_path: Path) -> None:
    handler = tmp_path / "vault_mcp" / "handlers" / "resources" / "draft.py"
    handler.parent.mkdir(parents=True)
    handler.write_text("async def read():\n    raise NotImplementedError\n")
    loader = importlib.util.spec_from_file_location("draft_stub", handler)
    assert loader is not None and loader.loader is not None
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)

    async def read(variables: dict[str, str], ctx: Any) -> Any:
        return await module.read()

    path = "src/vault_mcp/handlers/resources/draft.py"
    draft = ResourceBinding({"uri": "vault://draft", "name": "draft"}, read=read, handler_path=path)
    resources = ResourceTable([draft])
    text = await refusal(resources, ALICE, "vault://draft")
    assert "not implemented yet" in text and path in text, text


@pytest.mark.parametrize(
    "media", ["text/plain\r\nX-Evil: 1", 'text/plain"', "text", "text/plain\n\n--b"]
)
def test_a_data_uri_media_type_is_checked(media: str) -> None:
    """It becomes a multipart part's Content-Type: a malformed one is a tool error naming
    the argument (a line break made an internal error of the HTTP client)."""
    with pytest.raises(ToolError, match=r"'photo': .* is not a media type"):
        files.data_uri(f"data:{media};base64,aGk=", "photo", 100)
    blob = files.data_uri("data:image/svg+xml;charset=utf-8,%3Csvg%2F%3E", "photo", 100)
    assert blob == Blob(b"<svg/>", "image/svg+xml")
