"""A new user's first steps with ``list``, ``call`` and ``dev``: each works, or exits 2
with one line saying what to install (never exit 70 "internal error"); ``dev`` and
``build`` without ``-o`` use the project ``mcpgen init``'s ``-o server`` made."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hostkit import ROOT, cli_env, copy_example

from mcpgen.cli import main
from mcpgen.runtime.testing import free_port

pytestmark = pytest.mark.timeout(180)
NO_SDK = (
    "import sys; sys.modules['mcp'] = sys.modules['anyio'] = None; "
    "from mcpgen.cli import run; sys.argv[0] = 'mcpgen'; run()"
)


def test_mcp_is_a_dependency_of_mcpgen() -> None:
    import tomllib

    meta = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    assert any(d.replace(" ", "").startswith("mcp>=") for d in meta["dependencies"])


@pytest.mark.parametrize("command", [["list"], ["call", "add"]])
def test_without_the_sdk_list_and_call_say_what_to_install(
    tmp_path: Path, command: list[str]
) -> None:
    project = copy_example("calculator", tmp_path)
    words = [command[0], str(project), *command[1:]]
    done = subprocess.run(
        [sys.executable, "-c", NO_SDK, *words],
        env=cli_env(), capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: talking to a server needs the MCP Python SDK")
    assert "pip install 'mcp>=2.3,<2.4'" in done.stderr
    assert "Traceback" not in done.stderr and "never awaited" not in done.stderr


FAKE_PYTHON = """#!/bin/sh
echo "ModuleNotFoundError: No module named 'pydantic'" >&2
exit 1
"""


def test_dev_without_uvx_and_an_uninstalled_project_exits_2(tmp_path: Path) -> None:
    # the interpreter that would run the project lacks its dependencies, and uvx is absent
    python = tmp_path / "bare" / "python"
    python.parent.mkdir()
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    (tmp_path / "empty").mkdir()
    manifest = ROOT / "manifests" / "calculator.yaml"
    done = subprocess.run(
        [sys.executable, "-m", "mcpgen", "dev", str(manifest), "-o", str(tmp_path / "out"),
         "--python", str(python), "--port", str(free_port())],
        env=cli_env(PATH=str(tmp_path / "empty")), capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("dev: cannot run the server: "), done.stderr
    assert "No module named 'pydantic'" in last
    assert f"pip install -e {tmp_path / 'out'}" in last and "uv" in last
    assert "Traceback" not in done.stderr


def test_call_says_what_to_install_when_this_python_cannot_run_the_project(
    tmp_path: Path,
) -> None:
    project = copy_example("calculator", tmp_path, venv_script=False)
    init = project / "src" / "calculator_mcp" / "__init__.py"
    init.write_text("import mcpgen_no_such_dependency\n" + init.read_text())
    (tmp_path / "empty").mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "mcpgen", "call", str(project), "add", "numbers=[1]"],
        env=cli_env(PATH=str(tmp_path / "empty")), capture_output=True, text=True,
        timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "No module named 'mcpgen_no_such_dependency'" in done.stderr
    assert f"pip install -e {project}" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_build_and_dev_without_o_use_the_project_init_suggested(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    init = runner.invoke(main, ["init", "."])
    assert init.exit_code == 0
    hint = next(line for line in init.output.splitlines() if line.startswith("next: "))
    build = hint.split(" && ")[1].split()  # what init tells the user to run
    assert build[:2] == ["mcpgen", "build"] and build[-2:] == ["-o", "server"], hint
    assert runner.invoke(main, build[1:]).exit_code == 0
    assert "then: mcpgen dev mcpgen.yaml" in init.output
    again = runner.invoke(main, ["build", "mcpgen.yaml", "--check"])
    assert again.exit_code == 0, again.output  # ./server is up to date: nothing elsewhere
    seen: list[Path] = []
    monkeypatch.setattr("mcpgen.hosts.dev.dev", lambda _m, output, *_a: seen.append(output) or 0)
    assert runner.invoke(main, ["dev", "mcpgen.yaml"]).exit_code == 0
    assert seen == [Path("server")]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mcpgen.yaml", "server"]


def test_init_hints_run_from_a_folder_with_a_space(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shlex

    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    init = runner.invoke(main, ["init", "my server"])
    assert init.exit_code == 0, init.output
    hint = next(line for line in init.output.splitlines() if line.startswith("next: "))
    for command in hint.removeprefix("next: ").split(" && "):  # pasted into a shell
        done = runner.invoke(main, shlex.split(command)[1:])
        assert done.exit_code == 0, (command, done.output)
    assert (tmp_path / "my server" / "server" / "pyproject.toml").is_file()


def test_init_that_cannot_write_is_exit_2_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "mcpgen.yaml").mkdir()  # (a read-only folder is the same OSError)
    done = CliRunner().invoke(main, ["init", str(tmp_path), "--force"])
    assert done.exit_code == 2, done.output
    assert done.output.startswith(f"{tmp_path / 'mcpgen.yaml'}: cannot write: ")


def test_init_into_a_device_says_it_is_not_a_folder() -> None:
    """``mcpgen init /dev/null`` said "cannot write: File exists" (a regular file is
    refused by click's own check: "is a file")."""
    done = CliRunner().invoke(main, ["init", os.devnull])
    assert done.exit_code == 2, done.output
    assert done.output == f"{os.devnull}: not a folder (init writes DIRECTORY/mcpgen.yaml)\n"


def test_init_writes_a_schema_reference_that_resolves(tmp_path: Path) -> None:
    import json

    assert CliRunner().invoke(main, ["init", str(tmp_path)]).exit_code == 0
    first = (tmp_path / "mcpgen.yaml").read_text("utf-8").splitlines()[0]
    prefix = "# yaml-language-server: $schema="
    assert first.startswith(prefix)
    schema = Path(first[len(prefix) :])
    assert schema.is_file(), schema
    printed = CliRunner().invoke(main, ["schema"]).output
    assert json.loads(schema.read_text("utf-8")) == json.loads(printed)


def test_a_bundle_shows_prompt_text_without_template_logic(tmp_path: Path) -> None:
    from mcpgen.hosts.bundle import manifest
    from mcpgen.hosts.project import describe

    project = describe(copy_example("travel", tmp_path, venv_script=False))
    prompts = {p["name"]: p["text"] for p in manifest(project, "uv")["prompts"]}
    text = prompts["plan-vacation"]
    assert text.startswith(
        "Plan a ${arguments.days}-day trip to ${arguments.destination} in a "
        "${arguments.style} style."
    )
    assert "{%" not in text and "{{" not in text


def test_without_o_a_project_built_with_o_dot_is_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    assert runner.invoke(main, ["init", "."]).exit_code == 0
    assert runner.invoke(main, ["build", "mcpgen.yaml", "-o", "."]).exit_code == 0
    again = runner.invoke(main, ["build", "mcpgen.yaml", "--check"])
    assert again.exit_code == 0 and "up to date" in again.output, again.output


@pytest.mark.parametrize("folder", ["2fa", "ü", "123 tools", "--"])
def test_init_in_a_folder_of_any_name_writes_a_manifest_that_validates(
    tmp_path: Path, folder: str
) -> None:
    """The server name comes from the folder's; a folder named ``2fa`` or ``ü`` still gets
    a valid one (a name starts with a letter; it was "2fa", or "x" for "ü")."""
    assert CliRunner().invoke(main, ["init", str(tmp_path / folder)]).exit_code == 0
    done = CliRunner().invoke(main, ["validate", str(tmp_path / folder / "mcpgen.yaml")])
    assert done.exit_code == 0, done.output
    assert 'name: "x"' not in (tmp_path / folder / "mcpgen.yaml").read_text("utf-8")


def test_init_names_a_server_after_its_folder_as_written() -> None:
    from mcpgen.cli.starter import starter_manifest

    for folder, name, title in [
        ("Café Über", "cafe-uber", "Cafe Uber"),  # accents dropped, not their letters
        ("2fa", "mcp-2fa", "2fa"),  # a name starts with a letter; the title needs none
        ("My Project.v2", "my-project-v2", "My Project V2"),
        ("ü", "u", "U"),
        ("日本", "my-server", "My Server"),
        # letters with no decomposed form were dropped: "strae", "kbenhavn"
        ("Straße", "strasse", "Strasse"),
        ("København Łódź", "kobenhavn-lodz", "Kobenhavn Lodz"),
        ("Æsir Œuvre Þing Đak", "aesir-oeuvre-thing-dak", "Aesir Oeuvre Thing Dak"),
    ]:
        text = starter_manifest(folder)
        assert f'name: "{name}"' in text and f'title: "{title}"' in text, (folder, text[:400])
