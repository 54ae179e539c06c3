"""An upstream on 127.0.0.1 that echoes the request it receives (the body a tool sends, a
``password`` the document marks ``writeOnly`` in it) as whatever answer a sloppy API
gives: JSON labelled ``text/plain`` or with no type, a 400 or 422 error, the final answer
of a polled operation (202 + ``Location``). None of them reaches the MCP client with the
password (``answers.result`` strips every body that parses as JSON, whatever its status or
label; a polled result the document does not describe gets the request body's plan)."""

from __future__ import annotations

import json
import threading
from base64 import b64decode
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from wirekit import imported, operations, upstream

from mcpgen.runtime.schemas import validator

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]

USER = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "password": {"type": "string", "writeOnly": True}},
}
REF = {"$ref": "#/components/schemas/User"}
SENT = {"name": "ann", "password": "hunter2"}


@contextmanager
def echo(
    status: int, media: str | None, poll: bool = False, shape: Callable[[Any], str] = json.dumps
) -> Iterator[str]:
    """A server answering ``status`` with the body it received (as ``shape`` writes its
    JSON); ``poll``: a POST answers 202 with a ``Location`` where a GET gets the echo."""
    kept: list[bytes] = [b""]

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            kept[0] = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if poll:
                self.send_response(202)
                self.send_header("Location", "/jobs/1")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.do_GET()

        def do_GET(self) -> None:
            body = shape(json.loads(kept[0])).encode()
            self.send_response(status)
            if media is not None:
                self.send_header("Content-Type", media)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def document(responses: dict[str, Any]) -> Any:
    """``POST /users``: a User body (its password sent) answered with ``responses``."""
    body = {"content": {"application/json": {"schema": REF}}, "required": True}
    op = {"operationId": "send", "requestBody": body, "responses": responses}
    return {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {"/users": {"post": op}},
        "components": {"schemas": {"User": USER}},
    }


def answer(schema: Any = REF) -> dict[str, Any]:
    return {"description": "ok", "content": {"application/json": {"schema": schema}}}


async def call(data: Any, url: str, sent: Any = SENT) -> tuple[bool, str]:
    (tool,) = imported(data).tools
    output = validator(tool["output"]) if tool.get("output") else None
    op = operations(data)["send"]
    if "poll" in op:
        op["poll"]["interval"] = 0.01
    result = await upstream(url).call(op, sent, None, output)
    texts = [getattr(c, "text", None) or str(c) for c in result.content]
    blobs = [b64decode(c.resource.blob).decode() for c in result.content if c.type == "resource"]
    return result.is_error, " ".join([json.dumps(result.structured_content), *texts, *blobs])


NO_SCHEMA = {"200": answer(), "204": {"description": "none"}}  # a 204 takes the schema away


@pytest.mark.parametrize("media", ["text/plain", None, "text/json; charset=utf-8"])
async def test_json_under_another_label_is_stripped(media: str | None) -> None:
    """JSON labelled ``text/plain`` (or with no type) to a tool with no output schema went
    to the client as text, or an embedded resource, with the password."""
    with echo(200, media) as url:
        failed, shown = await call(document(NO_SCHEMA), url)
    assert not failed and "hunter2" not in shown
    assert "ann" in shown


@pytest.mark.parametrize("status", [400, 422, 500])
@pytest.mark.parametrize("media", ["application/json", "text/plain"])
async def test_an_error_that_echoes_the_request_quotes_no_password(status: int, media: str) -> None:
    """A 400, 422 or 500 echoing the body: the error quoted the password. The success
    schema's plan (what any answer of the operation marks) strips it; the rest stays."""
    with echo(status, media) as url:
        failed, shown = await call(document({"200": answer()}), url)
    assert failed and f"HTTP {status}" in shown
    assert "hunter2" not in shown and '"name":"ann"' in shown.replace(" ", "")


async def test_a_polled_operations_result_is_stripped() -> None:
    """A 202 with a ``Location`` polled there: the final answer, echoing the body, reached
    the client with the password when the document describes only the 202 (the request
    body's plan applies to it), as when it describes the 200 too."""
    job = {"type": "object", "properties": {"status": {"type": "string"}}}
    accepted = answer(job) | {"headers": {"Location": {"schema": {"type": "string"}}}}
    for responses in ({"202": accepted}, {"200": answer(), "202": accepted}):
        with echo(200, "application/json", poll=True) as url:
            failed, shown = await call(document(responses), url)
        assert not failed and "hunter2" not in shown and "ann" in shown, responses


