"""Where ``mcpgen diff`` reads OLD and NEW from (the forms its help lists), each made a
surface lock (a surface file: a JSON object with ``mcpSurface``); else :class:`SourceError`.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from mcpgen.render.lock import VERSION, surface

from ..load.limits import MAX_DOCUMENT_BYTES
from ..problems import first_problem
from .changes import COLLECTIONS, Json

LOCK_NAME = "mcp-surface.json"
MARKER = b'"mcpSurface"'
GIT_TIMEOUT = 60.0


class SourceError(Exception):
    """OLD or NEW cannot be read: the message is one line, for the user."""


def load(spec: str, cwd: Path | None = None) -> dict[str, Json]:
    """The surface lock that ``spec`` names (see the module docstring)."""
    here = cwd or Path.cwd()
    if spec.startswith("git:"):
        return _from_git(spec, here)
    path = here / spec  # an absolute spec stays itself
    if path.is_dir():
        lock = path / LOCK_NAME
        if not lock.is_file():
            raise SourceError(
                f"{spec}: a folder without {LOCK_NAME} (build it with mcpgen, or name a "
                "manifest or surface file)"
            )
        return _from_file(lock, spec if spec.endswith("/") else spec + "/" + LOCK_NAME)
    if not path.exists():
        raise SourceError(f"{spec}: file not found")
    return _from_file(path, spec)


def load_both(old: str, new: str) -> tuple[dict[str, Json], dict[str, Json]]:
    """The surfaces of OLD and NEW, loaded in parallel when a fork and a second core can."""
    import multiprocessing
    import os
    from concurrent.futures import ProcessPoolExecutor

    forks = "fork" in multiprocessing.get_all_start_methods() and (os.cpu_count() or 1) > 1
    if not forks or _surface_file(old) or _surface_file(new):
        return load(old), load(new)  # a lock reads in a fraction of a second
    fork = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=1, mp_context=fork) as pool:
        before = pool.submit(load, old)
        after = load(new)
        return before.result(), after


def _surface_file(spec: str) -> bool:
    """Whether ``spec`` names a surface lock, as far as a cheap look tells."""
    if spec.startswith("git:"):
        return spec.endswith(LOCK_NAME)
    path = Path(spec)
    try:
        if path.is_dir():
            return True
        with path.open("rb") as file:
            return MARKER in file.read(16_384)
    except OSError:
        return True  # load says what is wrong with it


def _too_big(shown: str, size: int) -> None:
    if size > MAX_DOCUMENT_BYTES:
        raise SourceError(f"{shown}: larger than the limit of {MAX_DOCUMENT_BYTES} bytes")


def _decode(raw: bytes, shown: str) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise SourceError(f"{shown}: not valid UTF-8") from None


def _from_file(path: Path, shown: str) -> dict[str, Json]:
    try:
        _too_big(shown, path.stat().st_size)
        raw = path.read_bytes()
    except OSError as exc:
        raise SourceError(f"{shown}: cannot read file: {exc.strerror or exc}") from None
    from mcpgen.pipeline import load_manifest

    return _as_lock(raw, shown) or _surface_of(load_manifest(path), shown)


def _as_lock(raw: bytes, shown: str) -> dict[str, Json] | None:
    """The lock in ``raw``, or None when it is not a surface file (a manifest, a spec)."""
    if MARKER not in raw:  # cheap: a 13 MB spec is not parsed twice
        return None
    try:
        data = json.loads(_decode(raw, shown))
    except json.JSONDecodeError as exc:
        if raw.lstrip()[:1] != b"{":
            return None  # YAML that mentions mcpSurface: a manifest
        raise SourceError(f"{shown}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    if not isinstance(data, dict) or "mcpSurface" not in data:
        return None
    check(data, shown)
    return data


def check(data: dict[str, Json], shown: str) -> None:
    """Refuse a surface file this version cannot compare (one line)."""
    version = data.get("mcpSurface")
    if version != VERSION or isinstance(version, bool):
        raise SourceError(
            f"{shown}: mcpSurface {json.dumps(version)} is not supported "
            f"(this mcpgen reads version {VERSION})"
        )
    for key in ("server", "capabilities", "totals"):
        if key in data and not isinstance(data[key], dict):
            raise SourceError(f"{shown}: {key} must be an object")
    for key, (id_key, _) in COLLECTIONS.items():
        items = data.get(key, [])
        if not isinstance(items, list):
            raise SourceError(f"{shown}: {key} must be a list")
        seen: set[str] = set()
        for index, entry in enumerate(items):
            if not isinstance(entry, dict) or not isinstance(entry.get(id_key), str):
                raise SourceError(f"{shown}: {key}[{index}] needs a string {id_key!r}")
            if entry[id_key] in seen:
                raise SourceError(f"{shown}: {key} lists {entry[id_key]!r} twice")
            seen.add(entry[id_key])


def _surface_of(loaded: Any, shown: str) -> dict[str, Json]:
    """The surface of a loaded manifest or spec; its first error otherwise."""
    if loaded.manifest is None:
        raise SourceError(first_problem(loaded.problems, shown))
    return surface(loaded.manifest)


def _git(args: list[str], cwd: Path, spec: str) -> bytes:
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, timeout=GIT_TIMEOUT, check=False
        )
    except FileNotFoundError:
        raise SourceError(f"{spec}: git is not installed") from None
    except subprocess.TimeoutExpired:
        raise SourceError(f"{spec}: git {args[0]} took longer than {GIT_TIMEOUT:.0f} s") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = message[0] if message else f"git {args[0]} failed ({done.returncode})"
        raise SourceError(f"{spec}: {reason.removeprefix('fatal: ')}")
    return done.stdout


def _from_git(spec: str, cwd: Path) -> dict[str, Json]:
    ref, sep, name = spec[len("git:") :].partition(":")
    if not sep or not ref or not name or ref.startswith("-"):  # (-x: an option to git show)
        raise SourceError(f"{spec}: expected git:REF:PATH, e.g. git:origin/main:mcp-surface.json")
    top = Path(_git(["rev-parse", "--show-toplevel"], cwd, spec).decode().strip())
    wanted = cwd / name
    try:
        relative = wanted.resolve().relative_to(top.resolve())
    except ValueError:
        raise SourceError(f"{spec}: {name} is outside the repository at {top}") from None
    raw = _git(["show", f"{ref}:{relative.as_posix()}"], cwd, spec)
    _too_big(spec, len(raw))
    lock = _as_lock(raw, spec)
    if lock is not None:
        return lock
    from mcpgen.pipeline import load_source_text

    text = _decode(raw, spec)  # as if a file in the working tree's folder of PATH
    suffix = Path(name).suffix
    file = spec + ("" if spec.endswith(suffix) else suffix)
    return _surface_of(load_source_text(text, file, wanted.parent), spec)
