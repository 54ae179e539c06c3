"""``tools[].task`` (docs/tasks.md): the model, ``_spec.json``, tools/list's
``execution.taskSupport``, the surface lock's ``tasks`` capability and ``mcpgen diff``."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from mcpgen.cli import main
from mcpgen.pipeline import load_manifest
from mcpgen.render.lock import surface
from mcpgen.render.spec import tool_entry

SOURCE = Path(__file__).parent / "fixtures" / "tasks" / "tasks.yaml"


def _model() -> object:
    loaded = load_manifest(SOURCE)
    assert loaded.manifest is not None, [p.format() for p in loaded.problems.items]
    return loaded.manifest


def test_model_definition_and_spec() -> None:
    manifest = _model()
    tools = {t.name: t for t in manifest.tools}  # type: ignore[attr-defined]
    assert tools["report"].task == "optional" and tools["export"].task == "required"
    assert tools["quick"].task is None
    assert tools["export"].definition["execution"] == {"taskSupport": "required"}
    assert "execution" not in tools["quick"].definition
    assert tool_entry(tools["report"], "jobs_mcp")["task"] == "optional"
    assert "task" not in tool_entry(tools["quick"], "jobs_mcp")


def test_lock_shows_task_support_and_the_capability() -> None:
    lock = surface(_model())
    by_name = {t["name"]: t for t in lock["tools"]}
    assert by_name["report"]["execution"] == {"taskSupport": "optional"}
    assert lock["capabilities"]["tasks"] == {
        "cancel": {},
        "list": {},
        "requests": {"tools": {"call": {}}},
    }
    plain = SOURCE.read_text().replace("task: optional", "").replace("task: required", "")
    assert "tasks" not in surface(_from_text(plain))["capabilities"]


def _from_text(text: str) -> object:
    from mcpgen.pipeline import load_source_text

    loaded = load_source_text(text, "tasks.yaml", SOURCE.parent)
    assert loaded.manifest is not None
    return loaded.manifest


def test_diff_making_a_tool_required_is_breaking(tmp_path: Path) -> None:
    old = tmp_path / "old.yaml"
    new = tmp_path / "new.yaml"
    text = SOURCE.read_text()
    old.write_text(text)
    new.write_text(text.replace("task: optional", "task: required"))
    result = CliRunner().invoke(main, ["diff", str(old), str(new), "--format", "json"])
    changes = json.loads(result.output)
    found = [
        (c["level"], c["item"], c["path"])
        for c in changes["changes"]
        if c["path"].startswith("/execution")
    ]
    assert found == [("breaking", "tool:report", "/execution/taskSupport")], result.output


def test_inspect_shows_task_support() -> None:
    result = CliRunner().invoke(main, ["inspect", str(SOURCE)])
    assert "tool report: handlers/tools/report.py (ReportInput, task optional)" in result.output
    assert "tool quick: handlers/tools/quick.py (QuickInput)\n" in result.output
