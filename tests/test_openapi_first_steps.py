"""What a model is offered from a public OpenAPI document, as a new user builds it: the
variables of an API whose name ends in "API" do not stutter, and operations the document
marks deprecated are left out unless ``openapi.deprecated: true`` asks for them."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from mcpgen.cli import main
from mcpgen.openapi.to_manifest import upstream_prefix
from mcpgen.pipeline import load_manifest

API = """\
openapi: 3.0.3
info: {title: Space Traders API, version: 2.0.0}
servers: [{url: "https://api.spacetraders.io/v2"}]
components:
  securitySchemes:
    AgentToken: {type: http, scheme: bearer}
security: [{AgentToken: []}]
paths:
  /my/ships:
    get:
      operationId: getMyShips
      summary: List ships
      responses: {"200": {description: ok}}
  /my/ships/{shipSymbol}/old:
    get:
      operationId: getShipOld
      deprecated: true
      summary: The old way
      parameters: [{name: shipSymbol, in: path, required: true, schema: {type: string}}]
      responses: {"200": {description: ok}}
"""


def test_variables_of_an_api_named_api_do_not_stutter(tmp_path: Path) -> None:
    (tmp_path / "api.yaml").write_text(API, "utf-8")
    manifest = load_manifest(tmp_path / "api.yaml").manifest
    assert manifest is not None and manifest.server.name == "space-traders-api"
    assert manifest.upstream is not None
    assert manifest.upstream["baseUrlEnv"] == "SPACE_TRADERS_API_BASE_URL"
    assert manifest.upstream["credentialEnv"] == {"AgentToken": "SPACE_TRADERS_API_AGENTTOKEN"}
    out = tmp_path / "out"
    assert (
        CliRunner().invoke(main, ["build", str(tmp_path / "api.yaml"), "-o", str(out)]).exit_code
        == 0
    )
    readme = (out / "README.md").read_text("utf-8")
    assert "SPACE_TRADERS_API_BASE_URL" in readme and "_API_API_" not in readme


def test_the_prefix_keeps_api_when_a_variable_would_be_a_server_setting() -> None:
    assert upstream_prefix("GITHUB", {}) == "GITHUB_API"
    assert upstream_prefix("SPACE_TRADERS_API", {"AgentToken": {}}) == "SPACE_TRADERS_API"
    # SPACE_TRADERS_API_PORT is the server's own port: the API's credential must differ
    assert upstream_prefix("SPACE_TRADERS_API", {"port": {}}) == "SPACE_TRADERS_API_API"
    assert upstream_prefix("X_API", {"tokens": {}}) == "X_API_API"
    # X_API_INTROSPECTION_CLIENT_SECRET: the server's own token-introspection secret
    assert upstream_prefix("X_API", {"introspection_client_secret": {}}) == "X_API_API"


def test_deprecated_operations_are_left_out_unless_asked_for(tmp_path: Path) -> None:
    (tmp_path / "api.yaml").write_text(API, "utf-8")
    bare = load_manifest(tmp_path / "api.yaml").manifest
    assert bare is not None and [t.name for t in bare.tools] == ["get_my_ships"]
    manifest = tmp_path / "mcpgen.yaml"
    manifest.write_text(
        "mcpgen: 1\nserver: {name: traders}\nopenapi: {source: api.yaml, deprecated: true}\n",
        "utf-8",
    )
    loaded = load_manifest(manifest).manifest
    assert loaded is not None
    assert [t.name for t in loaded.tools] == ["get_my_ships", "get_ship_old"]
    assert loaded.tools[1].description.startswith("Deprecated.")


def test_the_readme_names_the_tools_its_mode_lists(tmp_path: Path) -> None:
    from mcpgen.render import render_without_models

    (tmp_path / "api.yaml").write_text(API, "utf-8")
    for mode, listed in [
        ("code", "`search_docs`, `execute`"),
        ("search", "`search_operations`, `describe_operation`"),
    ]:
        manifest = tmp_path / f"{mode}.yaml"
        text = f"mcpgen: 1\nserver: {{name: st}}\nopenapi: {{source: api.yaml, mode: {mode}}}\n"
        manifest.write_text(text, "utf-8")
        model = load_manifest(manifest).manifest
        assert model is not None
        readme = render_without_models(model).generated["README.md"]
        assert f"Meta-tool mode is on (`{mode}`): tools/list shows\n{listed}" in readme
        assert ("search_operations" in readme) == (mode == "search"), mode