SHAPES: dict[str, tuple[str, Callable[[Any], str]]] = {  # a 422's media type, its body
    "FastAPI's field errors": (
        "application/json",
        lambda sent: json.dumps({"detail": [{"loc": ["body"], "msg": "no", "input": sent}]}),
    ),
    "a message quoting it": ("application/json", lambda sent: json.dumps(f"bad: {sent}")),
    "XML": (
        "application/xml",
        lambda sent: "<e>" + "".join(f"<{k}>{v}</{k}>" for k, v in sent.items()) + "</e>",
    ),
    "HTML": ("text/html", lambda sent: f"<p>password {sent['password']} is weak</p>"),
}


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("described", [True, False])
async def test_a_password_sent_is_redacted_from_any_echo_of_it(shape: str, described: bool) -> None:
    """What the request sends ``writeOnly`` (the body's plan, ``body.write_only``) is
    redacted wherever an answer quotes it, as a credential sent is: inside a 422's field
    errors, a message, XML or HTML, where no answer's plan reaches; also for an operation
    whose answers mark nothing (``POST /login``: only the body has a ``password``). The
    error keeps the rest (``loc``, ``msg``, the name)."""
    media, write = SHAPES[shape]
    data = document({"200": answer() if described else answer({"type": "object"})})
    with echo(422, media, shape=write) as url:
        failed, shown = await call(data, url)
    assert failed and "HTTP 422" in shown and "hunter2" not in shown, shown
    left_out = shape == "XML" and described  # the answer's plan: no <password> element
    assert ("REDACTED" in shown) != left_out and ("ann" in shown or shape == "HTML")


@pytest.mark.parametrize("shape", ["XML", "HTML", "a message quoting it"])
async def test_a_text_answer_echoing_a_password_sent_has_it_redacted(shape: str) -> None:
    """A success answered as text (XML, HTML, a JSON string) to a tool with no output
    schema: no plan reaches inside it, and it was passed on with the password."""
    media, write = SHAPES[shape]
    with echo(200, media, shape=write) as url:
        failed, shown = await call(document(NO_SCHEMA), url)
    assert not failed and "hunter2" not in shown and ("REDACTED" in shown) != (shape == "XML")


async def test_through_the_mcp_server_a_422_echo_reaches_the_client_without_it() -> None:
    """The whole way (``_spec.json`` as a build writes it, the runtime's server, an SDK
    client in memory): a 422 quoting the body in its field errors, for an operation whose
    answer marks nothing (only the body's ``password`` is ``writeOnly``)."""
    from mcp.client import Client

    from mcpgen.load import load_text
    from mcpgen.pipeline import load_document
    from mcpgen.render.spec import spec_json
    from mcpgen.runtime.server import Handlers, build_server

    media, write = SHAPES["FastAPI's field errors"]
    with echo(422, media, shape=write) as url:
        data = document({"200": answer({"type": "object"})}) | {"servers": [{"url": url}]}
        doc = load_text(json.dumps(data), "api.json", Path("."), json_first=True)
        loaded = load_document(doc)
        assert loaded.manifest is not None, loaded.problems
        spec = json.loads(spec_json(loaded.manifest))
        async with Client(build_server(spec, Handlers())) as client:
            result = await client.call_tool("send", SENT)
    shown = " ".join(getattr(c, "text", "") for c in result.content)
    assert result.is_error and '"loc":["body"]' in shown and '"msg":"no"' in shown, shown
    assert "hunter2" not in shown and '"password":"REDACTED"' in shown


def stored(body: str) -> Callable[[Any], str]:
    """An answer that is not an echo: ``body``, what the API stored."""
    return lambda sent: body


async def test_an_error_schema_marking_a_stored_password_leaves_it_out() -> None:
    """A 409 whose own schema marks ``stored`` ``writeOnly`` (an API quoting the password it
    holds): no plan was made from an error response's schema and the error quoted it."""
    error = {"type": "object", "properties": {"msg": {"type": "string"}, "stored": USER}}
    data = document({"200": answer({"type": "object"}), "409": answer(error)})
    body = json.dumps({"msg": "taken", "stored": {"name": "bob", "password": "old-secret"}})
    with echo(409, "application/json", shape=stored(body)) as url:
        failed, shown = await call(data, url)
    assert failed and "HTTP 409" in shown and "taken" in shown and "bob" in shown, shown
    assert "old-secret" not in shown


