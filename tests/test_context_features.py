"""Handlers that take a ``Context`` (``context: true``), as a user writes them in a generated
package: they import the public API from the package (``from ... import Context``), the
generated wiring hands them the context, and ``mypy --strict`` accepts them.

What the context does (progress, logs, elicitation with enums and defaults, sampling,
roots, mixed content) in both protocol eras and over every transport is tested on the
runtime directly: tests/runtime/test_rt_context.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpgen.cli import main

MANIFEST = """
mcpgen: 1
server: {name: ctxdemo}
tools:
  - name: interview
    description: Asks the user, the model and the client's roots.
    context: true
    output:
      type: object
      properties:
        color: {type: string}
        size: {type: string}
        model_said: {type: string}
        roots: {type: array, items: {type: string}}
      required: [color, size, model_said, roots]
  - name: gallery
    description: Mixed content.
    context: true
"""

INTERVIEW = """
from __future__ import annotations

from typing import Literal

import mcp_types as types
from pydantic import BaseModel

from ... import Context
from ...models import InterviewInput, InterviewOutput


class Answer(BaseModel):
    color: Literal["red", "green", "blue"] = "green"
    size: str = "M"


async def handle(args: InterviewInput, ctx: Context) -> InterviewOutput:
    await ctx.progress(0, 3, "asking")
    answer = await ctx.elicit("Pick a colour", Answer)
    assert answer is not None
    await ctx.log("info", "got an answer")
    sampled = await ctx.sample("Say hi", max_tokens=10)
    said = sampled.content.text if isinstance(sampled.content, types.TextContent) else ""
    roots = await ctx.list_roots()
    await ctx.progress(3, 3, "done")
    return InterviewOutput(
        color=answer.color, size=answer.size, model_said=said, roots=[str(r.uri) for r in roots]
    )
"""

GALLERY = """
from __future__ import annotations

from ... import Context, ToolReturn, embedded_text, image, resource_link, text
from ...models import GalleryInput


async def handle(args: GalleryInput, ctx: Context) -> ToolReturn:
    return [
        text("a picture"),
        image(b"\\x89PNG fake", "image/png"),
        embedded_text("demo://note", "embedded"),
        resource_link("demo://other", "other"),
    ]
"""

PROBE = """
import anyio
import mcp_types as types
from mcp.client import Client
from ctxdemo_mcp.server import create_server

seen = {"schema": None, "progress": [], "logs": []}

async def elicit(context, params):
    seen["schema"] = params.requested_schema
    return types.ElicitResult(action="accept", content={"color": "blue", "size": "L"})

async def sample(context, params):
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(text="hi there"), model="fake"
    )

async def roots(context):
    return types.ListRootsResult(roots=[types.Root(uri="file:///work/project")])

async def log(params):
    seen["logs"].append(params.data)

async def progress(p, total, message):
    seen["progress"].append(p)

async def main(mode):
    async with Client(
        create_server(), mode=mode, elicitation_callback=elicit, sampling_callback=sample,
        list_roots_callback=roots, logging_callback=log,
        log_level="debug" if mode != "legacy" else None,
    ) as client:
        result = await client.call_tool("interview", {}, progress_callback=progress)
        assert not result.is_error, result
        assert result.structured_content == {
            "color": "blue", "size": "L", "model_said": "hi there",
            "roots": ["file:///work/project"],
        }, result.structured_content
        props = seen["schema"]["properties"]
        assert props["color"]["enum"] == ["red", "green", "blue"], props
        assert props["color"]["default"] == "green", props
        await anyio.sleep(0.05)
        assert 3 in seen["progress"], seen
        assert "got an answer" in seen["logs"], seen
        gallery = await client.call_tool("gallery", {})
        kinds = [c.type for c in gallery.content]
        assert kinds == ["text", "image", "resource", "resource_link"], kinds
    print("ok", mode)

import sys
anyio.run(main, sys.argv[1])
"""


@pytest.mark.slow
def test_context_handlers_in_a_generated_package(tmp_path: Path) -> None:
    source = tmp_path / "ctx.yaml"
    source.write_text(MANIFEST)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["build", str(source), "-o", str(out)])
    assert result.exit_code == 0, result.output
    handlers = out / "src" / "ctxdemo_mcp" / "handlers" / "tools"
    (handlers / "interview.py").write_text(INTERVIEW)
    (handlers / "gallery.py").write_text(GALLERY)
    env = {**os.environ, "PYTHONPATH": str(out / "src")}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "legacy"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and "ok legacy" in done.stdout, done.stderr[-4000:]
    mypy = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "src"], cwd=out, capture_output=True, text=True
    )
    assert mypy.returncode == 0, mypy.stdout


COMPLETIONS = """
mcpgen: 1
server: {name: compdemo}
resources:
  - uriTemplate: "demo://drafts/{title}"
    name: drafts
    description: A draft by title.
prompts:
  - name: greet
    description: Greets someone.
    arguments: [{name: who}]
    messages: [{role: user, text: "Hi {{ who }}"}]
completions:
  - {resource: drafts, argument: title, handler: true, context: true}
  - {prompt: greet, argument: who, handler: true}
"""

RECENT = """
from __future__ import annotations

from collections.abc import Sequence

from ... import Context


async def complete(value: str, context: dict[str, str], ctx: Context) -> Sequence[str]:
    typed: list[str] = await ctx.store.get("typed", [])
    await ctx.store.set("typed", [*typed, value])
    return [ctx.identity.subject, *(t for t in typed if t.startswith(value))]
"""

COMPLETE_PROBE = """
import sys

import anyio
import mcp_types as types
from mcp.client import Client
from compdemo_mcp.server import create_server

DRAFTS = types.ResourceTemplateReference(uri="demo://drafts/{title}")

async def main(mode):
    async with Client(create_server(), mode=mode) as client:
        async def complete(value):
            result = await client.complete(DRAFTS, {"name": "title", "value": value})
            return result.completion.values
        assert await complete("alpha") == ["local"]
        assert await complete("al") == ["local", "alpha"]
        greet = types.PromptReference(name="greet")
        assert (await client.complete(greet, {"name": "who", "value": ""})).completion.values == []
    print("ok", mode)

anyio.run(main, sys.argv[1])
"""


@pytest.mark.slow
def test_a_completion_asks_for_the_context_in_its_own_entry(tmp_path: Path) -> None:
    """``context: true`` on a completion: its stub takes ``ctx: Context`` (the other's does
    not), ``mypy --strict`` accepts the stubs as written, and the handler gets the caller's
    context (its identity, its ``ctx.store``) in both eras."""
    source = tmp_path / "comp.yaml"
    source.write_text(COMPLETIONS)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["build", str(source), "-o", str(out)])
    assert result.exit_code == 0, result.output
    stubs = out / "src" / "compdemo_mcp" / "handlers" / "completions"
    drafts = stubs / "resource_demo_drafts_title_title.py"
    greet = stubs / "prompt_greet_who.py"
    assert "ctx: Context" in drafts.read_text() and "Context" not in greet.read_text()
    mypy = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "src"], cwd=out, capture_output=True, text=True
    )
    assert mypy.returncode == 0, mypy.stdout
    drafts.write_text(RECENT)
    env = {**os.environ, "PYTHONPATH": str(out / "src")}
    for mode in ("legacy", "2026-07-28"):
        done = subprocess.run(
            [sys.executable, "-c", COMPLETE_PROBE, mode],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0 and f"ok {mode}" in done.stdout, done.stderr[-4000:]
