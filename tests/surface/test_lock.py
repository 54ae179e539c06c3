"""The surface lock built from real models: shape, sizes, hidden items, meta tools, text."""

from __future__ import annotations

import json
import math
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from mcpgen.model.types import Manifest
from mcpgen.pipeline import load_manifest
from mcpgen.render.lock import dumps, surface, tools_list_cost, wire
from mcpgen.surface.diff import diff

pytestmark = pytest.mark.timeout(120)
Json = Any

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


def test_resource_and_prompt_scopes_come_from_the_model(model: Manifest) -> None:
    resources = tuple(replace(r, scopes=("b", "a", "b")) for r in model.resources)
    prompts = tuple(replace(p, scopes=("p",)) for p in model.prompts)
    lock = surface(replace(model, resources=resources, prompts=prompts))
    assert lock["resources"][0]["scopes"] == ["a", "b"]
    assert lock["resourceTemplates"][0]["scopes"] == ["a", "b"]
    assert [p["scopes"] for p in lock["prompts"]] == [["p"], ["p"]]
    assert surface(model)["resources"][0]["scopes"] == []


def test_resource_and_prompt_scopes_from_a_manifest(tmp_path: Path) -> None:
    path = tmp_path / "mcpgen.yaml"
    path.write_text(
        MANIFEST.replace("    text: hello\n", "    text: hello\n    scopes: [lab.docs]\n").replace(
            "  - name: hello\n", "  - name: hello\n    scopes: [lab.chat, lab.a]\n"
        ),
        encoding="utf-8",
    )
    lock = surface(load(path))
    assert lock["resources"][0]["scopes"] == ["lab.docs"]
    assert {p["name"]: p["scopes"] for p in lock["prompts"]} == {
        "hello": ["lab.a", "lab.chat"], "review": [],
    }  # fmt: skip


@pytest.mark.parametrize("mode", ["search", "code"])
def test_search_and_code_mode_list_operations(tmp_path: Path, mode: str) -> None:
    from mcpgen.cli.build import context_cost
    from mcpgen.model.types import mode_tools

    (tmp_path / "shop.yaml").write_text(SHOP_SPEC.read_text())
    manifest = tmp_path / "mcpgen.yaml"
    manifest.write_text(
        "mcpgen: 1\nserver: {name: shop}\n"
        "tools:\n  - name: ping\n    description: Declared beside the API.\n"
        f"openapi: {{source: shop.yaml, mode: {mode}}}\n"
    )
    model = load(manifest)
    lock = surface(model)
    own = sorted(d["name"] for d in mode_tools(mode))
    assert own and [t["name"] for t in lock["tools"]] == sorted(["ping", *own])
    imported = sorted(t.name for t in model.tools if t.http)
    assert len(imported) > 3
    # what call_operation / execute reach: the imported operations (ping is a tool)
    assert sorted(t["name"] for t in lock["operations"]) == imported
    # the figure the build prints is the lock's total
    assert lock["totals"]["toolsListBytes"] == context_cost(model)[1]
    # one tool per operation: no operations list, every operation a tool
    direct = surface(replace(model, upstream={**(model.upstream or {}), "mode": "tools"}))
    assert "operations" not in direct
    assert [t["name"] for t in direct["tools"]] == sorted([*imported, "ping"])
    assert direct["totals"]["toolsListBytes"] > lock["totals"]["toolsListBytes"]


def test_totals_are_the_builds_context_cost(model: Manifest) -> None:
    from mcpgen.cli.build import context_cost

    lock = surface(model)
    count, size = context_cost(model)
    assert count == 2  # the hidden tool is not listed
    assert lock["totals"] == {"toolsListBytes": size, "toolsListTokens": math.ceil(size / 4)}


