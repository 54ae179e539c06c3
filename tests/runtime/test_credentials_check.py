"""Build-time checks of ``openapi.credentials`` (mcpgen/check/auth.py) and the
importer keeping OAuth2 user flows and openIdConnect schemes for them.

Each test writes a manifest and an OpenAPI document, loads them through the pipeline the
CLI uses, and asserts on the problems: their level, message and manifest line.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mcpgen.pipeline import load_manifest
from mcpgen.problems import Level, Problem

pytestmark = pytest.mark.timeout(120)

API = """
openapi: 3.1.0
info: {title: T, version: 1.0.0}
servers: [{url: "http://127.0.0.1:9"}]
security: [{bearerAuth: []}]
paths:
  /me:
    get:
      operationId: me
      security: [{userOauth: [read]}]
      responses: {"200": {description: ok, content: {application/json: {schema: {type: object}}}}}
components:
  securitySchemes:
    bearerAuth: {type: http, scheme: bearer}
    basicAuth: {type: http, scheme: basic}
    apiKeyAuth: {type: apiKey, in: header, name: X-Key}
    userOauth:
      type: oauth2
      flows:
        authorizationCode:
          authorizationUrl: "https://as.example/authorize"
          tokenUrl: "https://as.example/token"
          scopes: {read: Read things}
    oidc: {type: openIdConnect, openIdConnectUrl: "https://as.example/.well-known/openid-configuration"}
"""
OAUTH = (
    "auth: {type: oauth, issuer: 'https://as.example', audience: 'https://mcp.example', "
    "jwksUrl: 'https://as.example/jwks'}"
)
EXCHANGE = "{from: tokenExchange, tokenUrl: 'https://as.example/token', audience: 'https://api'}"


def load(tmp_path: Path, credentials: str, auth: str = OAUTH) -> list[Problem]:
    (tmp_path / "api.yaml").write_text(textwrap.dedent(API).lstrip(), encoding="utf-8")
    lines = [
        "mcpgen: 1",
        "server: {name: t, version: 0.1.0}",
        auth,
        "openapi:",
        "  source: api.yaml",
    ]
    if credentials:
        lines.append("  credentials:")
        lines += ["    " + line for line in textwrap.dedent(credentials).strip().splitlines()]
    (tmp_path / "m.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return list(load_manifest(tmp_path / "m.yaml").problems.items)


def about(problems: list[Problem], text: str) -> Problem:
    found = [p for p in problems if text in p.message]
    assert len(found) == 1, [f"{p.location}: {p.message}" for p in problems]
    return found[0]


def in_manifest(problems: list[Problem]) -> list[Problem]:
    return [p for p in problems if p.location.file.endswith("m.yaml")]


def test_a_good_configuration_has_no_problem(tmp_path: Path) -> None:
    problems = load(
        tmp_path,
        f"""
        bearerAuth: {EXCHANGE}
        userOauth: {EXCHANGE}
        oidc: {{from: header, header: X-Upstream-Id-Token}}
        apiKeyAuth: {{from: env}}
        """,
    )
    assert problems == []


def test_a_scheme_the_document_lacks_is_an_error_at_its_line(tmp_path: Path) -> None:
    problems = load(tmp_path, f"bearerAuth: {EXCHANGE}\nbearerAtuh: {{from: env}}")
    problem = about(problems, "no security scheme 'bearerAtuh'")
    assert problem.level is Level.ERROR
    assert (problem.location.file, problem.location.line) == (str(tmp_path / "m.yaml"), 8)
    assert "did you mean 'bearerAuth'?" in problem.message
    assert "its schemes: apiKeyAuth, basicAuth, bearerAuth, oidc, userOauth" in problem.message


@pytest.mark.parametrize(
    ("entry", "text", "column_of"),
    [
        ("basicAuth: " + EXCHANGE, "HTTP basic cannot carry", "tokenExchange"),
        ("apiKeyAuth: {from: header, header: Authorization}", "cannot carry", "Authorization"),
        ("apiKeyAuth: {from: header, header: Mcp-Session-Id}", "cannot carry", "Mcp-Session-Id"),
        ("apiKeyAuth: {from: header, header: X-Forwarded-User}", "cannot carry", "X-Forwarded"),
    ],
)
def test_the_runtimes_rules_are_located_at_the_option(
    tmp_path: Path, entry: str, text: str, column_of: str
) -> None:
    problem = about(load(tmp_path, entry), text)
    assert problem.level is Level.ERROR
    assert problem.location.line == 7
    line = (tmp_path / "m.yaml").read_text().splitlines()[6]
    assert problem.location.column == line.index(column_of) + 1


def test_the_servers_own_api_key_header_cannot_be_a_source(tmp_path: Path) -> None:
    entry = "apiKeyAuth: {from: header, header: X-Gate-Key}"
    auth = "auth: {type: apiKey, header: X-Gate-Key}"
    problem = about(load(tmp_path, entry, auth), "the X-Gate-Key header cannot carry")
    assert problem.level is Level.ERROR and problem.location.line == 7
    # the same header is fine when the server reads its keys from another one
    assert in_manifest(load(tmp_path, entry, "auth: {type: apiKey}")) == []


@pytest.mark.parametrize(
    ("auth", "level"),
    [("none", Level.WARNING), ("bearer", Level.ERROR), ("apiKey", Level.ERROR)],
)
def test_token_exchange_without_oauth(tmp_path: Path, auth: str, level: Level) -> None:
    """Without auth nothing is sent (every call fails: a warning); with static keys the
    caller's key would go to the AS as the subject token: refused."""
    problems = load(tmp_path, "bearerAuth: " + EXCHANGE, f"auth: {{type: {auth}}}")
    problem = about(problems, "token exchange needs each caller's verified access token")
    assert problem.level is level
    assert problem.field == "openapi.credentials.bearerAuth.from"
    assert problem.location.line == 7
    problems = load(tmp_path, "bearerAuth: " + EXCHANGE)
    assert [p for p in problems if "verified access token" in p.message] == []


