"""File arguments the MCP way and multipart part headers (issue 33, docs/openapi.md
"Files"): a file argument is base64 or the URI of one of the server's own resources, read
in-process; any other URI and a file past the size limit are tool errors that send
nothing; a multipart property's ``encoding.headers`` are header arguments put on its
parts, and its part ``Content-Type`` is picked from the ``contentType`` list. A local
upstream on 127.0.0.1 shows the bytes that arrived."""

from __future__ import annotations

import base64
import copy
from typing import Any

import pytest
import yaml
from mcp.client import Client
from wirekit import multipart, part_name, recorder

from mcpgen.pipeline import load_manifest
from mcpgen.render.spec import spec_data
from mcpgen.runtime.server import Handlers, build_server

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR-logo"
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF-photo"
PDF = b"%PDF-1.7\n\x00\xff report"
BINARY = {"type": "string", "format": "binary"}
API = {
    "openapi": "3.0.3",
    "info": {"title": "Photos", "version": "1"},
    "servers": [{"url": "http://127.0.0.1:1"}],
    "paths": {
        "/photos": {
            "post": {
                "operationId": "uploadPhoto",
                "requestBody": {
                    "required": True,
                    "content": {
                        "multipart/form-data": {
                            "schema": {
                                "type": "object",
                                "required": ["photo"],
                                "properties": {"photo": BINARY, "caption": {"type": "string"}},
                            },
                            "encoding": {
                                "photo": {
                                    "contentType": "image/png, image/jpeg",
                                    "headers": {
                                        "X-Checksum": {
                                            "description": "SHA-256 of the photo",
                                            "schema": {"type": "string"},
                                        },
                                        "Content-Type": {"schema": {"type": "string"}},
                                    },
                                }
                            },
                        }
                    },
                },
                "responses": {"200": {"description": "ok"}},
            }
        },
        "/raw": {
            "put": {
                "operationId": "putRaw",
                "requestBody": {
                    "required": True,
                    "content": {"application/octet-stream": {"schema": BINARY}},
                },
                "responses": {"200": {"description": "ok"}},
            }
        },
    },
}
RESOURCES = [
    {
        "uri": "files://logo.png",
        "name": "logo",
        "mimeType": "image/png",
        "blob": base64.b64encode(PNG).decode(),
    },
    {"uriTemplate": "files://reports/{name}", "name": "report", "mimeType": "application/pdf"},
]


async def read_report(variables: dict[str, str], ctx: Any) -> bytes:
    return PDF + variables["name"].encode()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The server's ``_spec.json`` data, built once (each test copies it)."""
    tmp_path = tmp_path_factory.mktemp("photos")
    (tmp_path / "api.yaml").write_text(yaml.safe_dump(API))
    source = {
        "mcpgen": 1,
        "server": {"name": "photos", "description": "x"},
        "openapi": {"source": "api.yaml"},
        "resources": RESOURCES,
    }
    (tmp_path / "mcpgen.yaml").write_text(yaml.safe_dump(source))
    loaded = load_manifest(tmp_path / "mcpgen.yaml")
    assert loaded.manifest is not None, [p.format() for p in loaded.problems.items]
    return spec_data(loaded.manifest)


async def call(
    built: dict[str, Any], monkeypatch: pytest.MonkeyPatch, tool: str, arguments: dict[str, Any]
) -> tuple[Any, list[Any]]:
    data = copy.deepcopy(built)
    with recorder() as rec:
        monkeypatch.setenv(data["upstream"]["baseUrlEnv"], rec.url)
        server = build_server(data, Handlers(resources={"report": read_report}))
        async with Client(server, mode="legacy") as client:
            result = await client.call_tool(tool, arguments)
        return result, rec.seen


def parts(seen: Any) -> dict[str, tuple[dict[str, str], bytes]]:
    return {part_name(headers): (headers, content) for headers, content in multipart(seen)}


async def test_a_file_argument_may_be_a_resource_of_the_server(
    built: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    result, seen = await call(
        built, monkeypatch, "upload_photo", {"photo": "files://logo.png", "caption": "hi"}
    )
    assert not result.is_error, result.content
    photo_headers, photo = parts(seen[0])["photo"]
    assert photo == PNG
    assert photo_headers["content-type"] == "image/png"  # the resource's, and listed

    result, seen = await call(built, monkeypatch, "put_raw", {"body": "files://reports/q3"})
    assert not result.is_error, result.content
    assert seen[0].body == PDF + b"q3"  # read through the resource's handler

    given = "data:image/jpeg;base64," + base64.b64encode(JPEG).decode()
    result, seen = await call(built, monkeypatch, "upload_photo", {"photo": given})
    assert not result.is_error, result.content
    assert parts(seen[0])["photo"] == (
        {
            "content-disposition": 'form-data; name="photo"; filename="photo"',
            "content-type": "image/jpeg",
        },
        JPEG,
    )


async def test_a_uri_the_server_cannot_read_is_a_tool_error_naming_the_forms(
    built: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    for uri in ("file:///home/me/photo.png", "files://nothing-here"):
        result, seen = await call(built, monkeypatch, "upload_photo", {"photo": uri})
        text = result.content[0].text
        assert result.is_error and seen == []
        assert "not a resource of this server" in text and "base64" in text, text


async def test_a_file_past_the_limit_is_a_tool_error(
    built: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PHOTOS_API_MAX_FILE_BYTES", "16")
    for photo in ("files://logo.png", base64.b64encode(PNG * 4).decode()):
        result, seen = await call(built, monkeypatch, "upload_photo", {"photo": photo})
        assert result.is_error and seen == []
        assert "more than the 16" in result.content[0].text
    result, seen = await call(built, monkeypatch, "put_raw", {"body": "files://reports/q3"})
    assert result.is_error and seen == [] and "MAX_FILE_BYTES" in result.content[0].text


async def test_part_headers_are_arguments_sent_on_their_part(
    built: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    tool = next(t for t in built["tools"] if t["definition"]["name"] == "upload_photo")
    properties = tool["definition"]["inputSchema"]["properties"]
    assert set(properties) == {"X-Checksum", "photo", "caption"}  # Content-Type is not one
    assert "multipart part 'photo'" in properties["X-Checksum"]["description"]
    assert "URI: of a resource" in properties["photo"]["description"]
    arguments = {"photo": base64.b64encode(JPEG).decode(), "caption": "c", "X-Checksum": "ab12"}
    result, seen = await call(built, monkeypatch, "upload_photo", arguments)
    assert not result.is_error, result.content
    found = parts(seen[0])
    assert found["photo"] == (
        {
            "content-disposition": 'form-data; name="photo"; filename="photo"',
            "content-type": "image/jpeg",  # what the bytes are, among those listed
            "x-checksum": "ab12",
        },
        JPEG,
    )
    assert "x-checksum" not in found["caption"][0] and "x-checksum" not in seen[0].headers
