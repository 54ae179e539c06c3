"""The servers under attack: their manifests, the OpenAPI document the target wraps, the
handler code written into them, and the environment each runs with.

- ``target`` (package ``target_mcp``, env prefix ``TARGET_``): no inbound auth (localhost),
  one tool per operation of ``target-api.yaml`` (served by the local upstream, API keys in a
  header and in the query string), a resource template from an operation, hand-written
  tools (progress/logging, a number echo) and Jinja prompts;
- ``gate`` (package ``gate_mcp``, env prefix ``GATE_``): an OAuth 2.1 resource server (JWTs
  from a JWKS file made here, ``leeway: 0``, ``hideUnauthorizedTools``) with scoped tools
  and the API behind meta tools (``metaTools: true``).
"""

from __future__ import annotations

from sec_harness import Built, Server, Tokens, Upstream

TARGET_API = """
openapi: 3.1.0
info: {title: Target, version: 1.0.0}
servers: [{url: "http://127.0.0.1:9/api/v1"}]
security: [{headerKey: []}]
paths:
  /users/{userId}/profile:
    get:
      operationId: getProfile
      summary: A user's profile
      parameters:
        - {name: userId, in: path, required: true, schema: {type: string}}
      responses:
        "200":
          description: The profile
          content: {application/json: {schema: {type: object}}}
  /items/{itemId}/label:
    get:
      operationId: itemLabel
      parameters:
        - {name: itemId, in: path, required: true, schema: {type: integer}}
      responses:
        "200":
          description: A printable label
          content: {text/plain: {schema: {type: string}}}
  /files/{fileId}:
    get:
      operationId: getFile
      security: [{queryKey: []}]
      parameters:
        - {name: fileId, in: path, required: true, schema: {type: string}}
      responses:
        "200":
          description: The file
          content: {application/octet-stream: {schema: {type: string, format: binary}}}
  /moved:
    get:
      operationId: getMoved
      responses:
        "200":
          description: Something that moved
          content: {application/json: {schema: {type: object}}}
  /prefs:
    get:
      operationId: getPrefs
      parameters:
        - {name: theme, in: cookie, schema: {type: string}}
        - {name: X-Trace, in: header, schema: {type: string}}
        - {name: q, in: query, schema: {type: string}}
      responses:
        "200":
          description: Preferences
          content: {application/json: {schema: {type: object}}}
  /slow:
    get:
      operationId: slowOp
      responses:
        "200":
          description: Takes its time
          content: {application/json: {schema: {type: object}}}
components:
  securitySchemes:
    headerKey: {type: apiKey, in: header, name: X-API-Key}
    queryKey: {type: apiKey, in: query, name: api_key}
"""

TARGET = """
mcpgen: 1
server: {name: target, version: 0.1.0, package: target_mcp, description: The target.}
transports: {offer: [stdio, http, sse, websocket]}  # attacked over each
capabilities: {pageSize: 2}
openapi:
  source: target-api.yaml
  rules: [{operationId: itemLabel, as: resourceTemplate}]
tools:
  - name: chatty
    description: Logs at every level and reports progress twice.
    context: true
    input: {type: object, properties: {}}
  - name: measure
    description: Doubles a number.
    input:
      type: object
      properties: {x: {type: number}}
      required: [x]
      additionalProperties: false
    output:
      type: object
      properties: {doubled: {type: number}}
      required: [doubled]
resources:
  - {uri: "target://motd", name: motd, mimeType: text/plain, text: "hello"}
prompts:
  - name: brief
    description: A briefing.
    arguments: [{name: topic, required: true}]
    messages: [{role: user, text: "Brief me on {{ topic }}."}]
  - name: countdown
    description: Counts down from n (the template uses range, which the sandbox bounds).
    arguments: [{name: n, required: true}]
    messages: [{role: user, text: "{{ range(n|int)|list|length }} steps."}]
  - name: pairs
    description: Compares each letter of a word with every other (loops that print nothing).
    arguments: [{name: word, required: true}]
    messages:
      - {role: user, text: "{% for a in word %}{% for b in word %}{% endfor %}{% endfor %}Done."}
  - name: common
    description: The words two texts share (a loop's if, which skips every word).
    arguments: [{name: a, required: true}, {name: b, required: true}]
    messages:
      - role: user
        text: "{% set known = b.split() %}{% for w in a.split() if w in known %}{{ w }} {% endfor %}."
  - name: padded
    description: A name padded to a width the caller gives.
    arguments: [{name: name, required: true}, {name: width, required: true}]
    messages: [{role: user, text: "{{ '{:>{}}'.format(name, width) }}"}]
"""

