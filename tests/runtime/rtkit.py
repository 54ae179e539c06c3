"""The fixture server of the runtime tests: a small spec (``_spec.json`` format 2), its
handlers, the test credentials and the apps built from them with ``mcpgen.runtime`` alone
(no generator, no generated package).

Tools: ``echo`` and ``whoami`` (open to every caller), ``read_notes`` (scope notes.read),
``write_note`` (notes.write), ``boom`` (raises with a secret in its message), ``slow`` and
``limited`` (sleep; ``limited`` has a 0.5 s timeout; a ``marker`` path records their start,
cancellation and cleanup), ``shout`` (prints, then answers), ``interview`` (progress, a log
message, elicitation, sampling and roots) and ``gallery`` (mixed content). Resources: ``fixture://public``,
``fixture://secret`` (notes.read), ``fixture://notes/{id}`` (notes.read). Prompts: ``greet``
and ``confidential`` (notes.read).
"""

from __future__ import annotations

import copy
import json
import os
import tempfile
from dataclasses import replace
from functools import lru_cache, partial
from pathlib import Path
from typing import Any, Literal

import anyio
import mcp_types as types
from pydantic import BaseModel

from mcpgen.runtime import (
    Context,
    ResourceNotFound,
    ToolError,
    embedded_text,
    image,
    resource_link,
    text,
)
from mcpgen.runtime.http_app import create_app
from mcpgen.runtime.server import GeneratedServer, Handlers, build_server
from mcpgen.runtime.settings import Settings
from mcpgen.runtime.testing_oauth import TokenIssuer
from mcpgen.runtime.tools import Arguments, plain

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
PREFIX = "FIXTURE_"
ISSUER = "https://auth.fixture.test"
AUDIENCE = "https://mcp.fixture.test/mcp"
READ, WRITE = "notes.read", "notes.write"
SCOPES = [READ, WRITE]
KEYS_ENV = "FIXTURE_KEYS"
STATIC_KEYS = ("old-key-1234", "new-key-5678")  # two keys, as during a rotation
SECRET = "s3cret-in-the-message"
SCOPED_TOOLS = {"read_notes": [READ], "write_note": [WRITE]}
OPEN = {"type": "object", "properties": {}, "additionalProperties": False}
SLEEP = {
    "type": "object",
    "properties": {"seconds": {"type": "number"}, "marker": {"type": "string"}},
    "required": ["seconds"],
}
TEXT = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
    "additionalProperties": False,
}

