"""``mcpgen call`` and ``mcpgen list`` against the calculator example over stdio (its
project folder, a command line) and streamable HTTP, through the real command line."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from hostkit import EXAMPLES, copy_example, fake_venv, mcpgen, private_copy

from mcpgen.host_entry import ProjectError
from mcpgen.hosts.call import parse_arguments, resolve_source
from mcpgen.hosts.project import describe, launcher
from mcpgen.runtime.testing import free_port

pytestmark = pytest.mark.timeout(180)
CALC_SRC = EXAMPLES / "calculator" / "src"
COMMAND = f"{shlex.quote(sys.executable)} -m calculator_mcp"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_example("calculator", tmp_path_factory.mktemp("calc"))


def test_call_a_project_folder_prints_structured_content(project: Path) -> None:
    done = mcpgen("call", str(project), "add", "numbers=[1, 2, 3.5]")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"sum": 6.5}
    assert done.stdout == '{\n  "sum": 6.5\n}\n'


def test_call_a_command_with_args_json_and_pairs(project: Path) -> None:
    done = mcpgen(
        "call", "--command", COMMAND, "--env", f"PYTHONPATH={CALC_SRC}",
        "divide", "--args", '{"a": 7, "b": 2}', "precision=2",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["quotient"] == 3.5


def test_string_typed_properties_keep_the_text(project: Path) -> None:
    # "to" is a string in the schema: "null" is sent as the text "null", not as JSON null
    done = mcpgen("call", str(project), "convert_units", "value=1000", "from=m", "to=null")
    assert done.returncode == 1
    assert "to: 'null' is not one of" in done.stderr
    as_json = mcpgen(
        "call", str(project), "convert_units", "--args", '{"value": 1, "from": "m", "to": null}'
    )
    assert as_json.returncode == 1 and "to: None is not of type 'string'" in as_json.stderr
    ok = mcpgen("call", str(project), "convert_units", "value=1000", "from=m", "to=km")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout) == {"value": 1.0, "unit": "km"}


def test_a_tool_error_exits_1_and_text_content_is_printed(project: Path) -> None:
    error = mcpgen("call", str(project), "divide", "a=1", "b=0")
    assert error.returncode == 1
    assert error.stdout == "" and error.stderr.startswith("tool error: ")
    assert "zero" in error.stderr
    text = mcpgen("call", str(project), "random_fact")
    assert text.returncode == 0, text.stderr
    assert text.stdout.strip() and not text.stdout.lstrip().startswith("{")


def test_json_flag_prints_the_whole_result(project: Path) -> None:
    done = mcpgen("call", str(project), "add", "numbers=[2,2]", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["structuredContent"] == {"sum": 4} and result["isError"] is False


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["add", "numbers=[1,2]", "--args", "[1]"], "--args must be a JSON object"),
        (["nope"], "no tool 'nope' (tools: add, convert_units, divide"),
        (["add", "numbers"], "expected key=value"),
        (["add", "--args", '{"numbers": [1e999, 2]}'], "--args: 1e999 is not a finite number"),
        (["add", "--args", '{"n": %s}' % ("[" * 5000 + "]" * 5000)], "nest deeper than 128"),
        (["add", "n=" + "[" * 200 + "]" * 200], "the arguments nest deeper than 128 levels"),
    ],
)
def test_bad_input_exits_2_with_one_line(project: Path, args: list[str], message: str) -> None:
    done = mcpgen("call", str(project), *args)
    assert done.returncode == 2, done.stdout
    assert message in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_value_that_is_no_finite_number_is_sent_as_written() -> None:
    """``x=NaN`` or ``y=[1e999]`` is not JSON the server can receive (it arrived as null):
    the text goes as written, for the server to refuse by the tool's schema."""
    assert parse_arguments(None, ["x=NaN", "y=[1e999]", "z=1.5"], None) == {
        "x": "NaN",
        "y": "[1e999]",
        "z": 1.5,
    }


def test_unreachable_servers_exit_2_with_one_line(tmp_path: Path) -> None:
    port = free_port()
    for args in (
        [f"http://127.0.0.1:{port}/mcp", "add"],
        ["--command", f"{shlex.quote(sys.executable)} -c 'import sys; sys.exit(3)'", "add"],
        [str(tmp_path / "missing"), "add"],
        [str(tmp_path), "add"],  # a folder that is not a project
    ):
        done = mcpgen("call", *args, "--timeout", "10")
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert done.stderr.startswith("error: ") and "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr


@pytest.mark.parametrize("command", ["list", "call"])
def test_a_server_writing_garbage_on_stdout_is_one_line_naming_it(command: str) -> None:
    """Not the SDK's logged traceback: one line that shows what the server wrote."""
    garbage = f"{shlex.quote(sys.executable)} -c 'print(\"hello world\")'"
    done = mcpgen(command, "--command", garbage, *(["add"] if command == "call" else []))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "'hello world'" in done.stderr, done.stderr


