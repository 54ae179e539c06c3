"""A project that offers no stdio transport (``transports.offer: [http]``) cannot be
started by a host the way ``call``, ``list``, ``install`` and ``bundle`` start servers:
each says so in one line and exits 2 (a ``.mcpb`` that could never start is not written),
instead of a host entry that fails later or "Connection closed". ``mcpgen dev`` runs
http when the server offers it, else stdio, and names what it offers when asked for
another transport."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostkit import copy_example, mcpgen

from mcpgen.host_entry import ProjectError
from mcpgen.hosts.bundle import build_bundle
from mcpgen.hosts.dev import _server_for
from mcpgen.hosts.project import describe, launcher

pytestmark = pytest.mark.timeout(120)


def http_only(tmp_path: Path, offer: tuple[str, ...] = ("http",)) -> Path:
    project = copy_example("calculator", tmp_path)
    spec_path = project / "src" / "calculator_mcp" / "_spec.json"
    spec = json.loads(spec_path.read_text())
    spec["transports"] = list(offer)
    spec_path.write_text(json.dumps(spec))
    return project


def test_a_project_without_stdio_is_refused_by_every_stdio_command(tmp_path: Path) -> None:
    assert describe(copy_example("calculator", tmp_path / "both")).transports == ("stdio", "http")
    project = describe(http_only(tmp_path))
    assert project.transports == ("http",)
    for attempt in (lambda: launcher(project), lambda: build_bundle(project, tmp_path / "x.mcpb")):
        with pytest.raises(ProjectError, match="offers no stdio transport, only http"):
            attempt()
    assert not (tmp_path / "x.mcpb").exists()
    done = mcpgen("list", str(project.root))
    assert done.returncode == 2, done.stderr
    assert "start it (calculator --transport http) and use its URL" in done.stderr
    assert "Traceback" not in done.stderr and "Connection closed" not in done.stderr


def test_dev_runs_a_transport_the_server_offers(tmp_path: Path) -> None:
    stdio_only = http_only(tmp_path / "stdio", ("stdio",))
    assert _server_for(stdio_only, None, 8000, None).transport == "stdio"
    with pytest.raises(ProjectError, match=r"does not offer http \(it offers stdio\)"):
        _server_for(stdio_only, "http", 8000, None)
    assert _server_for(http_only(tmp_path / "http"), None, 8000, None).transport == "http"
