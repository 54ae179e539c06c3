"""Search and code mode at their seams, over the wire against the recording upstream: what
the wrapped API answers passes through ``call_operation`` and ``execute`` exactly as through
a direct tool (``writeOnly`` values left out, a value the call sent ``writeOnly`` redacted),
and an excluded or forbidden operation never reaches the API whatever meta tool names it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from sec_harness import Mcp, Reply, Server, Tokens, Upstream, build, refused, tool_text

pytestmark = [pytest.mark.security, pytest.mark.timeout(300)]

API = """
openapi: 3.1.0
info: {title: Meta API, version: 1.0.0}
servers: [{url: "http://127.0.0.1:9/api"}]
paths:
  /me:
    get:
      operationId: getMe
      responses:
        "200":
          description: Me
          content:
            application/json:
              schema:
                type: object
                properties:
                  name: {type: string}
                  password: {type: string, writeOnly: true}
                  keys:
                    type: array
                    items:
                      type: object
                      properties: {k: {type: string, writeOnly: true}, id: {type: integer}}
  /login:
    post:
      operationId: login
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties: {user: {type: string}, secret: {type: string, writeOnly: true}}
      responses:
        "200": {description: Echo, content: {application/json: {schema: {type: object}}}}
  /admin:
    delete:
      operationId: adminReset
      responses:
        "200": {description: Done, content: {application/json: {schema: {type: object}}}}
  /scoped:
    get:
      operationId: scopedThing
      responses:
        "200": {description: Done, content: {application/json: {schema: {type: object}}}}
"""

MANIFEST = """
mcpgen: 1
server: {name: meta, version: 0.1.0, package: meta_MODE_mcp}
auth:
  type: oauth
  issuer: https://auth.example.com
  audience: https://mcp.example.com/mcp
  jwksFile: jwks.json
openapi:
  source: api.yaml
  mode: MODE
  exclude: [{operationId: adminReset}]
  overrides: {scopedThing: {scopes: [admin]}}
"""


@pytest.fixture(scope="module", params=["code", "search"])
def meta(
    request: pytest.FixtureRequest, workdir: Path, upstream: Upstream, tokens: Tokens
) -> Iterator[tuple[str, Server]]:
    mode = request.param
    package = f"meta_{mode}_mcp"
    built = build(workdir / package, MANIFEST.replace("MODE", mode), package, {"api.yaml": API})
    env = {"META_API_BASE_URL": upstream.url + "/api", "META_JWKS_FILE": str(tokens.jwks)}
    server = Server(built, env=env)
    try:
        yield mode, server
    finally:
        server.stop()


def operation(meta: tuple[str, Server], tokens: Tokens, name: str, **arguments: str) -> object:
    """``name`` called through the mode's meta tool by a caller with scope ``user``."""
    mode, server = meta
    if mode == "code":
        given = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
        tool, params = "execute", {"code": f"{name}({given})"}
    else:
        tool, params = "call_operation", {"name": name, "arguments": arguments}
    with Mcp(server.url, tokens.bearer(["user"]), timeout=60) as client:
        return client.call(tool, params)


def test_write_only_values_never_reach_the_caller_through_a_meta_tool(
    meta: tuple[str, Server], upstream: Upstream, tokens: Tokens
) -> None:
    upstream.reset()
    answer = {"name": "ann", "password": "hunter2", "keys": [{"k": "KEY-SECRET", "id": 1}]}
    upstream.routes["/api/me"] = Reply.json(answer)
    upstream.routes["/api/login"] = lambda r: Reply.json(json.loads(r.body or b"{}"))
    me = operation(meta, tokens, "get_me")
    assert not refused(me) and "ann" in tool_text(me)
    assert "hunter2" not in json.dumps(me) and "KEY-SECRET" not in json.dumps(me)
    echoed = operation(meta, tokens, "login", user="ann", secret="S3CRET-VALUE")
    assert not refused(echoed) and "ann" in tool_text(echoed)
    assert "S3CRET-VALUE" not in json.dumps(echoed)
    assert [r.path for r in upstream.received] == ["/api/me", "/api/login"]


def test_excluded_and_forbidden_operations_never_reach_the_api(
    meta: tuple[str, Server], upstream: Upstream, tokens: Tokens
) -> None:
    upstream.reset()
    excluded = operation(meta, tokens, "admin_reset")
    forbidden = operation(meta, tokens, "scoped_thing")
    assert refused(excluded) and refused(forbidden)
    assert "admin_reset" in tool_text(excluded) and "scoped_thing" in tool_text(forbidden)
    assert upstream.received == []
