"""Request fidelity against a local upstream that records the raw request: the ``Accept``
header names the types an error may be answered in, cookie parameters follow OpenAPI's
style examples, and a ``deepObject`` key the API cannot tell from nesting is encoded."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

import pytest
from wirekit import operations, recorder, upstream

from mcpgen.runtime.errors import ToolError

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]
ARRAY = {"type": "array", "items": {"type": "string"}}
OBJECT = {"type": "object", "properties": {"R": {"type": "integer"}, "G": {"type": "string"}}}
OK = {"200": {"description": "ok", "content": {"application/json": {"schema": {}}}}}


def document(params: list[dict[str, Any]], responses: Any = None) -> Any:
    op = {"operationId": "send", "parameters": params, "responses": responses or OK}
    return {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {"/x": {"get": op}},
    }


async def send(data: Any, arguments: dict[str, Any], status: int = 200) -> Any:
    with recorder() as rec:
        if status != 200:
            rec.answer(status, "application/problem+json", b'{"title":"no"}')
        result = await upstream(rec.url).call(operations(data)["send"], arguments)
        assert result.is_error == (status != 200), result.content
        assert len(rec.seen) == 1
        return rec.seen[0]


def cookie(name: str, schema: Any, **how: Any) -> dict[str, Any]:
    return {"name": name, "in": "cookie", "schema": schema, **how}


async def test_cookie_parameters_follow_the_style_examples() -> None:
    """``style: form`` (the default, exploded by default): one cookie per array item or
    object member, as ``; `` joins cookies (3.2's ``style: cookie``); not exploded, one
    cookie whose commas are bare (``c=blue,black``). Every array went as one cookie with
    its commas encoded (``c=o%2Cp``) and an object as ``R%2C1%2CG%2Cx``."""
    params = [
        cookie("a", ARRAY),
        cookie("o", OBJECT),
        cookie("b", ARRAY, explode=False),
        cookie("p", OBJECT, style="form", explode=False),
        cookie("k", ARRAY, style="cookie"),
    ]
    arguments = {
        "a": ["blue", "x,y"],
        "o": {"R": 100, "G": "g;h"},
        "b": ["blue", "x,y"],
        "p": {"R": 1, "G": "z"},
        "k": ["c", "d"],
    }
    seen = await send(document(params), arguments)
    assert seen.headers["cookie"] == (
        "a=blue; a=x%2Cy; R=100; G=g%3Bh; b=blue,x%2Cy; p=R,1,G,z; k=c; k=d"
    )


async def test_a_scalar_cookie_is_one_cookie_either_way() -> None:
    params = [cookie("s", {"type": "string"}), cookie("t", {"type": "string"}, explode=False)]
    seen = await send(document(params), {"s": "a b", "t": "c"})
    assert seen.headers["cookie"] == "s=a%20b; t=c"


async def test_a_deep_object_key_holding_a_bracket_is_refused() -> None:
    """``o[a[b]``, ``o[%5Bz%5D]``: a form decoder (qs, Rack, PHP decode the name, then read its
    brackets) reads a nesting whether the key's brackets are encoded or not, so the API would
    store another key (or object): refused. It was sent, as ``o%5Ba%5Bb%5D=1``."""
    deep = {"name": "o", "in": "query", "style": "deepObject", "explode": True, "schema": {}}
    op = operations(document([deep]))["send"]
    for key in ("a[b", "[z]", "k]"):
        with recorder() as rec:
            with pytest.raises(ToolError, match=r"'o\[n\]' may not have a key holding"):
                await upstream(rec.url).call(op, {"o": {"n": {key: 1}}})
            assert rec.seen == []


async def test_deep_object_keys_are_percent_encoded() -> None:
    """``&``, ``=``, ``#``, a space, non-ASCII in a key are percent-encoded as the whole name
    is (its brackets ``%5B``/``%5D`` as in a value: RFC 3986 has no bare bracket in a query,
    and Tomcat answers 400 to one), in a query and in a form body."""
    params = [
        {"name": "o", "in": "query", "style": "deepObject", "explode": True, "schema": {}},
        {"name": "f", "in": "query", "schema": {}},
    ]
    value = {"x&y=z#": 3, "é ü": [4], "plain": "v w"}
    seen = await send(document(params), {"o": value, "f": "g"})
    query = seen.target.partition("?")[2]
    assert query.split("&") == [
        "o%5Bx%26y%3Dz%23%5D=3",
        "o%5B%C3%A9%20%C3%BC%5D%5B0%5D=4",
        "o%5Bplain%5D=v%20w",
        "f=g",
    ]
    assert [k for k, _ in parse_qsl(query)] == ["o[x&y=z#]", "o[é ü][0]", "o[plain]", "f"]


def answered(media: str) -> dict[str, Any]:
    return {"description": "d", "content": {media: {"schema": {"type": "object"}}}}


async def test_accept_names_the_types_an_error_is_answered_in() -> None:
    """An API answering its errors as ``application/problem+json`` (or any type only an
    error response declares) may answer 406 to an ``Accept`` that lists the success's type
    alone (it was ``application/json``): the error types follow, less preferred (``q=0.9``:
    a success declared in that type too is still asked as the success's), each once."""
    responses = {
        "200": answered("application/json"),
        "404": answered("application/problem+json"),
        "422": answered("application/problem+json"),
        "500": answered("application/json"),
        "default": {"description": "d", "content": {"text/plain": {}}},
    }
    with recorder() as rec:
        rec.answer(404, "application/problem+json", b'{"title":"no such pet"}')
        op = operations(document([], responses))["send"]
        result = await upstream(rec.url).call(op, {})
    accept = "application/json, application/problem+json;q=0.9, text/plain;q=0.9"
    assert rec.seen[0].headers["accept"] == accept
    assert result.is_error and "no such pet" in str(result.content)


async def test_accept_is_the_success_type_alone_without_other_error_types() -> None:
    seen = await send(document([], {**OK, "400": answered("application/json")}), {})
    assert seen.headers["accept"] == "application/json"


def test_error_types_are_each_error_response_s_type_once_after_the_success_s() -> None:
    """``Operation.error_types`` (the importer's ``Answers``): each error response's media
    type once, in the document's order, the success's left out; with no success, all."""
    errors = {"404": answered("application/problem+json"), "409": answered("application/json")}
    errors["422"] = answered("application/problem+json")
    with_ok = operations(document([], {**OK, **errors}))["send"]
    assert with_ok["errorTypes"] == ["application/problem+json"]
    alone = operations(document([], errors))["send"]
    assert alone["errorTypes"] == ["application/problem+json", "application/json"]
    assert "responseType" not in alone or alone["responseType"] is None
