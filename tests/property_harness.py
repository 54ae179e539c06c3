"""The manifest -> code promise, checked on one case at a time and on a batch of builds.

A case is a manifest (and maybe the OpenAPI document it includes) in its own folder. It is
*refused* when ``mcpgen validate`` exits 2 and every error names the file, a line and a
field; *built* when validate exits 0 and ``mcpgen build`` writes a project whose Python
compiles and passes ``ruff check`` and ``black --check`` (with the project's settings);
the batch step then runs ``mypy --strict`` once over every built project (with each
project's own mypy settings) and imports each server in one subprocess, listing what it
serves in memory against its ``mcp-surface.json``.
Anything else is *broken*: a bug in mcpgen.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from mcpgen.cli import main

PROBE = Path(__file__).with_name("property_probe.py")
MANIFEST, API = "manifest.yaml", "api.yaml"
_ERROR_LINE = re.compile(
    r"^(?P<file>manifest\.yaml|api\.yaml):(?P<line>[1-9][0-9]*):(?P<column>[0-9]+): error: (?P<rest>.+)$"
)


class Broken(AssertionError):
    """The promise does not hold for a case."""


@dataclass
class Built:
    folder: Path  # the case folder (manifest.yaml, api.yaml, out/)
    package: str

    @property
    def out(self) -> Path:
        return self.folder / "out"


def write_case(folder: Path, manifest: Any, api: Any | None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    dump = {"allow_unicode": True, "sort_keys": False, "width": 1000}
    (folder / MANIFEST).write_text(yaml.safe_dump(manifest, **dump), encoding="utf-8")
    if api is not None:
        (folder / API).write_text(yaml.safe_dump(api, **dump), encoding="utf-8")


def _cli(folder: Path, *args: str) -> tuple[int, str, str]:
    previous = Path.cwd()
    os.chdir(folder)
    try:
        result = CliRunner().invoke(main, list(args), env={"CI": "1", "MCPGEN_DEBUG": ""})
    finally:
        os.chdir(previous)
    return result.exit_code, result.stdout, result.stderr


def error_kind(message: str) -> str:
    """A message with its particulars (quoted names, numbers) blanked: the kind of refusal."""
    kind = re.sub(r"(?<!\w)'(?:[^'\\]|\\.)*'(?!\w)|\"(?:[^\"\\]|\\.)*\"", "…", message)
    kind = re.sub(r"\[\d+\]|\b\d+\b", "N", kind)
    kind = kind.split(" (", 1)[0]
    return kind[:80]


def validate(folder: Path) -> list[str] | None:
    """None when validate accepts the case, else the kinds of its (located) errors."""
    code, out, err = _cli(folder, "validate", MANIFEST)
    text = out + err
    if "Traceback" in text or "internal error" in text or code not in (0, 2):
        raise Broken(f"validate exited {code}:\n{text}")
    if code == 0:
        return None
    lines = [line for line in err.splitlines() if ": error: " in line]
    if not lines:
        raise Broken(f"validate refused without an error line:\n{err}")
    for line in lines:
        if not _ERROR_LINE.match(line):
            raise Broken(f"an error without file:line:column: {line!r}")
    code, out, _ = _cli(folder, "validate", "--format", "json", MANIFEST)
    problems = [p for p in json.loads(out)["problems"] if p["level"] == "error"]
    if code != 2 or len(problems) != len(lines):
        raise Broken(f"validate --format json disagrees with the text report: {out}")
    for problem in problems:
        if problem["file"] not in (MANIFEST, API) or problem["line"] < 1 or not problem["field"]:
            raise Broken(f"an error not located at a file, line and field: {problem}")
    return sorted({error_kind(p["message"]) for p in problems})


def build(folder: Path) -> Built:
    """Build an accepted case; its Python must compile and pass ruff and black (its own
    settings: ``pyproject.toml``)."""
    code, out, err = _cli(folder, "build", MANIFEST, "-o", "out")
    text = out + err
    if code != 0 or "Traceback" in text or "internal error" in text:
        raise Broken(f"validate passed but build exited {code}:\n{text}")
    found = sorted(p.parent.name for p in (folder / "out" / "src").glob("*/server.py"))
    if len(found) != 1:
        raise Broken(f"expected one package with a server.py, found {found}")
    built = Built(folder, found[0])
    for path in sorted(built.out.rglob("*.py")):
        if "_runtime" in path.parts:
            continue  # mcpgen's runtime, copied verbatim: its own suite compiles it
        try:
            compile(path.read_text(encoding="utf-8"), str(path), "exec")
        except SyntaxError as exc:
            raise Broken(f"{path.relative_to(folder)} does not compile: {exc}") from exc
    for tool in (["ruff", "check", "--no-cache", "."], ["black", "--check", "-q", "."]):
        done = subprocess.run(
            [sys.executable, "-m", *tool], cwd=built.out, capture_output=True, text=True
        )
        if done.returncode != 0:
            raise Broken(f"{' '.join(tool)} failed:\n{done.stdout}{done.stderr}")
    return built


# -- the batch: mypy --strict once over every build, then import and list -----------------
def _mypy_config(builds: list[Built], cache: Path) -> str:
    """One mypy config holding each project's own settings (they differ only per module)."""
    # one section per module pattern: mypy ignores the later sections of a file that
    # repeats one (every project has the same section for the runtime's optional extras)
    sections: dict[str, str] = {}
    globals_seen: set[str] = set()
    for item in builds:
        settings = tomllib.loads((item.out / "pyproject.toml").read_text("utf-8"))["tool"]["mypy"]
        overrides = settings.pop("overrides", [])
        globals_seen.add(json.dumps(settings, sort_keys=True))
        for override in overrides:
            modules = ",".join(override.pop("module"))
            body = "".join(f"{k} = {_ini(v)}\n" for k, v in override.items())
            if sections.setdefault(modules, body) != body:
                raise Broken(f"the projects' mypy settings for {modules} differ")
    if len(globals_seen) != 1:
        raise Broken(f"the projects' mypy settings differ: {sorted(globals_seen)}")
    shared = json.loads(globals_seen.pop())
    head = f"[mypy]\ncache_dir = {cache}\n" + "".join(
        f"{k} = {_ini(v)}\n" for k, v in shared.items()
    )
    return "\n".join([head, *(f"[mypy-{m}]\n{body}" for m, body in sections.items())])


