"""A package that offers only some transports (``transports.offer``) says only what it can
do: auth with stdio alone is a located warning (stdio callers are the local user, with
every scope); the README shows only the commands the server accepts; the Dockerfile runs a
transport the server offers (stdio, ``docker run -i``, when it offers no other)."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from mcpgen.pipeline import Loaded, load_manifest
from mcpgen.problems import Level
from mcpgen.render import render_without_models

HEADER = """\
mcpgen: 1
server: {name: demo, description: A demo server.}
tools:
  - name: ping
    description: Reply.
"""


def load(tmp_path: Path, body: str) -> Loaded:
    path = tmp_path / "m.yaml"
    path.write_text(HEADER + textwrap.dedent(body), encoding="utf-8")
    return load_manifest(path, False)


def warnings(loaded: Loaded) -> list[tuple[int, str, str]]:
    return [
        (p.location.line, p.field, p.message)
        for p in loaded.problems.sorted()
        if p.level is Level.WARNING
    ]


def test_auth_with_only_stdio_is_a_located_warning(tmp_path: Path) -> None:
    found = warnings(load(tmp_path, "transports: {offer: [stdio]}\nauth: {type: bearer}\n"))
    assert [(line, field) for line, field, _ in found] == [(7, "auth.type")], found
    assert "offers only stdio" in found[0][2] and "local user" in found[0][2]
    offered = load(tmp_path, "transports: {offer: [stdio, http]}\nauth: {type: bearer}\n")
    assert not any("offers only stdio" in m for _, _, m in warnings(offered))


def rendered(tmp_path: Path, transports: str) -> tuple[dict[str, str], list[str]]:
    loaded = load(tmp_path, f"transports: {transports}\nauth: {{type: bearer}}\n")
    assert loaded.manifest is not None, loaded.problems
    files = render_without_models(loaded.manifest).generated
    spec = json.loads(files["src/demo_mcp/_spec.json"])
    return files, spec["transports"]


@pytest.mark.parametrize(
    "transports",
    [
        "{offer: [stdio]}",
        "{offer: [http], default: http}",
        "{offer: [stdio, websocket]}",
        "{offer: [stdio, http, sse, websocket]}",
    ],
)
def test_readme_and_dockerfile_use_only_offered_transports(tmp_path: Path, transports: str) -> None:
    files, offered = rendered(tmp_path, transports)
    readme, dockerfile = files["README.md"], files["Dockerfile"]
    named = set(re.findall(r"--transport (\w+)", readme + dockerfile))
    assert named <= set(offered), (named, offered)
    chosen = re.findall(r"DEMO_TRANSPORT=(\w+)", dockerfile)
    assert len(chosen) == 1 and chosen[0] in offered, chosen
    if offered == ["stdio"]:
        assert chosen == ["stdio"] and "docker run -i" in dockerfile + readme
        assert "EXPOSE" not in dockerfile and "/healthz" not in dockerfile
        assert "offers only stdio" in readme
    else:
        assert chosen[0] != "stdio" and "HEALTHCHECK" in dockerfile
    if "stdio" not in offered:  # a bare command line would not be stdio
        assert "# stdio (for desktop hosts)" not in readme