INTERVIEW = {
    "type": "object",
    "properties": {
        "color": {"type": "string"},
        "size": {"type": "string"},
        "model_said": {"type": "string"},
        "roots": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["color", "size", "model_said", "roots"],
}


def _tool(name: str, schema: dict[str, Any], **extra: Any) -> dict[str, Any]:
    definition = {"name": name, "description": f"The {name} tool.", "inputSchema": schema}
    if "output" in extra:
        definition["outputSchema"] = extra.pop("output")
    return {"definition": definition, "ident": name, **extra}


BASE_SPEC: dict[str, Any] = {
    "format": 2,
    "server": {
        "name": "fixture",
        "version": "1.2.3",
        "title": "Fixture server",
        "package": "fixture_mcp",
        "script": "fixture",
    },
    "capabilities": {"logging": True, "pageSize": 100},
    "settings": {"env_prefix": PREFIX, "rate_limit": 0.0},
    "auth": {
        "type": "oauth",
        "header": "Authorization",
        "issuer": ISSUER,
        "audience": AUDIENCE,
        "hideUnauthorized": False,
        "leeway": 0,
        "scopesSupported": SCOPES,
    },
    "mode": "tools",
    "environment": [],
    "tools": [
        _tool("echo", TEXT, output=TEXT),
        _tool("whoami", OPEN),
        _tool("read_notes", OPEN, scopes=[READ]),
        _tool("write_note", TEXT, scopes=[WRITE]),
        _tool("boom", OPEN),
        _tool("slow", SLEEP),
        _tool("limited", SLEEP, timeout=0.5),
        _tool("shout", TEXT, output=TEXT),
        _tool("interview", OPEN, output=INTERVIEW),
        _tool("gallery", OPEN),
    ],
    "resources": [
        {"definition": {"uri": "fixture://public", "name": "public"}, "content": {"text": "hi"}},
        {
            "definition": {"uri": "fixture://secret", "name": "secret"},
            "content": {"text": "the secret"},
            "scopes": [READ],
        },
        {
            "definition": {"uriTemplate": "fixture://notes/{id}", "name": "note"},
            "variables": ["id"],
            "scopes": [READ],
        },
    ],
    "prompts": [
        {
            "definition": {
                "name": "greet",
                "arguments": [{"name": "who", "required": True}],
            },
            "messages": [{"role": "user", "kind": "text", "text": "Hello {{ who }}"}],
        },
        {
            "definition": {"name": "confidential"},
            "messages": [{"role": "user", "kind": "text", "text": "classified"}],
            "scopes": [READ],
        },
    ],
    "completions": [],
}


def make_spec(auth: str = "oauth", *, hide: bool = False, **settings: Any) -> dict[str, Any]:
    """The fixture spec with auth ``oauth``, ``bearer``, ``apiKey`` or ``none``."""
    spec = copy.deepcopy(BASE_SPEC)
    spec["settings"].update(settings)
    if auth == "none":
        spec["auth"] = {"type": "none"}
    elif auth in ("bearer", "apiKey"):
        header = "Authorization" if auth == "bearer" else "X-API-Key"
        spec["auth"] = {"type": auth, "env": KEYS_ENV, "header": header}
    spec["auth"]["hideUnauthorized"] = hide
    return spec


# -- handlers ------------------------------------------------------------------------------

HANDLERS = Handlers()


@HANDLERS.tool("echo")
async def echo(arguments: Arguments, ctx: Context) -> Any:
    return {"text": plain(arguments)["text"]}


@HANDLERS.tool("whoami")
async def whoami(arguments: Arguments, ctx: Context) -> Any:
    scopes = None if ctx.identity.scopes is None else sorted(ctx.identity.scopes)
    return {"subject": ctx.identity.subject, "scopes": scopes}


@HANDLERS.tool("read_notes")
async def read_notes(arguments: Arguments, ctx: Context) -> Any:
    return {"notes": ["first", "second"]}


@HANDLERS.tool("write_note")
async def write_note(arguments: Arguments, ctx: Context) -> Any:
    text = plain(arguments)["text"]
    if not text:
        raise ToolError("a note needs some text")
    return {"written": len(text)}


@HANDLERS.tool("boom")
async def boom(arguments: Arguments, ctx: Context) -> Any:
    raise RuntimeError(SECRET)


async def _sleep(arguments: Arguments, ctx: Context) -> Any:
    args = plain(arguments)
    marker = Path(args["marker"]) if args.get("marker") else None
    if marker:
        marker.with_suffix(".started").write_text("started")
    try:
        await anyio.sleep(args["seconds"])
    except anyio.get_cancelled_exc_class():
        if marker:
            marker.with_suffix(".cancelled").write_text("cancelled")
        raise
    finally:
        if marker:
            marker.write_text("cleanup")
    return f"slept {args['seconds']} s"


HANDLERS.tool("slow")(_sleep)
HANDLERS.tool("limited")(_sleep)


@HANDLERS.tool("shout")
async def shout(arguments: Arguments, ctx: Context) -> Any:
    print("stray output from a handler")  # must land on stderr, never on the stdio wire
    return {"text": plain(arguments)["text"].upper()}


class Answer(BaseModel):
    color: Literal["red", "green", "blue"] = "green"
    size: str = "M"


@HANDLERS.tool("interview")
async def interview(arguments: Arguments, ctx: Context) -> Any:
    """Asks the user (elicitation), the model (sampling) and the client (roots)."""
    await ctx.progress(0, 3, "asking")
    answer = await ctx.elicit("Pick a colour", Answer)
    if answer is None:
        raise ToolError("the user declined")
    await ctx.log("info", "got an answer")
    sampled = await ctx.sample("Say hi", max_tokens=10)
    said = sampled.content.text if isinstance(sampled.content, types.TextContent) else ""
    roots = await ctx.list_roots()
    await ctx.progress(3, 3, "done")
    return {
        "color": answer.color,
        "size": answer.size,
        "model_said": said,
        "roots": [str(r.uri) for r in roots],
    }


@HANDLERS.tool("gallery")
async def gallery(arguments: Arguments, ctx: Context) -> Any:
    return [
        text("a picture"),
        image(b"\x89PNG fake", "image/png"),
        embedded_text("fixture://note", "embedded"),
        resource_link("fixture://other", "other"),
    ]


@HANDLERS.resource("note")
async def note(variables: dict[str, str], ctx: Context) -> Any:
    if variables["id"] == "gone":
        raise ResourceNotFound("note gone was deleted yesterday")
    return f"note {variables['id']}"


MANGLED = "a\ud800b"  # a lone surrogate: no UTF-8 encodes it, so no JSON on the wire does


def with_mangled(spec: dict[str, Any]) -> dict[str, Any]:
    """``spec`` with the tool ``mangled`` (its text, or ``structured``, holds MANGLED), the
    resource ``fixture://mangled`` and the prompt ``mangled`` (their text is MANGLED)."""
    spec = copy.deepcopy(spec)
    flag = {"type": "object", "properties": {"structured": {"type": "boolean"}}}
    spec["tools"].append(_tool("mangled", flag))
    definition = {"uri": "fixture://mangled", "name": "mangled"}
    spec["resources"].append({"definition": definition, "content": {"text": MANGLED}})
    message = {"role": "user", "kind": "text", "text": MANGLED}
    spec["prompts"].append({"definition": {"name": "mangled"}, "messages": [message]})
    return spec


@HANDLERS.tool("mangled")
async def mangled(arguments: Arguments, ctx: Context) -> Any:
    return {"s": MANGLED} if plain(arguments).get("structured") else text(MANGLED)


def factory(spec: dict[str, Any]) -> Any:
    """What ``create_app`` and ``cli.main`` take: ``factory(network=...)`` builds a server."""
    return partial(build_server, spec, HANDLERS)


def server(spec: dict[str, Any] | None = None, *, network: bool = False) -> GeneratedServer:
    return build_server(spec or make_spec(), HANDLERS, network=network)


# -- credentials ---------------------------------------------------------------------------


@lru_cache(maxsize=1)
def issuer() -> TokenIssuer:
    """The stand-in authorization server of this test process (one RSA key)."""
    return TokenIssuer(ISSUER, AUDIENCE, kid="fixture-key")


@lru_cache(maxsize=1)
def jwks_file() -> str:
    folder = tempfile.mkdtemp(prefix="rtkit-")
    path = os.path.join(folder, "jwks.json")
    Path(path).write_text(json.dumps(issuer().jwks()), "utf-8")
    return path


def token(scopes: list[str] | None = None, **claims: Any) -> str:
    return issuer().token(SCOPES if scopes is None else scopes, **claims)


def bearer(value: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {value}"}


def credentials(spec: dict[str, Any], scopes: list[str] | None = None) -> dict[str, str]:
    """Headers the fixture server accepts (every scope unless ``scopes`` says otherwise)."""
    kind = spec["auth"]["type"]
    if kind == "oauth":
        return bearer(token(scopes))
    if kind == "bearer":
        return bearer(STATIC_KEYS[-1])
    if kind == "apiKey":
        return {"X-API-Key": STATIC_KEYS[-1]}
    return {}


def environ(spec: dict[str, Any]) -> dict[str, str]:
    """What the server process's environment holds for ``spec``'s auth."""
    kind = spec["auth"]["type"]
    if kind == "oauth":
        return {PREFIX + "JWKS_FILE": jwks_file()}
    if kind in ("bearer", "apiKey"):
        return {KEYS_ENV: ",".join(STATIC_KEYS)}
    return {}


# -- apps ----------------------------------------------------------------------------------

ARMS = {  # network transport -> the settings it runs with
    "http": {"transport": "http"},
    "http-stateless": {"transport": "http", "stateless": True},
    "http-json": {"transport": "http", "stateless": True, "json_response": True},
    "sse": {"transport": "sse"},
    "websocket": {"transport": "websocket"},
}


def settings(spec: dict[str, Any], transport: str = "http", **changes: Any) -> Settings:
    """The settings of ``spec`` for one arm of ARMS, with ``changes``."""
    base = Settings.defaults(spec)
    if spec["auth"]["type"] == "oauth":
        base = replace(base, jwks_file=jwks_file(), jwks_url=None)
    return replace(base, **{**ARMS[transport], **changes}).checked()


def app(
    spec: dict[str, Any] | None = None,
    transport: str = "http",
    environ_: dict[str, str] | None = None,
    **changes: Any,
) -> Any:
    """The HTTP app of ``spec`` (default: the OAuth fixture) for one arm of ARMS."""
    spec = spec or make_spec()
    env = environ(spec) if environ_ is None else environ_
    return create_app(spec, factory(spec), settings(spec, transport, **changes), env)
