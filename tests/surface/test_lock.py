"""The surface lock built from real models: shape, sizes, hidden items, meta tools, text."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from mcpgen.model.types import Manifest
from mcpgen.pipeline import load_manifest
from mcpgen.surface.diff import diff, tools_list_cost
from mcpgen.surface.lock import dumps, surface, wire

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[2]
SHOP_SPEC = ROOT / "manifests" / "openapi" / "shop.yaml"

MANIFEST = """\
mcpgen: 1
server:
  name: lab
  version: 2.1.0
  title: Lab
  instructions: Use probe first.
capabilities:
  tools: {listChanged: true}
tools:
  - name: zeta
    description: Last by name, first in the manifest.
    annotations: {readOnlyHint: true}
    scopes: [lab.write, lab.read]
    input:
      type: object
      properties:
        q: {type: string, description: "Ünïcode counts in bytes"}
      required: [q]
  - name: alpha
    title: Alpha
    output:
      type: object
      properties: {n: {type: integer}}
  - name: hidden
    description: Shown later by the server.
    enabled: false
resources:
  - uri: lab://readme
    name: readme
    mimeType: text/plain
    text: hello
  - uriTemplate: "lab://sample/{id}"
    name: sample
prompts:
  - name: review
    arguments:
      - {name: target, required: true}
      - {name: tone}
    messages:
      - {role: user, text: "Review {{ target }}"}
  - name: hello
    messages:
      - {role: user, text: Hello}