@pytest.mark.parametrize("media", ["application/xml", "text/xml; charset=utf-8"])
async def test_a_stored_password_in_an_xml_answer_is_left_out(media: str) -> None:
    """The document describes the answer as XML of a ``User``: its stored ``password``
    (never sent in this call) reached the client; the element is left out, the rest kept."""
    data = document({"200": {"description": "ok", "content": {"application/xml": {"schema": REF}}}})
    body = (
        "<?xml version='1.0'?><User id='1'><name>bob</name><password>old-secret</password></User>"
    )
    for status in (200, 400):
        with echo(status, media, shape=stored(body)) as url:
            failed, shown = await call(data, url)
        assert failed == (status == 400) and "<name>bob</name>" in shown, shown
        assert "old-secret" not in shown and "password" not in shown, shown


def quoted(sent: Any) -> str:
    return json.dumps({"detail": [{"msg": "no", "input": sent, "n": 7}]})


PIN = {"type": "object", "properties": {"name": {"type": "string"}, "pin": {"writeOnly": True}}}


@pytest.mark.parametrize("pin", ["q7z", "7"])
@pytest.mark.parametrize("status", [200, 422])
async def test_a_short_string_sent_write_only_is_not_echoed(pin: Any, status: int) -> None:
    """A 3-character ``pin`` sent ``writeOnly`` and echoed where no plan reaches (under
    another name, in a 422's field errors) came back: the credential rule redacts strings
    of 4 characters or more from text. Known exactly, it is taken out of a JSON answer as a
    value, whatever its length; the other values stay."""
    data = document({"200": answer({"type": "object"})})
    data["components"]["schemas"]["User"] = PIN
    sent = {"name": "ann", "pin": pin}
    with echo(status, "application/json", shape=quoted) as url:
        failed, shown = await call(data, url, sent)
    shown = shown.replace(" ", "")
    assert failed == (status == 422) and '"name":"ann"' in shown and '"n":7' in shown, shown
    assert '"pin":"REDACTED"' in shown and f'"pin":{json.dumps(pin)}' not in shown, shown


async def test_json_under_another_label_keeps_its_text() -> None:
    """JSON labelled ``text/plain`` stripped of the password was written back ASCII-escaped:
    ``Zoë 東京`` reached the client as ``Zo\\u00eb \\u6771\\u4eac``."""
    with echo(200, "text/plain; charset=utf-8") as url:
        failed, shown = await call(document(NO_SCHEMA), url, {**SENT, "name": "Zoë 東京"})
    assert not failed and "Zoë 東京" in shown and "hunter2" not in shown, shown


async def test_a_text_answer_the_document_marks_write_only_answers_nothing() -> None:
    """A ``text/plain`` answer whose schema is a ``writeOnly`` string (a stored token): no
    plan was made for a text answer and the token reached the client."""
    token = {"type": "string", "writeOnly": True}
    data = document({"200": {"description": "ok", "content": {"text/plain": {"schema": token}}}})
    with echo(200, "text/plain", shape=stored("stored-token-1")) as url:
        failed, shown = await call(data, url)
    assert not failed and "stored-token-1" not in shown, shown


def test_numbers_sent_write_only_and_credentials_with_leading_zeros_blank_nothing_else() -> None:
    """A number sent ``writeOnly`` (a PIN of 1, of 2024) blanked every equal value and year of
    an answer (``"page": 1``, ``"2024-05-01"``); a credential ``0042917731`` (numeric text
    with a leading zero) made every answer an internal error (read as a JSON number)."""
    from mcpgen.runtime.answers import scrubbed
    from mcpgen.runtime.wire_body import write_only

    spec = {
        "argument": None,
        "properties": ["pin"],
        "arguments": ["pin"],
        "write_only": {"drop": ["pin"]},
    }
    secrets = {*write_only(spec, {"pin": 2024}), "0042917731"}
    answer = {"page": 1, "date": "2024-05-01", "key": "0042917731", "echo": "k=0042917731"}
    assert scrubbed(answer, secrets) == {
        "page": 1, "date": "2024-05-01", "key": "REDACTED", "echo": "k=REDACTED"
    }  # fmt: skip


