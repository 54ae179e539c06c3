"""A generated project folder -> what a host needs to know about it (``describe``) and how
a host starts it (``launcher``), without importing the generated package."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mcpgen.host_entry import EnvVar, Launcher, ProjectError, env_vars, needed_env
from mcpgen.render.lock import wire
from mcpgen.runtime.settings import TRANSPORTS, offered

Json = Any


@dataclass(frozen=True)
class Project:
    root: Path
    distribution: str  # [project] name
    version: str
    description: str
    script: str  # the console script
    package: str  # the import package under src/
    server: dict[str, Json]  # _spec.json "server" (name, version, title, ...)
    tools: list[dict[str, Json]]  # tools/list as a client sees it
    prompts: list[dict[str, Json]]  # prompts/list definitions
    prompt_messages: dict[str, list[dict[str, Json]]]  # declarative prompt messages by name
    environment: list[EnvVar]
    transports: tuple[str, ...] = TRANSPORTS  # what it offers (``transports.offer``)
    meta: dict[str, Json] = field(default_factory=dict)  # pyproject.toml's [project]

    @property
    def name(self) -> str:  # what hosts key their entry by
        return str(self.server.get("name") or self.script)

    @property
    def title(self) -> str:
        return str(self.server.get("title") or self.name)

    def needed_env(self, transport: str = "stdio") -> list[EnvVar]:
        return needed_env(self.environment, transport)


def _read(path: Path, parse: Callable[[str], Json] = json.loads) -> Json:
    try:
        return parse(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ProjectError(f"{path}: cannot read: {exc}") from exc


def describe(path: Path) -> Project:
    """Read a generated project folder; ``ProjectError`` when it is not one."""
    root = Path(path).resolve()
    pyproject_path = root / "pyproject.toml"
    if not root.is_dir():
        raise ProjectError(f"{path}: not a folder")
    if not pyproject_path.is_file():
        raise ProjectError(f"{path}: no pyproject.toml (not a generated project)")
    meta = _read(pyproject_path, tomllib.loads).get("project") or {}
    scripts = meta.get("scripts") or {}
    if not scripts:
        raise ProjectError(f"{pyproject_path}: no [project.scripts] console script")
    script, target = next(iter(scripts.items()))
    package = str(target).split(":")[0].split(".")[0]
    spec_path = root / "src" / package / "_spec.json"
    if not spec_path.is_file():
        found = sorted((root / "src").glob("*/_spec.json"))
        if not found:
            raise ProjectError(f"{path}: no src/<package>/_spec.json (not a generated project)")
        spec_path, package = found[0], found[0].parent.name
    spec = _read(spec_path)
    server = dict(spec.get("server") or {})
    tools, prompts = _surface(root, spec_path.parent, spec)
    messages = {
        p["definition"]["name"]: list(p.get("messages") or [])
        for p in spec.get("prompts") or []
        if isinstance(p, dict) and isinstance(p.get("definition"), dict)
    }
    return Project(
        root=root,
        distribution=str(meta.get("name") or script),
        version=str(meta.get("version") or server.get("version") or "0.0.0"),
        description=str(meta.get("description") or server.get("description") or ""),
        script=str(script),
        package=package,
        server=server,
        tools=tools,
        prompts=prompts,
        prompt_messages=messages,
        environment=env_vars(spec.get("environment"), spec_path),
        transports=offered(spec),
        meta=meta,
    )


def _surface(
    root: Path, package: Path, spec: Json
) -> tuple[list[dict[str, Json]], list[dict[str, Json]]]:
    """(tools, prompts) as clients see them: from the surface lock, else ``_spec.json``."""
    lock = root / "mcp-surface.json"
    if lock.is_file():
        data = _read(lock)

        def listed(key: str) -> list[dict[str, Json]]:
            items = [e for e in data.get(key) or [] if isinstance(e, dict)]
            return [wire(e) for e in items if e.get("enabled", True) is not False]

        return listed("tools"), listed("prompts")

    mode = str(spec.get("mode") or "tools")

    def definitions(key: str) -> list[dict[str, Json]]:
        entries = [e for e in spec.get(key) or [] if isinstance(e, dict) and "definition" in e]
        if key == "tools" and mode != "tools":  # the operations are reached through the mode
            entries = [e for e in entries if "http" not in e]
        return [e["definition"] for e in entries if e.get("enabled", True)]

    tools = definitions("tools")
    if mode != "tools":
        modes = package / "_runtime" / "modes.json"
        tools += _read(modes).get(mode, []) if modes.is_file() else []
    return tools, definitions("prompts")


KINDS = ("venv", "python", "source", "path", "uvx")


def venv_bin(venv: Path) -> Path:
    return venv / ("Scripts" if sys.platform == "win32" else "bin")


def script_in(bindir: Path, script: str) -> Path | None:
    for name in (script, script + ".exe", script + "-script.py"):
        candidate = bindir / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def _import_error(
    python: str, module: str, env: dict[str, str], home: Path | None = None, find: bool = False
) -> str | None:
    """None when ``python`` imports ``module`` (from under ``home`` when given), else why
    not; ``find``: without running the package."""
    code = f"import {module}; print({module}.__file__)"
    if find:
        code = f"import importlib.util as u, sys; s = u.find_spec({module!r}); "
        code += f'print(s.origin) if s else sys.exit("No module named {module!r}")'
    try:
        done = subprocess.run(
            [python, "-c", code],
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    lines = done.stderr.strip().splitlines()
    if done.returncode != 0:
        return lines[-1] if lines else f"exit {done.returncode}"
    found = Path((done.stdout.strip().splitlines() or ["?"])[-1]).resolve()
    return None if home is None or found.is_relative_to(home) else f"it imports {found}"


def _not_ours(project: Project, script: str, own: bool) -> str | None:
    """None when ``script``'s ``#!`` interpreter imports the package from this ``src``, else
    why not; unless ``own``, only another folder's source is refused."""
    try:
        with open(script, "rb") as file:
            first = file.readline(1024)
    except OSError as exc:
        return str(exc)
    words = first[2:].decode(errors="replace").split() if first.startswith(b"#!") else []
    if not words:
        return "no #! line names its interpreter" if own else None
    home = project.root / "src" / project.package
    why = _import_error(words[0], project.package, {}, home, find=True)
    elsewhere = why is not None and why.startswith("it imports") and "-packages" not in why
    return why if own or elsewhere else None


