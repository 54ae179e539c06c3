"""Issue 30, items 2, 11 and 14 (configuration): secrets that must never travel, attacked
through the commands that take a generated project elsewhere and the server's own
command line.

- 2: ``mcpgen install`` refuses to replace a host-config entry that runs something else
  (exit 2) unless ``--force``, and never carries that entry's ``env`` to this project;
- 11: ``mcpgen bundle`` leaves out dot files (``.env``, ``.git/``, ``.netrc``...) and links
  that leave the project;
- 14: a Redis URL with a password is refused on the command line (every user reads it in
  the process list) and taken from ``<PREFIX>REDIS_URL``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from sec_harness import WORKTREE, Built

from mcpgen.runtime.testing import free_port

pytestmark = [pytest.mark.security, pytest.mark.timeout(120)]
SECRET = "ghp_REAL_SECRET_0123456789"


def mcpgen(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpgen", *args],
        env={**os.environ, "PYTHONPATH": str(WORKTREE)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
    )


def install(project: Path, config: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return mcpgen(
        "install", "mcp-json", str(project), "--config", str(config),
        "--launcher", "source", "--python", sys.executable, *extra,
    )  # fmt: skip


# -- 2. install hands an entry's secrets to another project -----------------------------------


def test_2_install_refuses_to_take_over_another_programs_entry(
    target_built: Built, tmp_path: Path
) -> None:
    """The config's ``target`` entry runs another program with a real token in its env:
    installing this project (also named ``target``) exits 2 and leaves the file as it was;
    ``--name other`` onto an unrelated entry too; ``--force`` replaces the entry without
    the token."""
    config = tmp_path / "cfg.json"
    theirs = {
        "command": "/opt/other-project/.venv/bin/target",
        "args": ["--transport", "stdio"],
        "env": {"TARGET_API_HEADERKEY": SECRET, "TARGET_API_QUERYKEY": SECRET},
    }
    unrelated = {"command": "/usr/bin/other", "env": {"TARGET_API_HEADERKEY": SECRET}}
    before = json.dumps({"mcpServers": {"target": theirs, "other": unrelated}}, indent=2)
    config.write_text(before)
    refused = install(target_built.root, config)
    assert refused.returncode == 2, refused.stderr
    assert "--force" in refused.stderr and "Traceback" not in refused.stderr
    assert SECRET not in refused.stderr + refused.stdout
    assert config.read_text() == before
    renamed = install(target_built.root, config, "--name", "other")
    assert renamed.returncode == 2 and config.read_text() == before, renamed.stderr
    forced = install(target_built.root, config, "--force")
    assert forced.returncode == 0, forced.stderr
    entry = json.loads(config.read_text())["mcpServers"]["target"]
    assert entry["command"] == sys.executable and SECRET not in json.dumps(entry), entry
    assert json.loads(config.read_text())["mcpServers"]["other"] == unrelated


def test_2_install_keeps_what_the_user_filled_in_for_this_project(
    target_built: Built, tmp_path: Path
) -> None:
    """Its own entry is still updated in place, filled-in values kept (no --force)."""
    config = tmp_path / "mine.json"
    assert install(target_built.root, config).returncode == 0
    data = json.loads(config.read_text())
    data["mcpServers"]["target"]["env"]["TARGET_API_HEADERKEY"] = "k-filled"
    config.write_text(json.dumps(data))
    again = install(target_built.root, config)
    assert again.returncode == 0, again.stderr
    env = json.loads(config.read_text())["mcpServers"]["target"]["env"]
    assert env["TARGET_API_HEADERKEY"] == "k-filled"


# -- 11. bundle packs secrets and follows links ----------------------------------------------


def test_11_bundle_leaves_out_secrets_and_links_out_of_the_project(
    target_built: Built, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    shutil.copytree(target_built.root, project, ignore=shutil.ignore_patterns("__pycache__"))
    package = project / "src" / target_built.package
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "creds.json").write_text(f'{{"token": "{SECRET}-link"}}')
    (outside / "dir-secret.txt").write_text(f"{SECRET}-dirlink")
    planted = {
        ".env": f"API_KEY={SECRET}-env",
        ".env.production": f"API_KEY={SECRET}-envprod",
        ".git/config": f"[remote]\n url = https://u:{SECRET}-git@example.com/r",
        ".hg/hgrc": f"[auth]\n x.password = {SECRET}-hg",
        ".svn/entries": f"{SECRET}-svn",
        ".netrc": f"machine x login u password {SECRET}-netrc",
        "handlers/.npmrc": f"//registry/:_authToken={SECRET}-npmrc",
    }
    for name, text in planted.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(text)
    (package / "handlers" / "creds.json").symlink_to(outside / "creds.json")
    (package / "handlers" / "linked").symlink_to(outside, target_is_directory=True)
    (package / "handlers" / "data.txt").write_text("kept")
    (package / "handlers" / "alias.txt").symlink_to(package / "handlers" / "data.txt")
    output = tmp_path / "out.mcpb"
    done = mcpgen("bundle", str(project), "-o", str(output), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with zipfile.ZipFile(output) as bundle:
        names = bundle.namelist()
        everything = b"".join(bundle.read(name) for name in names)
    assert SECRET.encode() not in everything, [n for n in names if "/." in n or "creds" in n]
    assert not [n for n in names if any(part.startswith(".") for part in n.split("/"))], names
    prefix = f"src/{target_built.package}/handlers/"
    assert prefix + "data.txt" in names and prefix + "alias.txt" in names  # inside: kept
    warned = done.stderr
    for name in (".env", ".git/", ".netrc", "handlers/creds.json", "handlers/linked/"):
        assert name in warned, (name, warned)


def docker_context(root: Path) -> list[str]:
    """The files ``docker build`` would send from ``root``: those no line of its
    ``.dockerignore`` excludes (``**`` any folders, ``*`` and ``?`` within one name; a
    folder excluded excludes what is in it; no ``!`` exceptions are used here)."""
    import re

    def regex(pattern: str) -> re.Pattern[str]:
        out = ""
        for part in re.split(r"(\*\*/|\*\*|\*|\?)", pattern.strip("/")):
            out += {"**/": "(?:.*/)?", "**": ".*", "*": "[^/]*", "?": "[^/]"}.get(
                part, re.escape(part)
            )
        return re.compile(out + "$")

    lines = (root / ".dockerignore").read_text().splitlines()
    patterns = [regex(line) for line in lines if line.strip() and not line.startswith("#")]
    sent = []
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        prefixes = ["/".join(relative.split("/")[: i + 1]) for i in range(relative.count("/") + 1)]
        if path.is_file() and not any(p.match(x) for p in patterns for x in prefixes):
            sent.append(relative)
    return sent


def test_11_docker_build_context_leaves_out_dot_files(target_built: Built, tmp_path: Path) -> None:
    """The generated Dockerfile copies ``src/`` whole: the generated ``.dockerignore`` keeps
    ``.env``, ``.git/`` and other dot files out of the build context (so out of the image),
    and the ``.gitignore`` keeps ``.env`` files out of git."""
    project = tmp_path / "project"
    shutil.copytree(target_built.root, project, ignore=shutil.ignore_patterns("__pycache__"))
    package = project / "src" / target_built.package
    for name in (".env", ".env.local", ".git/config", ".netrc", "handlers/.pypirc"):
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(SECRET)
    (project / ".env").write_text(SECRET)
    sent = docker_context(project)
    assert f"src/{target_built.package}/server.py" in sent and "pyproject.toml" in sent
    assert [name for name in sent if "/." in "/" + name] == [], sent
    ignored = (project / ".gitignore").read_text().splitlines()
    assert ".env" in ignored and ".env.*" in ignored


# -- 14. the Redis password in the process list ---------------------------------------------


def start(built: Built, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", built.package, "--transport", "http"]
    command += ["--host", "127.0.0.1", "--port", str(free_port()), *args]
    return subprocess.run(
        command,
        env={**os.environ, "PYTHONPATH": str(built.src), **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_14_redis_password_is_refused_on_the_command_line(target_built: Built) -> None:
    """``--redis-url redis://:PW@...``: refused before anything starts, naming the variable
    to use instead, without echoing the password; the same URL in ``TARGET_REDIS_URL`` is
    taken (it gets as far as connecting: no Redis listens on port 1)."""
    url = "redis://:hunter2-pw@127.0.0.1:1/0"
    flag = start(target_built, "--redis-url", url)
    assert flag.returncode != 0
    assert "TARGET_REDIS_URL" in flag.stderr and "process list" in flag.stderr, flag.stderr
    assert "hunter2" not in flag.stderr + flag.stdout
    env = start(target_built, TARGET_REDIS_URL=url, TARGET_STATE_SECRET="s" * 40)
    # taken: it gets as far as connecting, or (a package without replicas planned) as far
    # as saying it carries no Redis backend
    taken = ("unreachable", "built without Redis")
    assert env.returncode != 0 and any(t in env.stderr for t in taken), env.stderr
    assert "process list" not in env.stderr and "hunter2" not in env.stderr + env.stdout
    for name in ("--public-url",):  # (--jwks-url and --introspection-url: OAuth servers)
        other = start(target_built, name, "https://u:hunter2-pw@example.com/x")
        assert other.returncode != 0 and "hunter2" not in other.stderr, (name, other.stderr)