def _ini(value: Any) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, list):
        return ",".join(map(str, value))
    return str(value)


def mypy(builds: list[Built], work: Path, cache: Path) -> dict[str, str]:
    """Package -> mypy's complaints, for the builds that fail ``mypy --strict``."""
    if not builds:
        return {}
    work.mkdir(parents=True, exist_ok=True)
    config = work / "mypy.ini"
    config.write_text(_mypy_config(builds, cache), encoding="utf-8")
    targets: list[str] = []
    for item in builds:
        targets.append(str(item.out / "src" / item.package))
        tests = work / "gentests" / f"{item.package}_tests"  # a unique module name per build
        shutil.copytree(item.out / "tests", tests, dirs_exist_ok=True)
        (tests / "__init__.py").write_text("", encoding="utf-8")
        targets.append(str(tests))
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(config), *targets],
        cwd=work,
        capture_output=True,
        text=True,
    )
    failed: dict[str, list[str]] = {}
    for line in done.stdout.splitlines():
        for item in builds:
            if f"/{item.package}/" in line or f"/{item.package}_tests/" in line:
                failed.setdefault(item.package, []).append(line)
                break
    if done.returncode != 0 and not failed:
        raise Broken(f"mypy failed outside any build:\n{done.stdout}{done.stderr}")
    return {package: "\n".join(lines) for package, lines in failed.items()}


def probe(builds: list[Built], timeout: float = 600) -> dict[str, str]:
    """Package -> why importing it or listing what it serves failed (see property_probe)."""
    if not builds:
        return {}
    args = [f"{item.package}={item.out}" for item in builds]
    done = subprocess.run(
        [sys.executable, str(PROBE), *args], capture_output=True, text=True, timeout=timeout
    )
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    reported = {r["package"]: r["error"] for r in results}
    missing = [item.package for item in builds if item.package not in reported]
    if missing:
        raise Broken(f"the probe said nothing about {missing}:\n{done.stderr[-3000:]}")
    return {package: error for package, error in reported.items() if error}


@dataclass
class Survey:
    """Every case of a run and what became of it."""

    cases: int = 0
    wild: int = 0  # cases drawn from the wild half (may hold what must be refused)
    refused: Counter[str] = field(default_factory=Counter)  # error kind -> cases
    refused_cases: int = 0
    built: list[Built] = field(default_factory=list)
    broken: list[tuple[Path, str]] = field(default_factory=list)

    def summary(self, sound: int) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "wild": self.wild,
            "refused": self.refused_cases,
            "built": len(self.built),
            "built_sound": sound,
            "broken": len(self.broken),
            "refused_by_kind": dict(self.refused.most_common()),
            "broken_cases": {str(folder): why.splitlines()[:3] for folder, why in self.broken},
        }