STDIO = ["--transport", "stdio"]  # whatever the manifest's default transport is


def require_stdio(project: Project) -> None:  # what hosts start it over
    if "stdio" not in project.transports:
        offer = project.transports
        raise ProjectError(
            f"{project.root}: the server offers no stdio transport, only {', '.join(offer)}: "
            f"start it ({project.script} --transport {offer[0]}) and use its URL"
        )


def launcher(
    project: Project,
    python: Path | None = None,
    kind: str | None = None,
    stdio: bool = True,
    own: Path | None = None,
) -> Launcher:
    """The command a host runs, first that works of: ``python``'s venv (script, installed
    package, source on PYTHONPATH), the ``.venv``, the script on PATH, ``uvx --from``;
    ``kind`` (of ``KINDS``) forces one. ``own`` (call, list, dev): only what runs this
    folder's source, else ``own`` runs the source. ``stdio``: told to speak stdio."""
    if stdio:
        require_stdio(project)
        chosen = launcher(project, python, kind, False, own)
        return replace(chosen, args=[*chosen.args, *STDIO])
    tried: list[str] = []
    if python is None and (own is not None or kind in ("python", "source")):  # the venv's
        bindir = venv_bin(project.root / ".venv")
        python = script_in(bindir, "python")
        if python is None and own is None:
            raise ProjectError(
                f"--launcher {kind} runs an interpreter: give it with --python FILE (the "
                f"project has no {bindir / 'python'})"
            )
    if python is not None:
        found = _from_python(project, python, kind, own is not None)
        if isinstance(found, Launcher):
            return found
        tried.append(f"{python} cannot run {project.package} ({found})")
    if kind in (None, "venv"):
        script = script_in(venv_bin(project.root / ".venv"), project.script)
        why = _not_ours(project, str(script), True) if script and own else None
        if script is not None and not why:
            return Launcher(str(script), kind="venv", note=f"the project's venv script {script}")
        tried.append(f"{script} skipped: {why}" if why else f"no .venv script {project.script}")
    if kind in (None, "path"):
        on_path = shutil.which(project.script)
        absolute = str(Path(on_path).resolve()) if on_path else ""
        why = _not_ours(project, absolute, own is not None) if on_path else None
        if on_path is not None and not why:
            return Launcher(absolute, kind="path", note=f"{project.script} on PATH: {absolute}")
        tried.append(f"{absolute} skipped: {why}" if why else f"no {project.script} on PATH")
    if kind in (None, "uvx"):
        uvx = shutil.which("uvx")
        note = f"uvx runs the project from {project.root} in a cached environment"
        note += f" ({'; '.join(tried)})" if tried else ""
        if uvx is None:
            note += (
                " (uvx is not installed here: the host cannot start it until uv is; or "
                f"pip install -e {shlex.quote(str(project.root))} and run this again)"
            )
        chosen = Launcher(
            str(Path(uvx).resolve()) if uvx else "uvx",
            ["--from", str(project.root), project.script],
            kind="uvx",
            note=note,
        )
        if own is not None and uvx is None:
            chosen = launcher(project, own, "source", False)
        if own is not None:  # what runs instead (install says it in its note)
            _instead([t for t in tried if " skipped: " in t], chosen)
        return chosen
    raise ProjectError(
        f"no {kind} launcher for {project.root}: {'; '.join(tried)}: install the project "
        f"(pip install -e {project.root}) or uv (for uvx)"
    )


def _instead(skipped: list[str], chosen: Launcher) -> None:
    """Name the scripts passed over on stderr, and what runs instead, as a shell line."""
    shown = " ".join([*(f"{k}={v}" for k, v in chosen.env.items()), *chosen.argv])
    if skipped:
        print(f"note: {'; '.join(skipped)}; running {shown} instead", file=sys.stderr)


def _from_python(project: Project, python: Path, kind: str | None, own: bool) -> Launcher | str:
    """How ``python`` runs the project, or why it cannot (``own``: see ``_not_ours``)."""
    python = python if python.is_absolute() else Path.cwd() / python
    if not python.exists():
        raise ProjectError(f"{python}: no such interpreter")
    script, skipped = script_in(python.parent, project.script), None
    if kind in (None, "venv") and script is not None:
        skipped = _not_ours(project, str(script), True) if own else None
        if not skipped:
            return Launcher(str(script), kind="venv", note=f"the venv script {script}")
    why, src = "not tried", project.root / "src"
    for option, env in (("python", {}), ("source", {"PYTHONPATH": str(src)})):
        if kind in (None, option):
            why = _import_error(str(python), project.package, env, src if own else None) or ""
            if not why:
                where = f" from the source folder {src}" if env else ""
                note = f"{python} -m {project.package}{where}"
                chosen = Launcher(str(python), ["-m", project.package], env, option, note)
                _instead([f"{script} skipped: {skipped}"] if skipped else [], chosen)
                return chosen
    return why