@pytest.mark.parametrize("command", ["list", "call"])
def test_a_server_writing_bytes_that_are_not_utf8_is_the_same_one_line(command: str) -> None:
    """Not ``UnicodeDecodeError: 'utf-8' codec can't decode...``: junk like any other."""
    write = "import sys; sys.stdout.buffer.write(b'\\xff\\xfejunk\\n'); sys.stdout.flush()"
    garbage = f"{shlex.quote(sys.executable)} -c {shlex.quote(write)}"
    done = mcpgen(command, "--command", garbage, *(["add"] if command == "call" else []))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "Failed to parse JSONRPC message from server: '\ufffd\ufffdjunk'" in done.stderr


def test_list_a_project_folder(project: Path) -> None:
    done = mcpgen("list", str(project))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "server calculator 0.1.0"
    assert lines[1] == "tools (5):"
    assert any(
        line.startswith("  divide(a: number, b: number, precision?: integer)") for line in lines
    )


def test_call_and_list_over_http(calculator_http: str) -> None:
    done = mcpgen("call", calculator_http, "add", "numbers=[40,2]")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"sum": 42}
    listed = mcpgen("list", calculator_http, "--json", "--header", "X-Test=1")
    assert listed.returncode == 0, listed.stderr
    data = json.loads(listed.stdout)
    assert data["server"]["name"] == "calculator"
    assert sorted(t["name"] for t in data["tools"]) == [
        "add", "convert_units", "divide", "random_fact", "weather_current",
    ]  # fmt: skip
    assert data["prompts"] == [] and data["resources"] == []


def test_headers_are_for_urls_only(project: Path) -> None:
    done = mcpgen("call", str(project), "add", "--token", "t")
    assert done.returncode == 2 and "URLs only" in done.stderr


def test_list_follows_every_page(tmp_path: Path) -> None:
    travel = copy_example("travel", tmp_path)  # its manifest pages lists by 2
    done = mcpgen("list", str(travel), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [p["name"] for p in data["prompts"]] == ["plan-vacation", "explain-map", "local-tips"]
    assert len(data["resources"]) == 3 and len(data["resourceTemplates"]) == 2
    assert next(t for t in data["tools"] if t["name"] == "search_flights")


def test_a_freshly_built_project_is_called_from_its_source(tmp_path: Path) -> None:
    bare = copy_example("calculator", tmp_path, venv_script=False)  # no venv, no uvx
    done = mcpgen("call", str(bare), "add", "numbers=[5,5]", PATH="/usr/bin:/bin")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"sum": 10}


def test_a_project_is_run_from_its_folder_not_from_a_copy_installed_beside_mcpgen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the README's quickstart installs a stub calculator-mcp into the venv mcpgen runs in;
    # without a project venv or uvx, `mcpgen call FOLDER` must run FOLDER's own code
    bare = copy_example("calculator", tmp_path, venv_script=False)
    python = fake_venv(tmp_path / "venv", scripts=("calculator",))
    monkeypatch.setattr(sys, "executable", str(python))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    source = resolve_source(str(bare))
    assert source.argv == [str(python), "-m", "calculator_mcp", "--transport", "stdio"]
    assert source.env == {"PYTHONPATH": str(bare / "src")}


@pytest.mark.parametrize("given", [{"token": "T"}, {"headers": {"X-Key": "1"}}])
def test_header_and_token_are_refused_with_command_as_with_a_folder(
    given: dict[str, Any], tmp_path: Path
) -> None:
    """They reach URLs only: with --command they were dropped without a word."""
    for source, command in ((None, f"{shlex.quote(sys.executable)} -V"), (str(tmp_path), None)):
        with pytest.raises(ProjectError, match="apply to URLs only"):
            resolve_source(source, command, **given)
    assert resolve_source("http://127.0.0.1:9/mcp", **given).url


HOSTILE = r"""
import json, sys
ESC = "\x1b]52;c;ZXZpbA==\x07\x1b[2J"  # write the clipboard, clear the screen
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if msg["method"] == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"],
                  "capabilities": {"tools": {}, "resources": {}},
                  "serverInfo": {"name": "evil" + ESC, "version": "1" + ESC}}
    elif msg["method"] == "tools/list":
        schema = {"type": "object", "properties": {"a" + ESC: {"type": "string"}}}
        tool = {"name": "t\nforged line" + ESC, "description": "x" + ESC, "inputSchema": schema}
        result = {"tools": [tool]}
    elif msg["method"] == "tools/call":
        fail = msg["params"]["arguments"].get("fail", False)
        result = {"content": [{"type": "text", "text": "two\n\tlines\r" + ESC}], "isError": fail}
    elif msg["method"] == "resources/list":
        result = {"resources": [{"uri": "x://a" + ESC, "name": "r\r" + ESC}]}
    else:
        result = {"resourceTemplates": []}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"""


