"""A project and its launcher -> an entry merged into a host's MCP config file (``HOSTS``):
other servers and keys kept, backed up first, unchanged when already there, untouched when
not valid JSON."""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .project import STDIO, EnvVar, Launcher, Project, ProjectError, env_vars, needed_env, venv_bin

Json = Any
PLACEHOLDER = "<fill in {name}>"
_PLACEHOLDER = re.compile(r"^<fill in [A-Za-z_][A-Za-z0-9_]*>$")


@dataclass(frozen=True)
class Host:
    id: str
    title: str
    key: str  # the object holding the servers: "mcpServers" or "servers"
    stdio_type: bool  # entries carry "type": "stdio"
    inputs: bool = False  # secrets left open become ${input:...} prompts (VS Code)


HOSTS: dict[str, Host] = {
    h.id: h
    for h in (
        Host("claude-desktop", "Claude Desktop", "mcpServers", stdio_type=False),
        Host("claude-code", "Claude Code", "mcpServers", stdio_type=True),
        Host("cursor", "Cursor", "mcpServers", stdio_type=False),
        Host("vscode", "VS Code", "servers", stdio_type=True, inputs=True),
        Host("mcp-json", "mcp.json", "mcpServers", stdio_type=False),
    )
}


def config_path(
    host: Host, platform: str | None = None, environ: Mapping[str, str] | None = None
) -> Path:
    """Where ``host`` keeps its user-level MCP config on ``platform`` (``sys.platform``)."""
    platform = platform or sys.platform
    env = os.environ if environ is None else environ
    home = Path(env.get("HOME") or env.get("USERPROFILE") or Path.home())
    appdata = Path(env["APPDATA"]) if env.get("APPDATA") else home / "AppData" / "Roaming"
    xdg = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config"
    # the desktop apps keep it in the OS's folder of per-user application data
    apps = {"darwin": home / "Library" / "Application Support", "win32": appdata}.get(platform, xdg)
    return {
        "claude-desktop": apps / "Claude" / "claude_desktop_config.json",
        "vscode": apps / "Code" / "User" / "mcp.json",
        "claude-code": Path(env.get("CLAUDE_CONFIG_DIR") or home) / ".claude.json",
        "cursor": home / ".cursor" / "mcp.json",
    }.get(host.id, Path.cwd() / "mcp.json")


@dataclass
class Entry:
    """The server's entry for one host, and what the user still has to fill in."""

    name: str
    body: dict[str, Json]
    inputs: list[dict[str, Json]] = field(default_factory=list)  # VS Code prompts
    to_fill: list[str] = field(default_factory=list)  # placeholders left in env
    prompted: list[str] = field(default_factory=list)  # VS Code asks for these itself


def _input_id(text: str) -> str:
    """A VS Code input id: lower case, digits and dashes only (``a}`` must not end a ref)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower())


def build_entry(
    host: Host,
    server: str,
    needed: list[EnvVar],
    run: Launcher,
    values: Mapping[str, str] | None = None,
    existing: Mapping[str, Json] | None = None,
) -> Entry:
    """The entry; each needed variable from ``values`` (``--env``), else the existing entry's
    filled-in value, else its default, else a placeholder (VS Code: an ``${input:...}``)."""
    given, old = dict(values or {}), _env(existing)
    env: dict[str, str] = dict(run.env)
    entry = Entry(server, {})
    for var in needed:
        if var.name in given:
            env[var.name] = given.pop(var.name)
        elif isinstance(old.get(var.name), str) and not _PLACEHOLDER.match(old[var.name]):
            env[var.name] = old[var.name]
        elif var.default is not None and not var.secret:
            env[var.name] = var.default
        elif host.inputs:
            ident, text = _input_id(var.name), var.description or var.name
            env[var.name] = "${input:" + ident + "}"
            prompt = {"type": "promptString", "id": ident, "description": text}
            entry.inputs.append({**prompt, "password": var.secret})
            entry.prompted.append(var.name)
        else:
            env[var.name] = PLACEHOLDER.format(name=var.name)
            entry.to_fill.append(var.name)
    env.update(given)  # extra --env variables the project does not list
    entry.body = {"type": "stdio"} if host.stdio_type else {}
    entry.body.update(command=run.command, args=list(run.args))
    if env:
        entry.body["env"] = dict(sorted(env.items()))
    return entry


def _env(entry: Json) -> Mapping[str, Json]:
    env = entry.get("env") if isinstance(entry, Mapping) else None
    return env if isinstance(env, Mapping) else {}


def runs_same(existing: Json, run: Launcher) -> bool:
    """Whether ``existing`` starts what ``run`` starts (command, args, launcher env): only
    then is it this project's entry, whose filled-in ``env`` values are kept."""
    return (
        isinstance(existing, Mapping)
        and existing.get("command") == run.command
        and existing.get("args", []) == list(run.args)
        and all(_env(existing).get(name) == value for name, value in run.env.items())
    )