TARGET_HANDLERS = {
    "chatty": """
        from typing import Any


        async def handle(args: Any, ctx: Any) -> str:
            for level in ("debug", "info", "warning", "error"):
                await ctx.log(level, f"chatty says {level}")
            await ctx.progress(1, 2)
            await ctx.progress(2, 2)
            return "done"
    """,
    "measure": """
        from typing import Any


        async def handle(args: Any) -> Any:
            return {"doubled": args.x * 2}
    """,
}

GATE_API = """
openapi: 3.1.0
info: {title: Gate API, version: 1.0.0}
servers: [{url: "http://127.0.0.1:9/api"}]
paths:
  /users/{userId}/profile:
    get:
      operationId: getProfile
      summary: A user's profile
      parameters:
        - {name: userId, in: path, required: true, schema: {type: string}}
      responses:
        "200":
          description: The profile
          content: {application/json: {schema: {type: object}}}
  /admin/reset:
    post:
      operationId: adminReset
      summary: Reset every account (administrators only).
      requestBody:
        content:
          application/json:
            schema: {type: object, properties: {confirm: {type: boolean}}}
      responses:
        "200":
          description: Done
          content: {application/json: {schema: {type: object}}}
"""

GATE = """
mcpgen: 1
server: {name: gate, version: 0.1.0, package: gate_mcp, description: A guarded server.}
transports: {offer: [stdio, http, sse, websocket]}  # attacked over each
auth:
  type: oauth
  issuer: https://auth.example.com
  audience: https://mcp.example.com/mcp
  jwksFile: jwks.json
  hideUnauthorizedTools: true
  leeway: 0
openapi:
  source: gate-api.yaml
  mode: search
  overrides: {adminReset: {scopes: [admin]}}
tools:
  - name: hello
    description: Say hello.
    scopes: [user]
    input: {type: object, properties: {name: {type: string}}}
resources:
  - {uri: "gate://motd", name: motd, mimeType: text/plain, text: "welcome"}
prompts:
  - name: greet
    description: A greeting.
    messages: [{role: user, text: "Hello!"}]
"""

# admin_reset is an imported operation (POST /admin/reset) that needs the admin scope: an
# attack that reaches it shows up at the upstream.
GATE_HANDLERS = {
    "hello": """
        from typing import Any


        async def handle(args: Any) -> str:
            return "hello " + (args.name or "you")
    """,
}


def target_env(upstream: Upstream) -> dict[str, str]:
    return {
        "TARGET_API_BASE_URL": upstream.url + "/api/v1",
        "TARGET_API_HEADERKEY": "SECRET-HEADER-KEY",
        "TARGET_API_QUERYKEY": "SECRET-QUERY-KEY",
        "TARGET_API_RETRIES": "0",
    }


def gate_env(upstream: Upstream, tokens: Tokens) -> dict[str, str]:
    return {
        "GATE_BASE_URL": upstream.url + "/api",  # read by the admin_reset handler itself
        "GATE_API_BASE_URL": upstream.url + "/api",
        "GATE_JWKS_FILE": str(tokens.jwks),
    }


class Variants:
    """Servers of one build under different flags, started once per module on demand;
    ``take`` hands one over to a test that will stop it (SIGTERM attacks)."""

    def __init__(self, built: Built, env: dict[str, str]) -> None:
        self.built = built
        self.env = env
        self.running: dict[tuple[str, ...], Server] = {}
        self.everything: list[Server] = []

    def get(self, *flags: str) -> Server:
        server = self.running.get(flags)
        if server is None or not server.alive():
            server = Server(self.built, *flags, env=self.env)
            self.running[flags] = server
            self.everything.append(server)
        return server

    def take(self, *flags: str) -> Server:
        server = self.get(*flags)
        del self.running[flags]
        return server

    def close(self) -> None:
        for server in self.everything:
            server.kill()