@pytest.mark.parametrize("command", ["list", "call"])
def test_a_hostile_servers_escape_sequences_do_not_reach_the_terminal(
    tmp_path: Path, command: str
) -> None:
    """What a server names itself, its tools and resources is shown, not obeyed: an escape
    sequence (clipboard write, screen clear) or a newline forging a line is printed escaped."""
    script = tmp_path / "hostile.py"
    script.write_text(HOSTILE, encoding="utf-8")
    line = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"
    done = mcpgen(command, "--command", line, *(["nope"] if command == "call" else []))
    shown = done.stdout + done.stderr
    assert not any(c in shown for c in "\x1b\x07\r"), repr(shown)
    if command == "list":
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines()[:3] == [
            r"server evil\x1b]52;c;ZXZpbA==\x07\x1b[2J 1\x1b]52;c;ZXZpbA==\x07\x1b[2J",
            "tools (1):",
            r"  t\x0aforged line\x1b]52;c;ZXZpbA==\x07\x1b[2J(a\x1b]52;c;ZXZpbA==\x07\x1b[2J?: "
            r"string)  x\x1b]52;c;ZXZpbA==\x07\x1b[2J",
        ]
    else:
        assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
        assert r"t\x0aforged line" in done.stderr


@pytest.mark.parametrize("fail", [False, True])
def test_a_hostile_tools_text_is_shown_with_its_lines_not_its_escapes(
    tmp_path: Path, fail: bool
) -> None:
    """A tool's text (and a tool error's) went to the terminal as the server wrote it: the
    clipboard written, the screen cleared. Its newlines and tabs are kept."""
    script = tmp_path / "hostile.py"
    script.write_text(HOSTILE, encoding="utf-8")
    line = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"
    tool = "t\nforged line\x1b]52;c;ZXZpbA==\x07\x1b[2J"
    done = mcpgen("call", "--command", line, tool, f"fail={json.dumps(fail)}")
    assert done.returncode == int(fail), done.stderr
    shown = done.stderr if fail else done.stdout
    assert shown.endswith("two\n\tlines\\x0d\\x1b]52;c;ZXZpbA==\\x07\\x1b[2J\n"), repr(shown)


@pytest.mark.parametrize("command", [["list", "--json"], ["call", "--json", "t"], ["list"]])
def test_c1_and_bidi_controls_are_escaped(tmp_path: Path, command: list[str]) -> None:
    """``json.dumps(ensure_ascii=False)`` escapes C0 controls only: a CSI as one C1 code
    point (U+009B, clearing the screen on many terminals) and a right-to-left override
    reached the terminal as the server wrote them. They are ``\\uXXXX`` now, the JSON the
    same value; the text output showed the bidirectional controls as they are."""
    hostile, esc = "\x9b2J\u202egnp.exe\u2066\x85", "\x1b]52;c;ZXZpbA==\x07\x1b[2J"
    script = tmp_path / "hostile.py"
    script.write_text(HOSTILE.replace("ESC = ", f"ESC = {hostile!r} + "), encoding="utf-8")
    line = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"
    if command[0] == "call":
        command[-1] = "t\nforged line" + hostile + esc
    done = mcpgen(command[0], "--command", line, *command[1:])
    assert done.returncode == 0, done.stderr
    assert not any(c in done.stdout for c in "\x9b\u202e\u2066\x85"), repr(done.stdout)
    if command == ["list"]:
        assert done.stdout.startswith(r"server evil\u009b2J\u202egnp.exe\u2066\u0085\x1b]52;")
        return
    assert r"\u009b2J\u202egnp.exe\u2066\u0085" in done.stdout
    data = json.loads(done.stdout)
    if command[0] == "list":
        assert data["server"]["name"] == "evil" + hostile + esc
    else:
        assert data["content"][0]["text"] == "two\n\tlines\r" + hostile + esc


def test_a_stale_install_in_the_projects_venv_is_not_what_call_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A non-editable install in PROJECT/.venv is a copy: the next build leaves it stale.
    ``call`` and ``list`` run the source with that venv's interpreter (its dependencies)
    and say why; ``install`` keeps the script (what the user installed)."""
    project = describe(private_copy(tmp_path))
    stale = tmp_path / "site-packages"
    shutil.copytree(project.root / "src", stale)
    python = fake_venv(project.root / ".venv", src=stale)
    script = python.parent / "calc-copy"
    script.write_text(f"#!{python}\nfrom calc_copy_mcp.__main__ import main\nmain()\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert launcher(project).argv[0] == str(script)
    run = launcher(project, own=Path(sys.executable))
    assert run.argv[:3] == [str(python), "-m", "calc_copy_mcp"]
    assert run.env == {"PYTHONPATH": str(project.root / "src")}
    said = capsys.readouterr().err
    assert f"{script} skipped: it imports {stale}/calc_copy_mcp/__init__.py" in said, said
