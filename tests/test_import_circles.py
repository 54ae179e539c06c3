"""The generator's stages import each other one way (issue 29: load -> check -> model ->
render -> format -> write, ``pipeline`` above them, the OpenAPI front end among them): no
module of theirs is in a circle of imports, counting imports inside functions and under
``TYPE_CHECKING`` (a reader follows those too), nor imports a command built on them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import mcpgen

ROOT = Path(mcpgen.__file__).parent
STAGES = ("load", "check", "openapi", "model", "render", "format", "pipeline", "vendoring", "cache")
# the commands built on the stages (surface: `mcpgen diff`): no stage imports them (issue 29)
COMMANDS = ("hosts", "cli", "health", "surface")
# still importing each other (being untangled apart)
TANGLED = {"mcpgen.openapi.one_way", "mcpgen.openapi.plans", "mcpgen.openapi.schema"}


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _graph() -> dict[str, set[str]]:
    """Module -> the mcpgen modules it imports (the runtime apart: its own test)."""
    files = {_module(p): p for p in ROOT.rglob("*.py") if "runtime" not in p.parts}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, *([node.module] if node.module else [])])
                found.update(
                    f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names
                )
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
        graph[name] = {f for f in found if f in files and f != name}
    return graph


def _own(graph: dict[str, set[str]], part: str) -> set[str]:
    return {n for n in graph if n == f"mcpgen.{part}" or n.startswith(f"mcpgen.{part}.")}


@pytest.mark.parametrize("stage", STAGES)
def test_a_stage_imports_no_command(stage: str) -> None:
    graph = _graph()
    commands = set().union(*(_own(graph, c) for c in COMMANDS))
    for name in sorted(_own(graph, stage)):
        assert not graph[name] & commands, f"{name} imports {sorted(graph[name] & commands)}"


@pytest.mark.parametrize("stage", STAGES)
def test_a_stage_is_in_no_circle_of_imports(stage: str) -> None:
    graph = _graph()
    own = _own(graph, stage)
    assert own, stage
    # what the stage's modules reach must not reach them back
    for name in sorted(own - TANGLED):
        reached: set[str] = set()
        todo = list(graph[name])
        while todo:
            other = todo.pop()
            if other not in reached:
                reached.add(other)
                todo += graph[other]
        back = sorted(n for n in reached if name in graph[n])
        assert name not in reached, f"{name} is imported back (by {back}) by what it imports"
