"""A project's entry (``host_entry``) merged into a host's MCP config file: other servers
and keys kept, backed up first, unchanged when already there, untouched when not valid JSON."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpgen.host_entry import Entry, Host, Launcher, ProjectError, env_of, merge, render, runs_same

from .project import STDIO, Project, venv_bin

Json = Any


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


def names_project(existing: Json, project: Project | None) -> bool:
    """Whether ``existing`` starts ``project`` by a launcher naming its folder (``uvx --from
    ROOT``, ``ROOT/.venv``'s script, ``PYTHONPATH=ROOT/src``)."""
    if project is None or not isinstance(existing, Mapping):
        return False
    root, command = project.root, Path(str(existing.get("command")))
    venv = command.parent == venv_bin(root / ".venv") and command.stem == project.script
    source = env_of(existing).get("PYTHONPATH") == str(root / "src")
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
