"""``readOnly`` in one ``oneOf``/``anyOf`` branch of a request body (``User.id``), where
another branch declares the property unmarked (``Bot.id``): the mark counted only when
every branch declaring it made it, so the tool offered ``id`` (in ``Bot``) and a value the
model gave it for sent it upstream (a recorder on 127.0.0.1 saw ``{"id": ...}``), though
the value may be a ``User``'s, whose ``id`` the server sets. Now any branch marking it
counts, as for ``writeOnly`` in an answer, unless a branch that leaves it unmarked
requires it (a ``Bot`` needs its ``id``: left out, no ``Bot`` could be sent)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from wirekit import imported, operations, recorder, upstream

from mcpgen.runtime.schemas import validator

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]

USER = {
    "type": "object",
    "required": ["name"],
    "properties": {"id": {"type": "string", "readOnly": True}, "name": {"type": "string"}},
}
BOT = {
    "type": "object",
    "required": ["name", "bot"],
    "properties": {
        "id": {"type": "string"},
        "name": {"type": "string"},
        "bot": {"type": "boolean"},
    },
}
EITHER = {"oneOf": [{"$ref": "#/components/schemas/User"}, {"$ref": "#/components/schemas/Bot"}]}


def document(bot: Any, body: Any = EITHER) -> Any:
    content = {"content": {"application/json": {"schema": body}}, "required": True}
    op = {
        "operationId": "send",
        "requestBody": content,
        "responses": {"204": {"description": "ok"}},
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {"/users": {"post": op}},
        "components": {"schemas": {"User": USER, "Bot": bot}},
    }


async def sent(data: Any, arguments: Any) -> Any:
    with recorder() as rec:
        rec.answer(204, "application/json", b"")
        result = await upstream(rec.url).call(operations(data)["send"], arguments)
    assert not result.is_error, result.content
    return json.loads(rec.seen[0].body)


@pytest.mark.parametrize("nested", [False, True])
async def test_a_property_read_only_in_one_branch_is_neither_offered_nor_sent(nested: bool) -> None:
    body = {"type": "object", "properties": {"who": EITHER}} if nested else EITHER
    data = document(BOT, body)
    (tool,) = imported(data).tools
    assert '"id"' not in json.dumps(tool["input"]), tool["input"]
    value = {"id": "u-1", "name": "ann"}
    arguments = {"who": value} if nested else {"body": value}
    got = await sent(data, arguments)
    assert (got["who"] if nested else got) == {"name": "ann"}, got
    bot = {"name": "b", "bot": True}  # still a valid argument (the branches overlap now)
    assert validator(tool["input"]).is_valid({"who": bot} if nested else {"body": bot})


async def test_a_branch_requiring_it_unmarked_keeps_it() -> None:
    data = document(BOT | {"required": ["name", "bot", "id"]})
    (tool,) = imported(data).tools
    assert '"id"' in json.dumps(tool["input"]), tool["input"]
    got = await sent(data, {"body": {"id": "b-1", "name": "b", "bot": True}})
    assert got == {"id": "b-1", "name": "b", "bot": True}


ASKS = {"required": ["id"]}


@pytest.mark.parametrize(
    "asks", [ASKS, {"allOf": [ASKS]}, {"$ref": "#/components/schemas/Asks", "title": "a"}]
)
async def test_a_branch_requiring_it_through_all_of_keeps_it(asks: Any) -> None:
    """``Bot``'s ``required`` in an ``allOf`` member (at any depth, or a definition it
    refers to), not its own: read only at the branch's top level, ``id`` was left out, and
    no ``Bot`` reached the API."""
    data = document({"allOf": [asks, BOT]})
    data["components"]["schemas"]["Asks"] = ASKS
    (tool,) = imported(data).tools
    assert '"id"' in json.dumps(tool["input"]), tool["input"]
    got = await sent(data, {"body": {"id": "b-1", "name": "b", "bot": True}})
    assert got == {"id": "b-1", "name": "b", "bot": True}


@pytest.mark.parametrize(
    "body",
    [
        EITHER | {"required": ["id"]},
        EITHER | {"allOf": [{"required": ["id"]}]},
        {"allOf": [{"required": ["id"]}, EITHER]},
    ],
)
async def test_a_property_required_beside_the_branches_is_kept(body: Any) -> None:
    """``id`` required beside the ``oneOf`` (itself or through its ``allOf``): a Bot needs
    it, and it was left out of what was sent (r6)."""
    data = document(BOT, body)
    got = await sent(data, {"body": {"id": "b-1", "name": "b", "bot": True}})
    assert got == {"id": "b-1", "name": "b", "bot": True}


MARKS = {"properties": {"id": {"readOnly": True}}}


@pytest.mark.parametrize(
    "body",
    [
        EITHER | {"allOf": [MARKS], "required": ["id"]},
        {"allOf": [{"oneOf": [EITHER["oneOf"][0]]}, {"oneOf": [EITHER["oneOf"][1]]}, ASKS]},
    ],
)
async def test_a_mark_that_always_applies_is_not_undone_by_a_branch(body: Any) -> None:
    """``id`` marked where it always applies (an ``allOf`` member; a ``oneOf`` of one
    ``User`` beside another of one ``Bot``: the value is both), required beside: a branch
    declaring it unmarked undid the mark, and the ``id`` given was sent."""
    data = document(BOT, body)
    got = await sent(data, {"body": {"id": "u-1", "name": "b", "bot": True}})
    assert got == {"name": "b", "bot": True}, got