def test_a_malformed_entry_is_reported_once(tmp_path: Path) -> None:
    problems = load(tmp_path, "bearerAuth: {from: tokenExchange, audience: 'https://api'}")
    assert len(in_manifest(problems)) == 1, [p.message for p in problems]


def test_user_flows_and_openid_connect_are_kept_with_a_warning_unless_served(
    tmp_path: Path,
) -> None:
    loaded = load_manifest
    problems = load(tmp_path, "")
    warned = {p.field.rsplit("/", 1)[-1]: p for p in problems if "no token of its own" in p.message}
    assert set(warned) == {"userOauth", "oidc"}
    assert all(p.location.file.endswith("api.yaml") for p in warned.values())
    assert "openapi.credentials.userOauth" in warned["userOauth"].message
    manifest = loaded(tmp_path / "m.yaml").manifest
    assert manifest is not None and manifest.upstream is not None
    schemes = manifest.upstream["securitySchemes"]
    assert schemes["userOauth"] == {
        "type": "oauth2",
        "flows": ["authorizationCode"],
        "scopes": {"read": "Read things"},
    }
    assert schemes["oidc"]["type"] == "openIdConnect"
    # served by a source that can: no warning
    problems = load(tmp_path, f"userOauth: {EXCHANGE}\noidc: {{from: header, header: X-Id}}")
    assert [p for p in problems if "no token of its own" in p.message] == []


def test_the_build_lists_only_variables_the_sources_read(tmp_path: Path) -> None:
    load(tmp_path, f"bearerAuth: {EXCHANGE}\noidc: {{from: header, header: X-Id}}")
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "mcpgen", "build", str(tmp_path / "m.yaml"), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=110,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    spec = json.loads((out / "src" / "t_mcp" / "_spec.json").read_text())
    names = {e["name"] for e in spec["environment"]}
    assert {"T_API_BEARERAUTH_CLIENT_ID", "T_API_BEARERAUTH_CLIENT_SECRET"} <= names
    assert "T_API_APIKEYAUTH" in names and "T_API_BASICAUTH_PASSWORD" in names
    # an authorization-code scheme left on env reads an access token got out of band (it
    # read none: no call needing it could succeed); the header source reads no variable
    assert [n for n in names if "USEROAUTH" in n or "OIDC" in n] == ["T_API_USEROAUTH"]
    assert spec["upstream"]["credentials"]["oidc"] == {"from": "header", "header": "X-Id"}
    # issue 34 item 8: what a user configures token exchange with, in every place it is told
    pair = ["T_API_BEARERAUTH_CLIENT_ID", "T_API_BEARERAUTH_CLIENT_SECRET"]
    readme = (out / "README.md").read_text()
    assert all(f"| `{name}` |" in readme for name in pair)
    assert "| `T_API_BEARERAUTH` |" not in readme  # no static token variable for it
    from mcpgen.hosts.project import describe

    needed = {v.name for v in describe(out).needed_env()}
    assert set(pair) <= needed  # host snippets and ``mcpgen install`` carry both
