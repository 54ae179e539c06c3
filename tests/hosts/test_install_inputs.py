"""VS Code prompts (``inputs``) of two entries: one project installed under two names
must not share a secret, since VS Code asks once per input id."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from mcpgen import host_entry as entries
from mcpgen.hosts import install as inst


def _entry(name: str) -> entries.Entry:
    body = {"type": "stdio", "command": "/p/shop", "env": {"SHOP_API_KEY": "${input:shop-api-key}"}}
    prompt = {"type": "promptString", "id": "shop-api-key", "description": "k", "password": True}
    return entries.Entry(name, body, [prompt], prompted=["SHOP_API_KEY"])


def test_a_second_install_under_another_name_gets_its_own_prompt() -> None:
    host = entries.HOSTS["vscode"]
    first = entries.merge(host, {}, _entry("shop"))
    both = entries.merge(host, first, _entry("shop-staging"))
    servers = both["servers"]
    assert servers["shop"]["env"] == {"SHOP_API_KEY": "${input:shop-api-key}"}
    assert servers["shop-staging"]["env"] == {"SHOP_API_KEY": "${input:shop-staging-shop-api-key}"}
    assert [i["id"] for i in both["inputs"]] == ["shop-api-key", "shop-staging-shop-api-key"]


def test_reinstalling_one_entry_keeps_its_prompt() -> None:
    host = entries.HOSTS["vscode"]
    first = entries.merge(host, {}, _entry("shop"))
    again = entries.merge(host, first, _entry("shop"))
    assert again["servers"]["shop"]["env"] == {"SHOP_API_KEY": "${input:shop-api-key}"}
    assert [i["id"] for i in again["inputs"]] == ["shop-api-key"]


def test_the_backup_of_a_private_config_is_private(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text('{"servers": {"other": {"command": "x", "env": {"KEY": "secret"}}}}')
    path.chmod(0o600)
    outcome = inst.write_config(path, entries.HOSTS["vscode"], _entry("shop"))
    assert outcome.backup is not None and "secret" in outcome.backup.read_text()
    assert stat.S_IMODE(outcome.backup.stat().st_mode) == 0o600  # not 0644 (the umask's)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_symlinked_config_stays_a_symlink(tmp_path: Path) -> None:
    target = tmp_path / "dotfiles" / "mcp.json"
    target.parent.mkdir()
    target.write_text('{"servers": {}}')
    link = tmp_path / "mcp.json"
    link.symlink_to(target)
    inst.write_config(link, entries.HOSTS["vscode"], _entry("shop"))
    assert link.is_symlink()
    assert "shop" in json.loads(target.read_text())["servers"]


def test_an_entry_replaced_with_force_does_not_pass_on_its_prompt() -> None:
    """Another program's entry of the same name, replaced (``--force``): its input's
    answer, which VS Code keeps by id, is that program's secret, not this one's."""
    host = entries.HOSTS["vscode"]
    other = entries.merge(host, {}, _entry("shop"))
    other["servers"]["shop"]["command"] = "/other/program"
    replaced = entries.merge(host, other, _entry("shop"))
    assert replaced["servers"]["shop"]["env"] == {"SHOP_API_KEY": "${input:shop-shop-api-key}"}
    assert [i["id"] for i in replaced["inputs"]] == ["shop-api-key", "shop-shop-api-key"]


def test_an_entry_name_cannot_make_a_reference_to_another_input() -> None:
    host = entries.HOSTS["vscode"]
    first = entries.merge(host, {}, _entry("shop"))
    odd = entries.merge(host, first, _entry("x} ${input:shop-api-key"))
    env = next(s["env"] for n, s in odd["servers"].items() if n != "shop")
    assert env == {"SHOP_API_KEY": "${input:x-input-shop-api-key-shop-api-key}"}
    assert [i["id"] for i in odd["inputs"]][1] == "x-input-shop-api-key-shop-api-key"


def test_an_orphan_input_is_not_reused() -> None:
    """An input no entry uses (its server removed by hand): VS Code keeps its answer by id,
    maybe that server's secret; this project gets its own prompt, the orphan stays."""
    host = entries.HOSTS["vscode"]
    orphan = {"type": "promptString", "id": "shop-api-key", "description": "theirs"}
    data = {"servers": {}, "inputs": [orphan, {**orphan, "id": "shop-shop-api-key"}]}
    merged = entries.merge(host, data, _entry("shop"))
    assert merged["servers"]["shop"]["env"] == {"SHOP_API_KEY": "${input:shop-shop-api-key-2}"}
    ids = [i["id"] for i in merged["inputs"]]
    assert ids == ["shop-api-key", "shop-shop-api-key", "shop-shop-api-key-2"]
    assert merged["inputs"][2]["password"] is True
    assert entries.merge(host, merged, _entry("shop")) == merged  # installed again: the same


def test_a_read_only_config_is_refused_untouched(tmp_path: Path) -> None:
    """Made read-only by its owner (or a tool that manages it): not replaced behind their
    back (a rename in a writable folder would), and no backup left for nothing."""
    path = tmp_path / "mcp.json"
    path.write_text('{"servers": {}}')
    path.chmod(0o444)
    with pytest.raises(entries.ProjectError, match="read-only"):
        inst.write_config(path, entries.HOSTS["vscode"], _entry("shop"))
    assert path.read_text() == '{"servers": {}}' and [p.name for p in tmp_path.iterdir()] == [
        "mcp.json"
    ]


def test_a_value_that_is_not_utf8_is_refused_not_an_internal_error(tmp_path: Path) -> None:
    """``--env K=$'\\xff'``: Python reads the byte as a lone surrogate, which UTF-8 cannot
    hold; the config is left as it was."""
    path = tmp_path / "mcp.json"
    path.write_text('{"servers": {}}')
    entry = _entry("shop")
    entry.body["env"] = {"SHOP_API_KEY": "\udcff"}
    with pytest.raises(entries.ProjectError, match=r"'\\udcff' is not UTF-8"):
        inst.write_config(path, entries.HOSTS["vscode"], entry)
    assert path.read_text() == '{"servers": {}}' and len(list(tmp_path.iterdir())) == 1