def names_project(existing: Json, project: Project | None) -> bool:
    """Whether ``existing`` starts ``project`` by a launcher naming its folder (``uvx --from
    ROOT``, ``ROOT/.venv``'s script, ``PYTHONPATH=ROOT/src``)."""
    if project is None or not isinstance(existing, Mapping):
        return False
    root, command = project.root, Path(str(existing.get("command")))
    venv = command.parent == venv_bin(root / ".venv") and command.stem == project.script
    source = _env(existing).get("PYTHONPATH") == str(root / "src")
    args = existing.get("args")
    return isinstance(args, list) and args in (
        ["--from", str(root), project.script, *STDIO] if command.name == "uvx" else None,
        STDIO if venv else None,
        ["-m", project.package, *STDIO] if source else None,
    )


def replaceable(
    path: Path, host: Host, name: str, run: Launcher, force: bool, project: Project | None = None
) -> Json:
    """The entry ``name`` in the config at ``path`` when it is this project's; None when
    there is none or ``--force`` replaces another's (its env dropped); else ``ProjectError``."""
    servers = read_config(path).get(host.key)
    existing = servers.get(name) if isinstance(servers, dict) else None
    if existing is None or runs_same(existing, run) or names_project(existing, project):
        return existing
    if not force:
        raise ProjectError(
            f"{path}: {name!r} already runs {describe_entry(existing)!r}, not this project; "
            "use --name for another entry, or --force to replace it (its env is not kept)"
        )
    return None


def describe_entry(existing: Json) -> str:
    """One line naming what an entry runs (never its env: it may hold secrets)."""
    if not isinstance(existing, Mapping):
        return "a non-object entry"
    if "command" not in existing:
        return "an entry without a command" + (" (a URL)" if "url" in existing else "")
    args = existing.get("args")
    shown = [str(existing["command"]), *(map(str, args) if isinstance(args, list) else [])]
    return " ".join(shown)[:200]


def readme_snippets(server: str, script: str, environment: list[Json]) -> dict[str, str]:
    """The entries ``install`` writes with nothing given, by host id, for the README."""
    needed = needed_env(env_vars(environment, "_spec.json"), "stdio")
    run = Launcher(f"/ABSOLUTE/PATH/TO/.venv/bin/{script}")
    return {
        host: render(merge(HOSTS[host], {}, build_entry(HOSTS[host], server, needed, run))).strip()
        for host in ("claude-desktop", "vscode")
    }


def read_config(path: Path) -> dict[str, Json]:
    """The config as an object ({} when missing or empty); else ``ProjectError``."""
    try:
        text = path.read_text(encoding="utf-8-sig")  # a BOM (Windows Notepad) is read past
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ProjectError(f"{path}: cannot read: {exc} (file left untouched)") from exc
    if not text.strip():
        return {}
    from mcpgen.load import load_text
    from mcpgen.problems import InputError, Problems, first_problem

    try:  # mcpgen's loader: a repeated key, infinity, deep nesting would not be written back
        data = load_text(text, str(path), path.parent, json_first=True, decoded=True).data
    except InputError as exc:
        why = first_problem(Problems(exc.problems), str(path))
        advice = "fix it or use --print and paste the entry yourself"
        raise ProjectError(f"{why}; {advice} (file left untouched)") from None
    if not isinstance(data, dict):
        raise ProjectError(f"{path}: the top level is not a JSON object (file left untouched)")
    return data