def test_canonical_text(model: Manifest) -> None:
    lock = surface(model)
    text = dumps(lock)
    assert text == json.dumps(lock, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert "Ünïcode" in text  # not escaped
    assert dumps(surface(model)) == text  # pure: the same model, the same bytes
    assert json.loads(text) == lock


def _random_json(rng: random.Random, depth: int, shared: list[Json]) -> Json:
    roll = rng.random()
    if depth > 4 or roll < 0.35:
        return rng.choice(
            [0, -7, 2**70, 1.5, -0.0, 1e300, 3.14159, True, False, None, "", "a", "Ünï\n\"☃",
             "\u2028 tab\t", "\ud83d\ude00"]
        )  # fmt: skip
    if roll < 0.45 and shared:
        return rng.choice(shared)  # the same object at another place (or depth)
    if roll < 0.7:
        value: Json = [_random_json(rng, depth + 1, shared) for _ in range(rng.randrange(4))]
        if rng.random() < 0.2:
            value = tuple(value)
    else:
        keys = ["b", "a", "é", "$defs", "Z", "", "key with space", "x/y"]
        value = {
            k: _random_json(rng, depth + 1, shared) for k in rng.sample(keys, rng.randrange(5))
        }
    shared.append(value)
    return value


def test_text_is_the_standard_librarys_byte_for_byte() -> None:
    rng = random.Random(18)
    for _ in range(300):
        value = {"mcpSurface": 1, "tools": [_random_json(rng, 0, []) for _ in range(3)]}
        expected = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        assert dumps(value) == expected
    tiny: Any
    for tiny in ({}, {"tools": []}, {"a": {"b": [1, {}]}, "tools": [{"x": []}]}, {1: "x"}):
        assert dumps(tiny) == json.dumps(tiny, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def test_a_big_lock_is_one_item_per_line() -> None:
    """Over ``READABLE_ITEMS`` items (GitHub's API: 1,186 operations) the lock is written by
    the C encoder, one member and one item per line: the same data, keys sorted, and a
    change to one operation is one line of the diff."""
    from mcpgen.literals import READABLE_ITEMS

    tools = [
        {"name": f"t{i}", "b": "Ünï", "a": [1, {"z": 1, "y": None}]} for i in range(READABLE_ITEMS)
    ]
    lock = {"tools": tools[:2], "server": {"name": "x", "b": 1}, "prompts": [], "mcpSurface": 1}
    lock["operations"] = [*tools[2:], {"name": "last"}]
    text = dumps(lock)
    assert json.loads(text) == lock and dumps(json.loads(text)) == text
    one = '{"a": [1, {"y": null, "z": 1}], "b": "Ünï", "name": "t%d"}'
    assert text.splitlines()[:5] == [
        "{",
        '"mcpSurface": 1,',
        '"operations": [',
        one % 2 + ",",
        one % 3 + ",",
    ]
    assert text.endswith('{"name": "last"}\n],\n"prompts": [],\n"server": {"b": 1, "name": "x"},\n'
                         f'"tools": [\n{one % 0},\n{one % 1}\n]\n}}\n')  # fmt: skip
    del lock["operations"]  # a small lock stays indented
    assert dumps(lock) == json.dumps(lock, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def test_equal_items_of_a_big_lock_are_shared() -> None:
    """A rebuild's diff gets the new lock's very item where its line is the old one's (it
    need not encode 1,188 equal operations); only equal JSON is: ``true`` is not ``1``."""
    from mcpgen.literals import READABLE_ITEMS
    from mcpgen.render.lock import share_equal

    ops = [{"name": f"o{i}", "readOnlyHint": True, "n": 1.0} for i in range(READABLE_ITEMS)]
    old = {"operations": ops, "tools": [{"name": "t", "x": True}], "server": {"name": "s"}}
    new = json.loads(json.dumps(old))
    new["operations"][0]["description"] = "changed"
    new["operations"][1]["readOnlyHint"] = 1  # == True in Python, another value in JSON
    new["operations"][2]["n"] = 1
    before = json.loads(dumps(old))
    share_equal(before, new, dumps(old), dumps(new))
    shared = [a is b for a, b in zip(before["operations"], new["operations"], strict=True)]
    assert before == old and shared == [False, False, False, *[True] * (READABLE_ITEMS - 3)]
    assert before["tools"][0] is new["tools"][0] and before["server"] is not new["server"]
    changed = {c.item for c in diff(before, new)}
    assert changed == {c.item for c in diff(json.loads(dumps(old)), new)} and changed
    small = {"tools": [{"name": "t"}]}  # indented: nothing shared
    share_equal(copy := json.loads(dumps(small)), small, dumps(small), dumps(small))
    assert copy == small and copy["tools"][0] is not small["tools"][0]


def test_text_of_shared_definitions(model: Manifest) -> None:
    """A definition embedded in many tools (one object) is written right at every depth."""
    note = {"type": "object", "properties": {"id": {"type": "string"}}}
    lock = surface(model)
    lock["tools"][0]["inputSchema"] = {"$defs": {"Note": note}, "properties": {"n": note}}
    lock["tools"][1]["outputSchema"] = note
    assert dumps(lock) == json.dumps(lock, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def test_a_model_against_itself_has_no_changes(model: Manifest) -> None:
    text = dumps(surface(model))
    assert diff(json.loads(text), surface(model)) == []


def test_the_summary_compares_the_lock_it_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build's summary compares the lock ``previous_lock`` read: the file read again
    (changed meanwhile, with as many items) gave equal lines to items that differ (r6)."""
    from mcpgen.cli.build import LOCK_FILE, previous_lock, surface_summary
    from mcpgen.literals import READABLE_ITEMS
    from mcpgen.render import Output
    from mcpgen.surface import sources

    monkeypatch.setattr(sources, "check", lambda lock, where: None)  # (a lock of names only)

    ops = [{"name": f"o{i}", "description": "d"} for i in range(READABLE_ITEMS + 1)]
    old = {"operations": ops, "tools": [], "server": {"name": "s"}}
    new = json.loads(json.dumps(old))
    new["operations"][0]["description"] = "changed"
    (tmp_path / LOCK_FILE).write_text(dumps(old))
    lock = previous_lock(tmp_path)
    assert lock is not None
    (tmp_path / LOCK_FILE).write_text(dumps(new))  # (another writer, between the two)
    lines, _ = surface_summary(tmp_path, lock, Output(generated={LOCK_FILE: dumps(new)}))
    assert "1 docs change" in lines[0], lines
