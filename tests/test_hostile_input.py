"""Hostile strings in every field never become code: the output compiles, lints, passes its
own tests, and hands the exact original text back over the protocol."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml
from click.testing import CliRunner

from mcpgen.cli import main

HOSTILE = [
    "quote \" and ' both",
    "triple \"\"\" and ''' quotes",
    "back\\slash \\n \\u2028 \\",
    "new\nline\r\ncarriage",
    "sep\u2028arator\u2029para\x0bvt",
    "{{ jinja }} {% if x %}{% endif %} {# c #}",
    "{format} %s %(x)s $HOME `id`",
    "ünïcödé ✓ 日本 \U0001f600",
    "confusable \u2013 \u00d7 \u2018curly\u2019 \u0421yrillic",  # ruff's RUF001/RUF002 flag them
    "x" * 3000,
    "</script><!-- -->",
    "`code` *md* # heading | table |",
    "__import__('os').system('echo pwned')",
]
PROPERTY_NAMES = [
    "class",
    "my-field",
    "2fa",
    "from",
    "model_config",
    "self",
    "with space",
    "None",
    "l",
]


def manifest() -> dict[str, object]:
    joined = "\n".join(HOSTILE)
    properties = {
        name: {"type": "string", "description": HOSTILE[i % len(HOSTILE)]}
        for i, name in enumerate(PROPERTY_NAMES)
    }
    properties["choice"] = {"type": "string", "enum": HOSTILE[:4], "default": HOSTILE[0]}
    return {
        "mcpgen": 1,
        "server": {
            "name": "hostile",
            "title": HOSTILE[1],
            "description": joined,
            "instructions": joined,
        },
        "tools": [
            {
                "name": "hostile_tool",
                "title": HOSTILE[0],
                "description": joined,
                "input": {"type": "object", "properties": properties, "required": ["class"]},
                "output": {
                    "type": "object",
                    "properties": {"list": {"type": "string", "description": HOSTILE[2]}},
                },
            }
        ],
        "resources": [
            {"uri": 'hostile://r/"q"\'s', "name": "r1", "description": HOSTILE[3], "text": joined}
        ],
        "prompts": [
            {
                "name": 'p"1',
                "title": HOSTILE[5],
                "description": HOSTILE[1],
                "arguments": [{"name": "arg", "description": HOSTILE[0], "required": True}],
                "messages": [{"role": "user", "text": "{{ arg }}|" + HOSTILE[1] + HOSTILE[2]}],
            }
        ],
    }


PROBE = """
import anyio, json, sys
from mcp.client import Client
from hostile_mcp.server import create_server

async def main():
    async with Client(create_server(), mode="legacy") as c:
        tool = (await c.list_tools()).tools[0]
        res = (await c.list_resources()).resources[0]
        text = (await c.read_resource(res.uri)).contents[0].text
        prompt = await c.get_prompt('p"1', {"arg": "A"})
        print(json.dumps({
            "instructions": c.instructions,
            "description": tool.description,
            "title": tool.title,
            "properties": tool.input_schema["properties"],
            "uri": str(res.uri),
            "text": text,
            "prompt": prompt.messages[0].content.text,
        }))

anyio.run(main)
"""


def test_hostile_strings_round_trip(tmp_path: Path) -> None:
    data = manifest()
    source = tmp_path / "hostile.yaml"
    source.write_text(yaml.safe_dump(data, allow_unicode=True), "utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["build", str(source), "-o", str(out)])
    assert result.exit_code == 0, result.output
    for path in out.rglob("*.py"):
        compile(path.read_text("utf-8"), str(path), "exec")
    env = {**os.environ, "PYTHONPATH": str(out / "src")}
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=out, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert tests.returncode == 0, tests.stdout[-3000:]
    lint = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "."],
        cwd=out,
        capture_output=True,
        text=True,
        check=False,
    )
    assert lint.returncode == 0, lint.stdout
    probe = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=False
    )
    assert probe.returncode == 0, probe.stderr[-3000:]
    seen = json.loads(probe.stdout)
    joined = "\n".join(HOSTILE)
    tool = data["tools"][0]  # type: ignore[index]
    assert seen["instructions"] == joined
    assert seen["description"] == joined
    assert seen["title"] == HOSTILE[0]
    assert seen["properties"] == tool["input"]["properties"]
    assert seen["uri"] == 'hostile://r/"q"\'s'
    assert seen["text"] == joined
    assert seen["prompt"] == "A|" + HOSTILE[1] + HOSTILE[2]


def test_imports_of_user_named_classes_are_in_ruffs_order(tmp_path: Path) -> None:
    """``t-rex`` gives ``TRexClient``, ``TRexSyncClient``; shared definitions ``ZZ`` (a
    constant to isort) and ``Abc``: Python's sort put capitals first and ruff said I001."""
    data = {
        "mcpgen": 1,
        "server": {"name": "t-rex"},
        "$defs": {
            "ZZ": {"type": "object", "properties": {"a": {"type": "string"}}},
            "Abc": {"type": "object", "properties": {"b": {"type": "string"}}},
        },
        "tools": [
            {
                "name": "roar",
                "description": "Roar.",
                "input": {"$ref": "#/$defs/ZZ"},
                "output": {"$ref": "#/$defs/Abc"},
            }
        ],
    }
    source = tmp_path / "m.yaml"
    source.write_text(yaml.safe_dump(data), "utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["build", str(source), "-o", str(out)])
    assert result.exit_code == 0, result.output
    lint = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--output-format", "concise", "."],
        cwd=out, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert lint.returncode == 0, lint.stdout