@pytest.mark.parametrize(
    "xml, body",
    [
        ({"name": "pwd"}, "<User><name>bob</name><pwd>old-secret</pwd></User>"),
        ({"name": "pwd", "attribute": True}, "<User pwd='old-secret'><name>bob</name></User>"),
        ({"name": "pwd"}, "<r><User><name>bob</name><pwd>old-secret</pwd></User></r>"),
    ],
)
async def test_an_xml_answer_leaves_out_the_element_xml_name_names(xml: Any, body: str) -> None:
    """OpenAPI's ``xml.name`` renames a property's element (``xml.attribute``: an
    attribute of that name): ``<pwd>`` was kept, the plan naming only ``password``."""
    data = document({"200": {"description": "ok", "content": {"application/xml": {"schema": REF}}}})
    user = data["components"]["schemas"]["User"] = json.loads(json.dumps(USER))
    user["properties"]["password"]["xml"] = xml
    with echo(200, "application/xml", shape=stored(body)) as url:
        failed, shown = await call(data, url)
    assert not failed and "<name>bob</name>" in shown, shown
    assert "old-secret" not in shown and "pwd" not in shown, shown


async def test_an_xml_answer_leaves_out_an_unwrapped_array_s_items() -> None:
    """An array not ``wrapped`` is its items, each an element named as the items'
    ``xml.name`` says (``<key>``), with no element of the property's name around them."""
    data = document({"200": {"description": "ok", "content": {"application/xml": {"schema": REF}}}})
    keys = {"type": "array", "writeOnly": True, "items": {"type": "string", "xml": {"name": "key"}}}
    user = data["components"]["schemas"]["User"] = json.loads(json.dumps(USER))
    user["properties"]["keys"] = keys
    body = "<User><name>bob</name><key>old-secret</key><key>k2</key></User>"
    with echo(200, "application/xml", shape=stored(body)) as url:
        failed, shown = await call(data, url)
    assert not failed and "<name>bob</name>" in shown, shown
    assert "old-secret" not in shown and "k2" not in shown, shown


async def test_an_xml_answer_leaves_out_a_renamed_element_marked_in_another_member() -> None:
    """``User: allOf: [Base, {password: writeOnly}]`` with ``Base`` naming the password's
    element ``<pwd>``: the name was looked for only where the mark is."""
    data = document({"200": {"description": "ok", "content": {"application/xml": {"schema": REF}}}})
    base = data["components"]["schemas"]["Base"] = json.loads(json.dumps(USER))
    base["properties"]["password"] = {"type": "string", "xml": {"name": "pwd"}}
    mark = {"properties": {"password": {"writeOnly": True}}}
    data["components"]["schemas"]["User"] = {"allOf": [{"$ref": "#/components/schemas/Base"}, mark]}
    body = "<User><name>bob</name><pwd>old-secret</pwd></User>"
    with echo(200, "application/xml", shape=stored(body)) as url:
        failed, shown = await call(data, url, {"body": SENT})
    assert not failed and "<name>bob</name>" in shown, shown
    assert "old-secret" not in shown and "pwd" not in shown, shown


SEC = {"type": "string", "xml": {"name": "pwd"}}


@pytest.mark.parametrize(
    "password",
    [
        {"$ref": "#/components/schemas/Sec", "writeOnly": True},
        {"allOf": [{"$ref": "#/components/schemas/Sec"}], "writeOnly": True},
        {"allOf": [{"xml": {"name": "pwd"}}], "type": "string", "writeOnly": True},
    ],
)
async def test_an_xml_answer_leaves_out_an_element_named_beside_the_mark(password: Any) -> None:
    """The ``xml.name`` in the definition a marked property refers to (beside ``writeOnly``)
    or in an ``allOf`` member of it: only a bare reference's was followed, ``<pwd>`` kept."""
    data = document({"200": {"description": "ok", "content": {"application/xml": {"schema": REF}}}})
    user = data["components"]["schemas"]["User"] = json.loads(json.dumps(USER))
    user["properties"]["password"] = password
    data["components"]["schemas"]["Sec"] = SEC
    body = "<User><name>bob</name><pwd>old-secret</pwd></User>"
    with echo(200, "application/xml", shape=stored(body)) as url:
        failed, shown = await call(data, url)
    assert not failed and "<name>bob</name>" in shown, shown
    assert "old-secret" not in shown and "pwd" not in shown, shown


