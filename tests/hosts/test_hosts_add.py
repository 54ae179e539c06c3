"""``mcpgen add tool|resource|prompt NAME``: the skeleton goes in as text under its
section, the rest of the manifest (comments too) stays as it was, the result validates and
builds its stub; a name taken or invalid leaves the file untouched."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from hostkit import ROOT, mcpgen

from mcpgen.pipeline import load_manifest

pytestmark = pytest.mark.timeout(180)


def kept_in_order(old: str, new: str) -> bool:
    """Every line of ``old`` is in ``new``, in the same order (nothing moved or lost)."""
    lines = iter(new.splitlines())
    return all(any(line == candidate for candidate in lines) for line in old.splitlines())


def entries(path: Path, section: str) -> list[str]:
    return [e["name"] for e in yaml.safe_load(path.read_text()).get(section) or []]


@pytest.mark.parametrize(
    ("source", "kind", "section"),
    [
        ("calculator.yaml", "tool", "tools"),
        ("calculator.yaml", "resource", "resources"),  # no section yet: made at the end
        ("calculator.yaml", "prompt", "prompts"),
        ("travel.yaml", "tool", "tools"),  # a section followed by others
        ("travel.yaml", "resource", "resources"),
        ("travel.yaml", "prompt", "prompts"),
    ],
)
def test_add_inserts_a_valid_entry_and_keeps_the_rest(
    source: str, kind: str, section: str, tmp_path: Path
) -> None:
    for item in (ROOT / "manifests").iterdir():  # the manifests' assets come along
        target = tmp_path / item.name
        shutil.copytree(item, target) if item.is_dir() else shutil.copy(item, target)
    manifest = tmp_path / source
    old = manifest.read_text()
    before = entries(manifest, section)
    done = mcpgen("add", kind, "fresh_one", str(manifest))
    assert done.returncode == 0, done.stderr
    new = manifest.read_text()
    assert kept_in_order(old, new)
    assert sum(1 for line in old.splitlines() if line.lstrip().startswith("#")) == sum(
        1 for line in new.splitlines() if line.lstrip().startswith("#")
    )
    assert entries(manifest, section) == [*before, "fresh_one"]
    loaded = load_manifest(manifest)
    assert loaded.manifest is not None, [p.format() for p in loaded.problems.sorted()]


def test_a_windows_manifest_keeps_its_crlf_line_endings(tmp_path: Path) -> None:
    """A manifest with CRLF line endings gets its entry in CRLF too, every other line as it
    was (it came back all LF: a diff of every line)."""
    manifest = tmp_path / "mcpgen.yaml"
    old = (ROOT / "manifests" / "calculator.yaml").read_bytes().replace(b"\n", b"\r\n")
    manifest.write_bytes(old)
    done = mcpgen("add", "tool", "fresh_one", str(manifest))
    assert done.returncode == 0, done.stderr
    new = manifest.read_bytes()
    assert new.startswith(old) and new.count(b"\n") == new.count(b"\r\n") > old.count(b"\n")
    assert entries(manifest, "tools")[-1] == "fresh_one"


def test_add_builds_the_stub_and_the_server_lists_it(tmp_path: Path) -> None:
    done = mcpgen("init", str(tmp_path), "--name", "demo")
    assert done.returncode == 0, done.stderr
    manifest = tmp_path / "mcpgen.yaml"
    out = tmp_path / "server"
    done = mcpgen("add", "tool", "lookup", str(manifest), "-o", str(out))
    assert done.returncode == 0, done.stderr
    stub = out / "src" / "demo_mcp" / "handlers" / "tools" / "lookup.py"
    assert stub.is_file() and "def handle" in stub.read_text()
    spec = json.loads((out / "src" / "demo_mcp" / "_spec.json").read_text())
    assert [t["definition"]["name"] for t in spec["tools"]] == ["echo", "lookup"]
    done = mcpgen("add", "resource", "notes", str(manifest), "-o", str(out))
    assert done.returncode == 0, done.stderr
    spec = json.loads((out / "src" / "demo_mcp" / "_spec.json").read_text())
    uris = [r["definition"].get("uri") for r in spec["resources"]]
    assert uris == ["demo://about", "demo://notes"]
    assert list((out / "src" / "demo_mcp" / "handlers").rglob("notes.py"))


def test_empty_flow_sections_are_opened_and_comments_kept(tmp_path: Path) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text(
        "# my server\nmcpgen: 1\nserver: {name: tiny, version: 0.1.0}\n"
        "tools: []  # none yet\n# prompts come later\nprompts:\n- name: hello\n"
        "  messages:\n  - {role: user, text: hi}\n"
    )
    assert mcpgen("add", "tool", "first", str(manifest)).returncode == 0
    assert mcpgen("add", "prompt", "second", str(manifest)).returncode == 0
    text = manifest.read_text()
    assert text.startswith("# my server\n") and "tools:  # none yet\n  - name: first\n" in text
    assert "# prompts come later\nprompts:\n- name: hello\n" in text
    assert entries(manifest, "prompts") == ["hello", "second"]
    assert "\n- name: second\n" in text  # the section's own indentation (none)
    assert load_manifest(manifest).manifest is not None


def test_json_manifests_too(tmp_path: Path) -> None:
    manifest = tmp_path / "m.json"
    manifest.write_text(
        json.dumps({"mcpgen": 1, "server": {"name": "j", "version": "1.0.0"}}, indent=4)
    )
    assert mcpgen("add", "prompt", "ask", str(manifest)).returncode == 0
    data = json.loads(manifest.read_text())
    assert [p["name"] for p in data["prompts"]] == ["ask"]
    assert manifest.read_text().startswith('{\n    "mcpgen"')
    assert load_manifest(manifest).manifest is not None


@pytest.mark.parametrize("number", ["1e400", "-1E+999", "NaN", "-Infinity"])
def test_a_json_number_that_cannot_be_written_back_is_refused_located(
    number: str, tmp_path: Path
) -> None:
    """A JSON manifest is written back whole: 1e400 (read as infinity) would come back as
    ``Infinity``. Refused where it is in the user's file, not in the text it would be."""
    manifest = tmp_path / "m.json"
    manifest.write_text(
        '{"mcpgen": 1, "server": {"name": "j", "version": "1.0.0"},\n'
        ' "x-note": "1e400", "x-limits": [1, ' + number + "]}\n"
    )
    before = manifest.read_bytes()
    done = mcpgen("add", "prompt", "ask", str(manifest))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    why = f"number {number} is too large" if "E" in number.upper() else "NaN and Infinity"
    assert f"{manifest}:2:37: error: x-limits[1]: {why}" in done.stderr
    assert manifest.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["m.json"]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("add", ":17:11: error: tools[0].name: there is already a tool named 'add'"),
        ("bad name!", "would not validate"),
    ],
)
def test_refusals_leave_the_manifest_untouched(name: str, message: str, tmp_path: Path) -> None:
    manifest = tmp_path / "calculator.yaml"
    shutil.copy(ROOT / "manifests" / "calculator.yaml", manifest)
    before = manifest.read_bytes()
    done = mcpgen("add", "tool", name, str(manifest))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"{manifest}{message}" in done.stderr if message[0] == ":" else message in done.stderr
    if name == "bad name!":  # the problem is located in the real file
        assert f"{manifest}:" in done.stderr and "tools[5].name" in done.stderr
    assert manifest.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["calculator.yaml"]  # no temp file left


