"""``mcpgen install HOST PROJECT``: configs written into a temporary home for every host,
checked for content, backup, idempotence and the servers already there; then a host-like
launcher reads the written config and starts the server from it exactly as a host would."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from hostkit import copy_example, fake_venv, private_copy

from mcpgen import host_entry as entries
from mcpgen.cli import main
from mcpgen.hosts import install as inst
from mcpgen.hosts.project import describe

pytestmark = pytest.mark.timeout(120)
HOSTS = sorted(entries.HOSTS)


def run_install(*args: str) -> Any:
    return CliRunner().invoke(main, ["install", *args], catch_exceptions=False)


def expected_path(host: str, home: Path, cwd: Path) -> Path:
    return {
        "claude-desktop": home / ".config" / "Claude" / "claude_desktop_config.json",
        "claude-code": home / ".claude.json",
        "cursor": home / ".cursor" / "mcp.json",
        "vscode": home / ".config" / "Code" / "User" / "mcp.json",
        "mcp-json": cwd / "mcp.json",
    }[host]


def test_config_locations_on_every_os(tmp_path: Path) -> None:
    home = tmp_path / "u"
    env = {"HOME": str(home), "APPDATA": str(home / "Roaming")}
    where = {
        (h, p): inst.config_path(entries.HOSTS[h], p, env)
        for h in ("claude-desktop", "vscode", "cursor", "claude-code")
        for p in ("darwin", "win32", "linux")
    }
    mac_support = home / "Library" / "Application Support"
    assert where["claude-desktop", "darwin"] == mac_support / "Claude/claude_desktop_config.json"
    assert where["claude-desktop", "win32"] == home / "Roaming/Claude/claude_desktop_config.json"
    assert where["claude-desktop", "linux"] == home / ".config/Claude/claude_desktop_config.json"
    assert where["vscode", "darwin"] == mac_support / "Code/User/mcp.json"
    assert where["vscode", "win32"] == home / "Roaming/Code/User/mcp.json"
    assert where["vscode", "linux"] == home / ".config/Code/User/mcp.json"
    assert {where["cursor", p] for p in ("darwin", "win32", "linux")} == {home / ".cursor/mcp.json"}
    assert where["claude-code", "linux"] == home / ".claude.json"
    custom = inst.config_path(
        entries.HOSTS["claude-code"], "linux", {**env, "CLAUDE_CONFIG_DIR": "/c"}
    )
    assert custom == Path("/c/.claude.json")
    xdg = inst.config_path(entries.HOSTS["vscode"], "linux", {**env, "XDG_CONFIG_HOME": "/x"})
    assert xdg == Path("/x/Code/User/mcp.json")


@pytest.mark.parametrize("host", HOSTS)
def test_install_writes_merges_backs_up_and_is_idempotent(
    host: str, home: Path, tmp_path: Path
) -> None:
    project = copy_example("shop", tmp_path)
    spec = entries.HOSTS[host]
    path = expected_path(host, home, tmp_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    before = {spec.key: {"other": {"command": "/bin/other", "args": ["x"]}}, "theme": "dark"}
    path.write_text(json.dumps(before, indent=4))

    first = run_install(host, str(project))
    assert first.exit_code == 0, first.output
    data = json.loads(path.read_text())
    entry = data[spec.key]["shop"]
    script = project / ".venv" / "bin" / "shop"
    assert entry["command"] == str(script) and Path(entry["command"]).is_absolute()
    assert entry["args"] == ["--transport", "stdio"]
    if host == "vscode":
        assert entry["type"] == "stdio"
        assert entry["env"] == {"SHOP_API_APIKEY": "${input:shop-api-apikey}"}
        assert data["inputs"] == [
            {
                "type": "promptString",
                "id": "shop-api-apikey",
                "description": "API key (apiKey)",
                "password": True,
            }
        ]
        assert "will ask for: SHOP_API_APIKEY" in first.output
    else:
        assert entry["env"] == {"SHOP_API_APIKEY": "<fill in SHOP_API_APIKEY>"}
        assert f"fill in before use, in {path}: SHOP_API_APIKEY" in first.output
        assert ("type" in entry) == (host == "claude-code")
    # what was there is kept, the old file backed up byte for byte
    assert data[spec.key]["other"] == before[spec.key]["other"]
    assert data["theme"] == "dark"
    backup = path.with_name(path.name + ".bak")
    assert json.loads(backup.read_text()) == before

    written = path.read_bytes()
    second = run_install(host, str(project))
    assert second.exit_code == 0, second.output
    assert "unchanged" in second.output
    assert path.read_bytes() == written
    assert not path.with_name(path.name + ".bak.1").exists()


def test_values_from_env_and_filled_in_placeholders_survive(home: Path, tmp_path: Path) -> None:
    project = copy_example("shop", tmp_path)
    path = expected_path("cursor", home, tmp_path)
    assert run_install("cursor", str(project)).exit_code == 0
    data = json.loads(path.read_text())
    data["mcpServers"]["shop"]["env"]["SHOP_API_APIKEY"] = "k-123"  # the user fills it in
    path.write_text(json.dumps(data))
    again = run_install("cursor", str(project))
    assert again.exit_code == 0 and "unchanged" in again.output
    assert json.loads(path.read_text())["mcpServers"]["shop"]["env"]["SHOP_API_APIKEY"] == "k-123"

    given = run_install("cursor", str(project), "--env", "SHOP_API_APIKEY=k-456", "--env", "X_Y=1")
    assert given.exit_code == 0, given.output
    env = json.loads(path.read_text())["mcpServers"]["shop"]["env"]
    assert env == {"SHOP_API_APIKEY": "k-456", "X_Y": "1"}
    assert "does not list X_Y" in given.output
    backup = json.loads(path.with_name("mcp.json.bak").read_text())  # the file as it was
    assert backup["mcpServers"]["shop"]["env"]["SHOP_API_APIKEY"] == "k-123"
    assert run_install("cursor", str(project), "--env", "SHOP_API_APIKEY=k-789").exit_code == 0
    assert path.with_name("mcp.json.bak.1").exists()  # earlier backups are never overwritten
    assert json.loads(path.with_name("mcp.json.bak").read_text()) == backup


def test_an_entry_whose_env_is_not_an_object_is_replaced_not_a_crash(
    home: Path, tmp_path: Path
) -> None:
    """An entry running the same command with ``"env": ["A=1"]`` was an internal error
    (``.items()`` of a list); its env is not read, the entry is written anew."""
    project = copy_example("shop", tmp_path)
    path = expected_path("cursor", home, tmp_path)
    assert run_install("cursor", str(project)).exit_code == 0
    data = json.loads(path.read_text())
    data["mcpServers"]["shop"]["env"] = ["SHOP_API_APIKEY=k-123"]
    path.write_text(json.dumps(data))
    again = run_install("cursor", str(project))
    assert again.exit_code == 0, again.output
    env = json.loads(path.read_text())["mcpServers"]["shop"]["env"]
    assert env["SHOP_API_APIKEY"] != "k-123" and "SHOP_API_APIKEY" in env


def test_a_config_starting_with_a_bom_is_read_and_written_back_without_it(
    home: Path, tmp_path: Path
) -> None:
    """Windows Notepad starts a UTF-8 file with a BOM: install refused such a config as
    not JSON. It is read past; the file written back is plain UTF-8 (RFC 8259 asks for no
    BOM), the original kept as the backup."""
    project = copy_example("calculator", tmp_path)
    path = expected_path("claude-desktop", home, tmp_path)
    path.parent.mkdir(parents=True)
    original = '\ufeff{"mcpServers": {"other": {"command": "x"}}}'.encode()
    path.write_bytes(original)
    result = run_install("claude-desktop", str(project))
    assert result.exit_code == 0, result.output
    assert not path.read_bytes().startswith(b"\xef\xbb\xbf")
    assert set(json.loads(path.read_text("utf-8"))["mcpServers"]) == {"other", "calculator"}
    assert path.with_name(path.name + ".bak").read_bytes() == original


def test_invalid_json_is_refused_and_left_untouched(home: Path, tmp_path: Path) -> None:
    project = copy_example("calculator", tmp_path)
    path = expected_path("claude-desktop", home, tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text('{"mcpServers": {"a": 1},}  // trailing comma\n')
    before = path.read_bytes()
    result = run_install("claude-desktop", str(project))
    assert result.exit_code == 2
    assert f"{path}:1:25: invalid JSON" in result.output and "Traceback" not in result.output
    assert path.read_bytes() == before
    assert not list(path.parent.glob("*.bak*"))
    for name, raw in (("latin1.json", b'{"a": "caf\xe9"}'), ("deep.json", b"[" * 10**5)):
        odd = path.parent / name  # not UTF-8; nested past the parser's recursion limit
        odd.write_bytes(raw)
        result = run_install("claude-desktop", str(project), "--config", str(odd))
        assert result.exit_code == 2, result.output
        assert f"{odd}:" in result.output and "left untouched" in result.output
        assert odd.read_bytes() == raw
    wrong = path.parent / "list.json"
    wrong.write_text('{"mcpServers": []}')
    result = run_install("claude-desktop", str(project), "--config", str(wrong))
    assert result.exit_code == 2 and "not an object" in result.output
    assert wrong.read_text() == '{"mcpServers": []}'


@pytest.mark.parametrize("number", ["1e400", "-1e400", "NaN", "Infinity"])
def test_a_number_json_cannot_write_back_is_refused_located(
    number: str, home: Path, tmp_path: Path
) -> None:
    """1e400 reads as infinity; rewritten, it would be ``Infinity``: not JSON any more."""
    project = copy_example("calculator", tmp_path)
    path = expected_path("cursor", home, tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text('{"note": "1e400",\n "limits": [1, ' + number + '], "mcpServers": {}}\n')
    before = path.read_bytes()
    result = run_install("cursor", str(project))
    assert result.exit_code == 2 and "Traceback" not in result.output
    why = f"number {number} is too large" if "e" in number else "NaN and Infinity are not"
    assert f"mcp.json:2:16: limits[1]: {why}" in result.output
    assert path.read_bytes() == before and not list(path.parent.glob("*.bak*"))


def test_a_key_given_twice_is_refused_located(home: Path, tmp_path: Path) -> None:
    """A config naming one server twice (a hand merge): written back, its first entry was
    gone (only the ``.bak`` kept it)."""
    project = copy_example("calculator", tmp_path)
    path = expected_path("cursor", home, tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text('{"mcpServers": {\n  "a": {"command": "one"},\n  "a": {"command": "two"}}}\n')
    before = path.read_bytes()
    result = run_install("cursor", str(project))
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "mcp.json:3:3: mcpServers.a: duplicate key 'a'" in result.output
    assert path.read_bytes() == before and not list(path.parent.glob("*.bak*"))


def test_print_shows_the_entry_and_writes_nothing(home: Path, tmp_path: Path) -> None:
    project = copy_example("calculator", tmp_path)
    result = CliRunner().invoke(
        main, ["install", "claude-desktop", str(project), "--print", "--name", "calc"]
    )
    assert result.exit_code == 0, result.stderr
    shown = json.loads(result.stdout)
    assert shown == {
        "mcpServers": {
            "calc": {
                "command": str(project / ".venv" / "bin" / "calculator"),
                "args": ["--transport", "stdio"],
            }
        }
    }
    assert not any(home.rglob("*.json"))


def test_launcher_kinds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from mcpgen.host_entry import ProjectError
    from mcpgen.hosts.project import launcher

    bare = describe(private_copy(tmp_path / "a"))  # not installed in this interpreter
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    run = launcher(bare)
    assert run.kind == "uvx" and run.command == "uvx"
    assert run.args == ["--from", str(bare.root), "calc-copy", "--transport", "stdio"]
    # what to do before a host can start it: an entry written that no host can run
    assert f"the host cannot start it until uv is; or pip install -e {bare.root} " in run.note
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "calc-copy").write_text("#!/bin/sh\n")
    (bindir / "calc-copy").chmod(0o755)
    monkeypatch.setenv("PATH", str(bindir))
    assert launcher(bare).argv[0] == str(bindir / "calc-copy")
    source = launcher(bare, python=Path(sys.executable))
    assert source.kind == "source" and source.env == {"PYTHONPATH": str(bare.root / "src")}
    with pytest.raises(ProjectError):
        launcher(bare, kind="venv")
    for kind in ("python", "source"):  # without --python: PROJECT/.venv's, or it says so
        with pytest.raises(ProjectError, match=f"--launcher {kind} runs an interpreter"):
            launcher(bare, kind=kind)
    fake_venv(bare.root / ".venv")
    assert launcher(bare, kind="source").argv[0] == str(bare.root / ".venv/bin/python")


async def _list_tools_like_a_host(entry: dict[str, Any], cwd: Path) -> list[str]:
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(
        command=entry["command"], args=entry.get("args", []), env=entry.get("env"), cwd=cwd
    )
    # hosts speak the handshake era and pass only the entry's env (the SDK adds PATH/HOME)
    async with Client(params, mode="legacy") as client:
        return sorted(t.name for t in (await client.list_tools()).tools)


@pytest.mark.parametrize("launch", ["venv", "source"])
def test_a_host_starts_the_server_from_the_written_config(
    launch: str, home: Path, tmp_path: Path
) -> None:
    import sys

    # "source": a package this interpreter does not have, whatever the venv running the
    # tests has installed (the README's quickstart installs calculator-mcp into it)
    project = copy_example("calculator", tmp_path) if launch == "venv" else private_copy(tmp_path)
    extra = ["--python", sys.executable] if launch == "source" else []
    assert run_install("claude-desktop", str(project), *extra).exit_code == 0
    config = json.loads(expected_path("claude-desktop", home, tmp_path).read_text())
    entry = config["mcpServers"]["calculator"]
    assert (entry.get("env") or {}).get("PYTHONPATH") == (
        str(project / "src") if launch == "source" else None
    )
    spec = json.loads((project / "src" / describe(project).package / "_spec.json").read_text())
    names = anyio.run(_list_tools_like_a_host, entry, home)
    assert names == sorted(t["definition"]["name"] for t in spec["tools"])


def _other_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any, Path]:
    """Two private copies; PATH holds only ``other``'s script, as `pip install -e other` in a
    venv whose bin is on PATH leaves it."""
    ours, other = (describe(private_copy(tmp_path / d)) for d in ("ours", "other"))
    bindir = tmp_path / "bin"
    bindir.mkdir()
    python = bindir / "python"
    python.write_text(f'#!/bin/sh\nPYTHONPATH={other.root}/src exec {sys.executable} "$@"\n')
    (bindir / "calc-copy").write_text(f"#!{python}\nimport calc_copy_mcp.__main__\n")
    for path in (python, bindir / "calc-copy"):
        path.chmod(0o755)
    monkeypatch.setenv("PATH", str(bindir))
    return ours, other, bindir


def test_call_and_list_skip_a_path_script_of_another_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from mcpgen.hosts.call import resolve_source
    from mcpgen.hosts.project import launcher

    ours, other, bindir = _other_install(tmp_path, monkeypatch)
    run = launcher(ours)  # install too: that script runs the other project's code
    assert run.kind == "uvx" and f"it imports {other.root}/src/calc_copy_mcp" in run.note
    capsys.readouterr()
    assert resolve_source(str(ours.root)).env == {"PYTHONPATH": str(ours.root / "src")}
    said = capsys.readouterr().err.splitlines()  # the user learns why and what runs instead
    assert len(said) == 1 and str(bindir / "calc-copy") in said[0], said
    assert f"it imports {other.root}/src/calc_copy_mcp" in said[0], said
    assert (
        f"running PYTHONPATH={ours.root}/src {sys.executable} -m calc_copy_mcp instead" in said[0]
    )
    mine = Path(sys.executable)
    assert launcher(other, own=mine).argv[0] == str(bindir / "calc-copy")
    assert not capsys.readouterr().err
    installed = tmp_path / "lib/site-packages"  # a non-editable install: install takes it
    shutil.copytree(other.root / "src", installed)
    (bindir / "python").write_text(
        f'#!/bin/sh\nPYTHONPATH={installed} exec {sys.executable} "$@"\n'
    )
    assert launcher(ours).kind == "path" and launcher(ours, own=mine).kind == "source"


def test_dev_does_not_fall_back_to_a_path_script_of_another_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpgen.host_entry import ProjectError
    from mcpgen.hosts.dev import _server_for

    ours, _, bindir = _other_install(tmp_path, monkeypatch)
    broken = tmp_path / "py" / "python"  # an interpreter that cannot run the source...
    broken.parent.mkdir()
    broken.write_text("#!/bin/sh\nexit 1\n")
    (broken.parent / "calc-copy").write_bytes((bindir / "calc-copy").read_bytes())  # ...nor this
    for path in (broken, broken.parent / "calc-copy"):
        path.chmod(0o755)
    with pytest.raises(ProjectError, match=f"{broken} cannot run calc_copy_mcp"):
        _server_for(ours.root, "stdio", 0, broken)  # not another install: what to install


def test_a_config_that_cannot_be_written_is_named(home: Path, tmp_path: Path) -> None:
    """A dangling link (its folder gone; a read-only folder is the same OSError as a user
    other than root): the config is named, not the temporary file beside its target."""
    config = tmp_path / "mcp.json"
    config.symlink_to(tmp_path / "gone" / "mcp.json")
    result = run_install(
        "mcp-json", str(copy_example("calculator", tmp_path)), "--config", str(config)
    )
    assert (
        result.exit_code == 2 and f"error: {config}: cannot write" in result.output
    ), result.output
    assert ".tmp" not in result.output


def test_an_entry_of_this_project_by_another_launcher_is_updated(
    home: Path, tmp_path: Path
) -> None:
    """``install`` before the project had a venv wrote ``uvx --from PROJECT``; the same
    command once it had one refused, "already runs ... not this project", though the entry
    names this very folder. An entry naming the folder (uvx ``--from``, its ``.venv``
    script, ``PYTHONPATH=PROJECT/src``) is this project's: updated, filled-in values kept.
    Another folder's is still refused."""
    project = copy_example("shop", tmp_path)
    proj = describe(project)
    config = tmp_path / "mcp.json"
    stdio = ["--transport", "stdio"]
    earlier = [
        {"command": "uvx", "args": ["--from", str(proj.root), proj.script, *stdio]},
        {"command": sys.executable, "args": ["-m", proj.package, *stdio],
         "env": {"PYTHONPATH": str(proj.root / "src")}},
    ]  # fmt: skip
    for entry in earlier:
        entry["env"] = {**entry.get("env", {}), "SHOP_API_APIKEY": "filled-in"}
        config.write_text(json.dumps({"mcpServers": {"shop": entry}}))
        done = run_install("mcp-json", str(project), "--config", str(config))
        assert done.exit_code == 0, done.output
        written = json.loads(config.read_text())["mcpServers"]["shop"]
        assert written["command"] == str(project / ".venv" / "bin" / "shop"), written
        assert written["env"]["SHOP_API_APIKEY"] == "filled-in"
    other = copy_example("shop", tmp_path / "other")
    for entry in (
        {"command": "uvx", "args": ["--from", str(other.resolve()), "shop", *stdio]},
        {"command": "/bin/other"},  # no args at all
    ):
        config.write_text(json.dumps({"mcpServers": {"shop": entry}}))
        args = ["install", "mcp-json", str(project), "--config", str(config)]
        done = CliRunner().invoke(main, args)
        assert done.exit_code == 2 and "not this project" in done.output, done.output