@pytest.mark.parametrize("media", ["text/plain", "application/xml"])
async def test_a_password_sent_in_an_xml_body_is_redacted_from_an_echo(media: str) -> None:
    """An XML body is sent as written (a string): the password in its ``<password>``
    element (or ``password`` attribute), which the document marks ``writeOnly``, was not
    known as sent, so a 422 quoting it reached the client; its text is redacted now."""
    from wirekit import recorder

    data = document({"200": answer()})
    data["paths"]["/users"]["post"]["requestBody"]["content"] = {"application/xml": {"schema": REF}}
    sent = {
        "body": '<user password="s3cr3t-attr"><name>ann</name><password>hunter2</password></user>'
    }
    quote = "<e>hunter2 and s3cr3t-attr are weak</e>" if "xml" in media else "hunter2, s3cr3t-attr"
    with recorder() as rec:
        rec.answer(422, media, quote.encode())
        failed, shown = await call(data, rec.url, sent)
        assert rec.seen[0].body == sent["body"].encode()  # (sent as written)
    assert failed and "hunter2" not in shown and "s3cr3t-attr" not in shown, shown
    assert "REDACTED" in shown


W = {"type": "string", "writeOnly": True}
KEYS = {"type": "object", "additionalProperties": W}
VAULT = {"type": "object", "properties": {"name": {"type": "string"}, "keys": KEYS}}
MAP_BODY = "<User><name>bob</name><keys><k1>old-secret</k1><k2>s2</k2></keys></User>"


RENAMED = {"xml": {"name": "Keys"}}
OWN = {"type": "object", "properties": {"a": {"type": "string"}}}
ENTRY = {"xml": {"name": "entry"}, "properties": {"label": {"type": "string"}}} | KEYS
LISTED = {"type": "array", "xml": {"wrapped": True}, "items": ENTRY}
NAMED_BODY = "<User><name>bob</name><Keys><k1>old-secret</k1></Keys></User>"
LISTED_BODY = "<User><all><entry><label>L1</label><k1>old-secret</k1></entry></all></User>"


@pytest.mark.parametrize(
    "user, kept, body",
    [
        (VAULT, "<name>bob</name>", MAP_BODY),  # a property's map: its element's children go
        (
            VAULT | {"properties": {"keys": KEYS | {"properties": {"k2": {}}}}},
            "<k2>s2</k2>",
            MAP_BODY,
        ),
        (VAULT | {"properties": {"keys": {"patternProperties": {"^k1$": W}}}}, "", MAP_BODY),
        (KEYS, "<User />", MAP_BODY),  # the answer is the map: the root's children go
        # its element named by ``xml.name``: matched by property name only, ``k1`` stayed
        (
            VAULT | {"properties": {"keys": KEYS | {"xml": {"name": "Keys"}}}},
            "<Keys />",
            NAMED_BODY,
        ),
        # ... named so where the property is declared again: beside the reference to the
        # definition declaring it, in another ``allOf`` member (the name declared only by the
        # schema declaring the map was read: ``k1`` stayed)
        *(
            (user, "<Keys />", NAMED_BODY)
            for user in [
                {"allOf": [VAULT, {"properties": {"keys": {"xml": {"name": "Keys"}}}}]},
                {"$ref": "#/components/schemas/Vault", "properties": {"keys": RENAMED}},
                {
                    "allOf": [
                        {"$ref": "#/components/schemas/Vault"},
                        {"properties": {"keys": RENAMED}},
                    ]
                },
                {"allOf": [{"$ref": "#/components/schemas/Named"}, {"properties": {"keys": KEYS}}]},
            ]
        ),
        # a wrapped array of maps: each ``<entry>`` was taken for a key and left out whole
        ({"properties": {"all": LISTED}}, "<entry><label>L1</label></entry>", LISTED_BODY),
        # ... and its ``prefixItems`` (looked for a level too high: each item taken for a key)
        (
            {"properties": {"all": LISTED | {"items": False, "prefixItems": [ENTRY]}}},
            "<entry><label>L1</label></entry>",
            LISTED_BODY,
        ),
        # a declared element named as the map's property elsewhere (``profile.keys``) is no
        # map: matched by name anywhere, its declared ``<a>`` (``<entry>``) was left out
        (
            VAULT | {"properties": {"keys": KEYS, "profile": {"properties": {"keys": OWN}}}},
            "<profile><keys><a>A1</a></keys></profile>",
            MAP_BODY.replace("</User>", "<profile><keys><a>A1</a></keys></profile></User>"),
        ),
        (
            {
                "properties": {
                    "all": LISTED,
                    "log": {"properties": {"all": LISTED | {"items": OWN}}},
                }
            },
            "<log><all><entry><a>A1</a></entry></all></log>",
            LISTED_BODY.replace("</User>", "<log><all><entry><a>A1</a></entry></all></log></User>"),
        ),
        # ``wrapped`` beside a reference to the array, or in an ``allOf`` member beside it:
        # not seen (a reference followed, a member alone), each ``<entry>`` left out whole
        *(
            ({"properties": {"all": a}}, "<entry><label>L1</label></entry>", LISTED_BODY)
            for a in [
                {"$ref": "#/components/schemas/Entries", "xml": {"wrapped": True}},
                {"allOf": [{"$ref": "#/components/schemas/Entries"}], "xml": {"wrapped": True}},
                {"allOf": [{"type": "array", "items": ENTRY}, {"xml": {"wrapped": True}}]},
                {"allOf": [{"$ref": "#/components/schemas/Entries"}, {"xml": {"wrapped": True}}]},
            ]
        ),
    ],
)
async def test_an_xml_answer_leaves_out_a_map_s_write_only_values(
    user: Any, kept: str, body: str
) -> None:
    """``additionalProperties`` (a ``patternProperties`` entry) marked ``writeOnly``: a
    JSON answer loses those keys, an XML one kept them (its elements are the map's keys,
    no property's name); the declared ``k2`` (``label``) stays."""
    data = document({"200": {"description": "ok", "content": {"application/xml": {"schema": REF}}}})
    data["components"]["schemas"] |= {
        "User": user,
        "Entries": {"type": "array", "items": ENTRY},
        "Vault": VAULT,
        "Named": {"properties": {"keys": RENAMED}},
    }
    with echo(200, "application/xml", shape=stored(body)) as url:
        failed, shown = await call(data, url, {"body": {}})
    assert not failed and kept in shown and "old-secret" not in shown, shown