def merge(host: Host, data: dict[str, Json], entry: Entry) -> dict[str, Json]:
    """``data`` with ``entry`` put in (other servers, inputs and keys kept, key order too)."""
    servers = data.get(host.key, {})
    if not isinstance(servers, dict):
        raise ProjectError(f"{host.key!r} in the config is not an object (file left untouched)")
    inputs = data.get("inputs", [])
    if entry.inputs and not isinstance(inputs, list):
        raise ProjectError("'inputs' in the config is not a list (file left untouched)")
    known = {i.get("id") for i in inputs if isinstance(i, dict)} if entry.inputs else set()
    body, prompts = _own_prompts(servers, known, entry)
    merged = {**data, host.key: {**servers, entry.name: body}}
    if prompts:
        merged["inputs"] = [*inputs, *(i for i in prompts if i["id"] not in known)]
    return merged


_INPUT_REF = re.compile(r"\$\{input:([^}]+)\}")


def _own_prompts(
    servers: dict[str, Json], known: set[Json], entry: Entry
) -> tuple[Json, list[dict[str, Json]]]:
    """The entry's body and prompts, one renamed ``<server>-<id>`` (``-2``...) when its id is
    another server's or an orphan's (VS Code keeps one answer, maybe a secret, per id)."""
    run = Launcher(entry.body["command"], list(entry.body.get("args", [])))
    others = {n: o for n, o in servers.items() if n != entry.name or not runs_same(o, run)}
    own = {} if entry.name in others else servers.get(entry.name)  # this project's entry
    taken = set(_INPUT_REF.findall(json.dumps(others)))
    taken |= known - set(_INPUT_REF.findall(json.dumps(own)))
    env = dict(entry.body.get("env") or {})
    prompts = []
    for prompt in entry.inputs:
        ident = prompt["id"]
        if ident in taken:
            ident = base = _input_id(f"{entry.name}-{ident}")
            number = 1
            while ident in taken:
                number += 1
                ident = f"{base}-{number}"
            env = {
                k: v.replace(f"${{input:{prompt['id']}}}", f"${{input:{ident}}}")
                for k, v in env.items()
            }
        prompts.append({**prompt, "id": ident})
    return ({**entry.body, "env": env} if env else entry.body), prompts


def _backup(path: Path) -> Path:
    """A copy at ``NAME.bak`` (or ``.bak.1``, ...: none overwritten), no more readable."""
    backup, number = path.with_name(path.name + ".bak"), 0
    while backup.exists():
        number += 1
        backup = path.with_name(f"{path.name}.bak.{number}")
    fd = os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL, path.stat().st_mode & 0o777)
    with os.fdopen(fd, "wb") as handle:
        handle.write(path.read_bytes())
    return backup


def render(data: Json) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class Outcome:
    changed: bool
    backup: Path | None


def write_config(path: Path, host: Host, entry: Entry) -> Outcome:
    """Merge ``entry`` into the file at ``path`` (backed up, replaced atomically)."""
    data = read_config(path)
    merged = merge(host, data, entry)
    if path.exists() and merged == data:
        return Outcome(False, None)
    path.parent.mkdir(parents=True, exist_ok=True)
    return Outcome(True, write_atomic(path, render(merged), backup=True))


def write_atomic(path: Path, text: str, backup: bool = False) -> Path | None:
    """Replace the file (a link's target) with ``text`` atomically, its mode kept (0o600 when
    new), after a ``backup`` whose path is returned; a read-only file is refused."""
    target = path.resolve()
    mode = target.stat().st_mode & 0o777 if target.exists() else 0o600
    if not mode & 0o200:
        raise ProjectError(f"{path}: read-only (file left untouched): make it writable first")
    try:  # a value given in another encoding: its bytes read as lone surrogates
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start : exc.end]
        raise ProjectError(f"{path}: {bad!r} is not UTF-8 text (file left untouched)") from None
    saved, temp = None, ""
    try:
        saved = _backup(path) if backup and path.exists() else None
        fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(temp, mode)
        os.replace(temp, target)
    except BaseException as exc:
        if temp:
            Path(temp).unlink(missing_ok=True)
        if isinstance(exc, OSError):  # a link to a folder gone, a read-only folder, a full disk
            where = Path(exc.filename).parent if exc.filename else target.parent
            raise ProjectError(f"{path}: cannot write in {where}: {exc.strerror}") from None
        raise
    return saved
