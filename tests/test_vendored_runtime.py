"""The runtime every generated package carries: copied byte for byte, and declared exactly.

* every example's ``src/<pkg>/_runtime/`` holds exactly ``mcpgen/runtime``'s files, byte
  for byte (so the runtime tested here is the one that runs there);
* every module a generated package imports (its runtime, its generated files, its tests,
  lazily imported ones included) is the standard library, the package itself, or comes
  from a distribution its ``pyproject.toml`` declares; and every declared distribution is
  imported somewhere (nothing declared for nothing).
"""

from __future__ import annotations

import ast
import sys
import tomllib
from functools import cache
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from mcpgen.render import RUNTIME_DIR, runtime_files

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p for p in (ROOT / "generated_examples").iterdir() if p.is_dir())
# Imported only by features a manifest turns on, declared as optional extras then.
OPTIONAL = {
    "redis": "redis",
    "pydantic_monty": "pydantic-monty",
    "opentelemetry": "opentelemetry-sdk",
}


def package_of(example: Path) -> Path:
    [package] = [p for p in (example / "src").iterdir() if p.is_dir() and p.name.isidentifier()]
    return package


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_the_runtime_is_copied_byte_for_byte(example: Path) -> None:
    package = package_of(example)
    vendored = {
        p.relative_to(example).as_posix(): p.read_bytes()
        for p in (package / "_runtime").iterdir()
        if p.is_file()
    }
    expected = {k: v.encode() for k, v in runtime_files(package.name).items()}
    assert vendored == expected
    assert {Path(k).name for k in vendored} == {
        p.name for p in RUNTIME_DIR.iterdir() if p.suffix in (".py", ".json")
    }


TEST_SUPPORT = "_runtime/testing.py"  # what the generated tests import: test dependencies


def imported_modules(folder: Path, tests: bool) -> set[str]:
    """Top-level names of every absolute import in the Python files under ``folder`` (the
    runtime's test support counts as test code)."""
    found: set[str] = set()
    for path in folder.rglob("*.py"):
        if path.as_posix().endswith(TEST_SUPPORT) != tests and folder.name != "tests":
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found


def declared(example: Path) -> tuple[set[str], set[str]]:
    """(distributions the package needs to run, distributions its tests add)."""
    project = tomllib.loads((example / "pyproject.toml").read_text("utf-8"))["project"]
    run = {canonicalize_name(Requirement(r).name) for r in project["dependencies"]}
    test = {
        canonicalize_name(Requirement(r).name)
        for r in project.get("optional-dependencies", {}).get("test", [])
    }
    return run, test


@cache
def _distributions() -> dict[str, list[str]]:
    return dict(metadata.packages_distributions())


def distributions_of(module: str) -> set[str]:
    return {canonicalize_name(d) for d in _distributions().get(module, [])}


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_every_import_is_declared_and_every_declaration_imported(example: Path) -> None:
    package = package_of(example)
    run, test = declared(example)
    stdlib = sys.stdlib_module_names
    problems = []
    used: set[str] = set()
    scans = (
        (package, False, run),
        (package, True, run | test),
        (example / "tests", True, run | test),
    )
    for folder, tests, allowed in scans:
        for module in sorted(imported_modules(folder, tests)):
            if module in stdlib or module == package.name or module == "__future__":
                continue
            if module in OPTIONAL:
                continue  # imported inside the feature's function; an extra declares it
            owners = distributions_of(module)
            used |= owners
            if not owners & allowed:
                problems.append(
                    f"{folder.name} imports {module!r}, declared by none of {sorted(owners)}"
                )
    # a distribution the package declares but never imports (mcp-types is mcp's wire types,
    # imported as mcp_types; pyjwt as jwt; cryptography by pyjwt[crypto] and the tests)
    # typing-extensions: the models import it when they need TypeAliasType (Python 3.11)
    unused = sorted(run - used - {"cryptography", "typing-extensions"})
    assert not problems, problems
    assert not unused, f"declared but not imported: {unused}"