def test_a_wrapped_array_of_itself_ends() -> None:
    """A wrapped array whose items are itself: the maps were looked for one level further
    down at each turn, never the same, until RecursionError (every XML answer failed)."""
    from xml.etree import ElementTree

    from mcpgen.runtime.wire_xml import strip

    node = {"items": {"ref": "N"}, "wrapped": True, "prefix": [{"additional": {"gone": True}}]}
    root = ElementTree.fromstring("<N><a><k>s</k></a></N>")
    assert strip(root, [{"ref": "N", "$defs": {"N": node}}]) == ["s"]


def test_an_unwrapped_array_s_prefix_item_is_its_own_element() -> None:
    """An unwrapped array's elements are its items: the first ``<p>`` is ``prefixItems[0]``
    (a map leaving its values out), the second an item the plan keeps whole. Matched by
    name, both lost their children."""
    from xml.etree import ElementTree

    from mcpgen.runtime.wire_xml import strip

    plan = {"properties": {"p": {"prefix": [{"additional": {"gone": True}}], "items": {}}}}
    root = ElementTree.fromstring("<r><p><k>s</k></p><p><k>t</k></p></r>")
    assert strip(root, [plan]) == ["s"]
    assert ElementTree.tostring(root, encoding="unicode") == "<r><p /><p><k>t</k></p></r>"


@pytest.mark.parametrize(
    "xml, body",
    [
        ({}, "<User><name>bob</name><keys>old-secret</keys><keys>s2</keys></User>"),
        ({"wrapped": True}, "<User><name>bob</name><keys><k>old-secret</k><k>s2</k></keys></User>"),
    ],
)
async def test_an_xml_answer_leaves_out_an_array_s_write_only_items(xml: Any, body: str) -> None:
    """``keys: {type: array, items: {writeOnly: true}}``: a JSON answer's ``keys`` is
    ``[]``; an XML one kept each ``<keys>`` item (each ``<k>`` of a wrapped one)."""
    data = document({"200": {"description": "ok", "content": {"application/xml": {"schema": REF}}}})
    user = data["components"]["schemas"]["User"] = json.loads(json.dumps(USER))
    user["properties"]["keys"] = {"type": "array", "items": W, "xml": xml}
    with echo(200, "application/xml", shape=stored(body)) as url:
        failed, shown = await call(data, url)
    assert not failed and "<name>bob</name>" in shown, shown
    assert "old-secret" not in shown and "s2" not in shown, shown