def test_a_manifest_that_is_not_utf8_is_exit_2_and_left_untouched(tmp_path: Path) -> None:
    manifest = tmp_path / "latin1.yaml"
    manifest.write_bytes(b"mcpgen: 1\nserver: {name: caf\xe9}\n")
    done = mcpgen("add", "tool", "t", str(manifest))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert f"{manifest}:2:19: error: file is not valid UTF-8 (byte 0xe9)" in done.stderr
    assert manifest.read_bytes() == b"mcpgen: 1\nserver: {name: caf\xe9}\n"


def test_a_read_only_manifest_is_exit_2_and_left_untouched(tmp_path: Path) -> None:
    manifest = tmp_path / "calculator.yaml"
    shutil.copy(ROOT / "manifests" / "calculator.yaml", manifest)
    before = manifest.read_bytes()
    manifest.chmod(0o444)
    done = mcpgen("add", "tool", "fresh_one", str(manifest))
    assert done.returncode == 2 and f"{manifest}: read-only" in done.stderr, done.stderr
    assert manifest.read_bytes() == before


def test_a_manifest_invalid_before_is_not_blamed_on_the_new_entry(tmp_path: Path) -> None:
    manifest = tmp_path / "calculator.yaml"
    text = (ROOT / "manifests" / "calculator.yaml").read_text()
    manifest.write_text(text.replace("type: object", "type: objec", 1))
    done = mcpgen("add", "tool", "fresh_one", str(manifest))
    assert done.returncode == 2 and "objec" in done.stderr, done.stderr
    assert "does not validate as it is" in done.stderr and "fresh_one" not in done.stderr


def test_a_manifest_invalid_before_is_told_its_own_problems(tmp_path: Path) -> None:
    """Not those of the text with the entry appended, which is not on disk: a ``tools:``
    mapping made that invalid YAML at a line the file does not have."""
    manifest = tmp_path / "mapping.yaml"
    text = "mcpgen: 1\nserver: {name: tiny, description: d}\ntools:\n  a: 1\n"
    manifest.write_text(text)
    done, checked = mcpgen("add", "tool", "first", str(manifest)), mcpgen("validate", str(manifest))
    assert done.returncode == 2 and "does not validate as it is" in done.stderr, done.stderr
    said = [line for line in done.stderr.splitlines() if ": error: " in line]
    assert said == [f'{manifest}:4:3: error: tools: expected array, got object {{"a": 1}}']
    assert said == [line for line in checked.stderr.splitlines() if ": error: " in line]
    assert manifest.read_text() == text


@pytest.mark.parametrize(
    ("header", "said"),
    [
        ("tools: &t [a]", "carries '&t' (an anchor, tag or alias)"),
        ("tools: [a]", "is written in flow style ([a]"),
    ],
)
def test_a_section_add_cannot_append_to_says_why(header: str, said: str, tmp_path: Path) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text(f"mcpgen: 1\nserver: {{name: tiny, version: 0.1.0}}\n{header}\n")
    done = mcpgen("add", "tool", "first", str(manifest))
    assert done.returncode == 2 and f"{manifest}:3:8: error: 'tools:' {said}" in done.stderr


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("mcpgen: 1\nserver: [\n", "3:1: error: invalid YAML: did not find"),
        ("server: {name: tiny}\n", "1:1: error: not an mcpgen manifest"),
    ],
)
def test_a_file_that_is_no_manifest_is_refused_located(
    text: str, said: str, tmp_path: Path
) -> None:
    """Every refusal of add names the file and the place, as the rest of the CLI does."""
    manifest = tmp_path / "m.yaml"
    manifest.write_text(text)
    done = mcpgen("add", "tool", "first", str(manifest))
    assert done.returncode == 2 and f"{manifest}:{said}" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and manifest.read_text() == text