"""


def load(path: Path) -> Manifest:
    loaded = load_manifest(path)
    assert loaded.manifest is not None, [p.format() for p in loaded.problems.items]
    return loaded.manifest


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Manifest:
    path = tmp_path_factory.mktemp("lab") / "mcpgen.yaml"
    path.write_text(MANIFEST, encoding="utf-8")
    return load(path)


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def test_shape_and_order(model: Manifest) -> None:
    lock = surface(model)
    assert lock["mcpSurface"] == 1
    assert lock["server"] == {
        "name": "lab", "version": "2.1.0", "title": "Lab", "instructions": "Use probe first.",
    }  # fmt: skip
    assert lock["capabilities"]["tools"] == {"listChanged": True}
    assert set(lock["capabilities"]) >= {"tools", "resources", "prompts"}
    assert [t["name"] for t in lock["tools"]] == ["alpha", "hidden", "zeta"]
    assert [r["uri"] for r in lock["resources"]] == ["lab://readme"]
    assert [r["uriTemplate"] for r in lock["resourceTemplates"]] == ["lab://sample/{id}"]
    assert [p["name"] for p in lock["prompts"]] == ["hello", "review"]
    assert "operations" not in lock


def test_items_are_the_wire_definitions_plus_scopes_and_size(model: Manifest) -> None:
    lock = surface(model)
    by_name = {t.name: t for t in model.tools}
    for entry in lock["tools"]:
        definition = by_name[entry["name"]].definition
        assert wire(entry) == definition
        n = len(compact(definition).encode("utf-8"))
        assert entry["size"] == {"bytes": n, "tokens": math.ceil(n / 4)}
    zeta = next(t for t in lock["tools"] if t["name"] == "zeta")
    assert zeta["scopes"] == ["lab.read", "lab.write"]  # sorted
    assert zeta["annotations"] == {"readOnlyHint": True}
    # non-ASCII text is measured in UTF-8 bytes, not characters
    assert zeta["size"]["bytes"] > len(compact(wire(zeta)))


def test_hidden_tool_is_marked_and_not_counted(model: Manifest) -> None:
    lock = surface(model)
    hidden = next(t for t in lock["tools"] if t["name"] == "hidden")
    assert hidden["enabled"] is False
    assert all("enabled" not in t for t in lock["tools"] if t["name"] != "hidden")
    listed = [t.definition for t in model.tools if t.enabled]
    n = len(compact({"tools": listed}).encode())
    assert lock["totals"] == {"toolsListBytes": n, "toolsListTokens": math.ceil(n / 4)}
    assert tools_list_cost(lock) == (n, math.ceil(n / 4))
    # the same figure computed from the entries alone (a lock without totals)
    assert tools_list_cost({**lock, "totals": None}) == (n, math.ceil(n / 4))


def test_prompts_always_list_arguments(model: Manifest) -> None:
    prompts = {p["name"]: p for p in surface(model)["prompts"]}
    assert prompts["hello"]["arguments"] == []
    assert prompts["review"]["arguments"] == [
        {"name": "target", "required": True},
        {"name": "tone", "required": False},
    ]
    assert prompts["review"]["scopes"] == []


def test_declared_resource_size_is_kept_apart_from_the_measure(model: Manifest) -> None:
    resource = replace(model.resources[0], size=5)
    lock = surface(replace(model, resources=(resource, *model.resources[1:])))
    entry = lock["resources"][0]
    assert entry["contentSize"] == 5
    assert set(entry["size"]) == {"bytes", "tokens"}
    assert wire(entry) == resource.definition


def test_resource_and_prompt_scopes_are_read_when_the_model_has_them(model: Manifest) -> None:
    scoped = [SimpleNamespace(definition=r.definition, scopes=("b", "a")) for r in model.resources]
    fake = SimpleNamespace(
        server=model.server, capabilities=model.capabilities, tools=model.tools,
        advertised_tools=model.advertised_tools, meta_tools=False, resources=scoped,
        prompts=[SimpleNamespace(definition=p.definition, scopes=("p",)) for p in model.prompts],
    )  # fmt: skip
    lock = surface(fake)
    assert lock["resources"][0]["scopes"] == ["a", "b"]
    assert lock["prompts"][0]["scopes"] == ["p"]


def test_meta_tools_list_operations(tmp_path: Path) -> None:
    (tmp_path / "shop.yaml").write_text(SHOP_SPEC.read_text())
    manifest = tmp_path / "mcpgen.yaml"
    manifest.write_text(
        "mcpgen: 1\nserver: {name: shop}\nopenapi: {source: shop.yaml, metaTools: true}\n"
    )
    model = load(manifest)
    lock = surface(model)
    assert [t["name"] for t in lock["tools"]] == [
        "call_operation", "describe_operation", "search_operations",
    ]  # fmt: skip
    assert sorted(t["name"] for t in lock["operations"]) == sorted(t.name for t in model.tools)
    assert len(lock["operations"]) > 3
    # without meta tools, the same operations are tools and there is no operations list
    direct = surface(replace(model, upstream={**(model.upstream or {}), "metaTools": False}))
    assert "operations" not in direct
    assert [t["name"] for t in direct["tools"]] == [t["name"] for t in lock["operations"]]


def test_canonical_text(model: Manifest) -> None:
    lock = surface(model)
    text = dumps(lock)
    assert text == json.dumps(lock, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert "Ünïcode" in text  # not escaped
    assert dumps(surface(model)) == text  # pure: the same model, the same bytes
    assert json.loads(text) == lock


def test_memo_gives_the_same_text(model: Manifest) -> None:
    lock = surface(model)
    memo: dict[str, str] = {}
    assert dumps(lock, memo) == dumps(lock)
    assert len(memo) == len(lock["tools"]) + 2 + 2  # tools, resources+templates, prompts
    assert dumps(lock, memo) == dumps(lock)  # warm
    changed = json.loads(dumps(lock))
    changed["tools"][0]["description"] = "new"
    assert dumps(changed, memo) == dumps(changed)
    for tiny in ({}, {"tools": []}, {"a": {"b": [1, {}]}, "tools": [{"x": []}]}):
        assert dumps(tiny, {}) == dumps(tiny)


def test_a_model_against_itself_has_no_changes(model: Manifest) -> None:
    text = dumps(surface(model))
    assert diff(json.loads(text), surface(model)) == []
