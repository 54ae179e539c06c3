"""Names assigned once (issue 29, item 3): what validates builds without two definitions of
one Python name. The model's names come from ``mcpgen.model.names.assign``, and the check
looks for clashes among those same names."""

from __future__ import annotations

import ast
import json
from collections import Counter
from pathlib import Path

import property_harness as harness
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from manifest_cases import Case, manifests

from mcpgen.cli import main
from mcpgen.identifiers import (
    CLIENT_BASE_CLASSES,
    CLIENT_NAMES,
    MOST_IDENT,
    handler_path,
    python_reading,
)
from mcpgen.model.types import Manifest
from mcpgen.pipeline import load_manifest

TRAVEL = {
    "mcpgen": 1,
    "server": {"name": "travel"},
    "tools": [{"name": "ping", "description": "ping"}],
    "resources": [
        {"name": "activities", "uriTemplate": "travel://activities/{city}", "description": "a"},
        {"name": "outings", "uriTemplate": "travel:activities:{city}", "description": "b"},
    ],
}


def duplicates(names: list[str]) -> list[str]:
    return sorted(name for name, count in Counter(names).items() if count > 1)


def defined(tree: ast.AST) -> list[str]:
    """The names a module (or class body) binds with def, class or an assignment."""
    body = tree.body if isinstance(tree, ast.Module | ast.ClassDef) else []
    found: list[str] = []
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.append(node.name)
        elif isinstance(node, ast.Assign):
            found += [t.id for t in node.targets if isinstance(t, ast.Name)]
    return found


def test_two_templates_with_one_completion_name_each_build_sound_code(tmp_path: Path) -> None:
    """``travel://activities/{city}`` and ``travel:activities:{city}``: one completion each,
    named by the resource's name or by its template, validate and build; every completion
    gets its own wiring function and handler file."""
    for by in ("name", "uriTemplate"):
        manifest = dict(TRAVEL)
        manifest["completions"] = [
            {"resource": r[by], "argument": "city", "handler": True} for r in TRAVEL["resources"]
        ]
        folder = tmp_path / by
        folder.mkdir()
        (folder / "m.yaml").write_text(yaml.safe_dump(manifest), "utf-8")
        out = folder / "out"
        result = CliRunner().invoke(main, ["build", str(folder / "m.yaml"), "-o", str(out)])
        assert result.exit_code == 0, result.output
        package = out / "src" / "travel_mcp"
        server = ast.parse((package / "server.py").read_text("utf-8"))
        completes = [n for n in defined(server) if n.startswith("_complete_")]
        assert len(completes) == 2 and duplicates(completes) == []
        spec = json.loads((package / "_spec.json").read_text("utf-8"))
        handlers = [c["handler"] for c in spec["completions"]]
        assert len(set(handlers)) == 2
        assert all((out / h).is_file() for h in handlers)


def namespaces(manifest: Manifest) -> dict[str, list[str]]:
    """Each namespace of generated code and the names the model puts in it."""
    classes = [*manifest.shared_defs, *(p.class_name for p in manifest.prompts)]
    for tool in manifest.tools:
        for model in (tool.input_model, tool.output_model):
            if model is not None and model not in manifest.shared_defs:
                classes.append(model)
    return {
        "server.py": [
            *(f"_tool_{t.ident}" for t in manifest.tools),
            *(f"_resource_{r.ident}" for r in manifest.resources if r.has_handler),
            *(f"_prompt_{p.ident}" for p in manifest.prompts if p.handler),
            *(f"_complete_{c.ident}" for c in manifest.handled_completions),
        ],
        "client": [
            *(t.client_method for t in manifest.tools),
            *(r.client_method for r in manifest.resources),
            *(p.client_method for p in manifest.prompts),
        ],
        "models": classes,
        "handlers": [
            *(handler_path("tools", t.ident) for t in manifest.tools),
            *(handler_path("resources", r.ident) for r in manifest.resources if r.has_handler),
            *(handler_path("prompts", p.ident) for p in manifest.prompts if p.handler),
            *(handler_path("completions", c.ident) for c in manifest.handled_completions),
        ],
    }


def assert_sound(folder: Path, manifest: object, api: object | None) -> None:
    harness.write_case(folder, manifest, api)
    loaded = load_manifest(folder / harness.MANIFEST)
    if loaded.manifest is None:
        assert loaded.problems.errors
        return
    for namespace, names in namespaces(loaded.manifest).items():
        assert duplicates(names) == [], (namespace, manifest)


SCHEMES = ("travel://", "travel:", "travel://x/")
SEPARATORS = ("/", ":", "-", "_", ".")


@st.composite
def punctuated(draw: st.DrawFn) -> dict[str, object]:
    """Templates that differ only in punctuation, with completions by name or template."""
    template = st.builds(
        "{}activities{}{{city}}".format, st.sampled_from(SCHEMES), st.sampled_from(SEPARATORS)
    )
    templates = draw(st.lists(template, min_size=2, max_size=4, unique=True))
    resources = [{"name": f"r{i}", "uriTemplate": t} for i, t in enumerate(templates)]
    completions = [
        {"resource": r[draw(st.sampled_from(("name", "uriTemplate")))], "argument": "city"}
        | ({"values": ["x"]} if draw(st.integers(0, 3)) == 0 else {"handler": True})
        for r in resources
    ]
    return {**TRAVEL, "resources": resources, "completions": completions}


@settings(max_examples=40, deadline=None, database=None, derandomize=True)
@given(manifest=punctuated())
def test_templates_differing_in_punctuation_get_distinct_names(manifest: dict[str, object]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        assert_sound(Path(folder), manifest, None)


@settings(
    max_examples=40,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(case=manifests())
def test_what_validates_has_one_definition_per_name(case: Case) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        assert_sound(Path(folder), case.manifest, case.api)


RUNTIME = Path(__file__).resolve().parent.parent / "mcpgen" / "runtime"
CLIENT_BASES = {
    "client.py": ("BaseClient", "BaseSyncClient"),
    "client_legacy.py": ("LegacyClient",),
}
CLIENT_BASES["tasks_client.py"] = ("TaskClient",)


def base_client_names() -> set[str]:
    """What the typed client's base classes define: methods, class attributes, ``self.x``."""
    found: set[str] = set()
    for module, classes in CLIENT_BASES.items():
        tree = ast.parse((RUNTIME / module).read_text("utf-8"))
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name in classes:
                found.update(defined(node))
                found.update(
                    n.attr
                    for n in ast.walk(node)
                    if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)
                )
                found.update(
                    n.target.id
                    for n in node.body
                    if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
                )
    return {name for name in found if not name.startswith("__")}


def test_client_names_hold_every_public_name_of_the_client_base_classes() -> None:
    """``CLIENT_NAMES`` is what a tool's method may not be called: a tool named ``extensions``
    overrode ``BaseClient.extensions`` (mypy --strict failed, connect raised TypeError)."""
    public = {name for name in base_client_names() if not name.startswith("_")}
    assert public - CLIENT_NAMES == set()


def test_client_base_classes_are_every_client_class_of_the_runtime() -> None:
    classes = {
        node.name
        for module in CLIENT_BASES
        for node in ast.parse((RUNTIME / module).read_text("utf-8")).body
        if isinstance(node, ast.ClassDef) and node.name.endswith("Client")
    }
    assert classes == CLIENT_BASE_CLASSES


def test_servers_named_like_a_client_base_class_build(tmp_path: Path) -> None:
    """A server called ``task`` made a class ``TaskClient`` next to the imported base class
    of that name (``base``: ``BaseSyncClient``): mypy --strict failed (no-redef)."""
    for name in ("task", "base", "legacy", "base-sync"):
        manifest = {
            "mcpgen": 1,
            "server": {"name": name},
            "transports": {"offer": ["stdio", "http", "sse"]},
            "tools": [{"name": "go", "description": "d", "task": "optional"}],
        }
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(manifest), "utf-8")
        out = tmp_path / name
        result = CliRunner().invoke(main, ["build", str(tmp_path / f"{name}.yaml"), "-o", str(out)])
        assert result.exit_code == 0, result.output
        (client,) = out.glob("src/*/client.py")
        tree = ast.parse(client.read_text("utf-8"))
        imported = [
            a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom) for a in n.names
        ]
        assert duplicates(imported + defined(tree)) == [], name


def test_long_names_get_handler_modules_a_file_can_hold(tmp_path: Path) -> None:
    """A handler's module is named by its entry's identifier: a 300-character prompt name
    or URI template made a file name longer than 255 bytes, and the build failed to write
    it. Long identifiers are cut, a digest keeping two of them apart."""
    long = "a" * 300
    manifest = {
        "mcpgen": 1,
        "server": {"name": "long"},
        "resources": [
            {"name": "r" + long, "uriTemplate": f"x://{long}/{{city}}", "description": "d"},
            {"name": "r" + long + "b", "uriTemplate": "y://{city}", "description": "d"},
        ],
        "prompts": [
            {"name": "p" + long, "description": "d", "arguments": [{"name": "a"}], "handler": True}
        ],
        "completions": [
            {"resource": f"x://{long}/{{city}}", "argument": "city", "handler": True},
            {"prompt": "p" + long, "argument": "a", "handler": True},
        ],
    }
    (tmp_path / "m.yaml").write_text(yaml.safe_dump(manifest), "utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["build", str(tmp_path / "m.yaml"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    modules = [p.stem for p in out.glob("src/long_mcp/handlers/*/*.py") if p.stem != "__init__"]
    assert len(modules) == 5 and max(map(len, modules)) <= MOST_IDENT, modules


def test_typed_client_names_shadow_nothing(tmp_path: Path) -> None:
    """A tool's method never shadows what the client's base classes define (``call_result``:
    every call went to the tool's method) nor a module its annotations name (``models``);
    a method's keyword arguments never shadow its locals (``result``) or the module names
    its body calls (``parse``, ``expand``, ``models.X``): each made mypy --strict fail."""
    tools = [
        {"name": n, "description": "d"}
        for n in ("models", "types", "call_result", "start_task", "wait_task", "client")
    ]
    taken = ("given", "result", "output", "parse", "expand", "arguments", "progress", "self")
    properties = {name: {"type": "integer"} for name in taken}
    tools.append(
        {
            "name": "go",
            "description": "d",
            "task": "optional",
            "input": {
                "type": "object",
                "properties": {**properties, "models": {"$ref": "#/$defs/T"}},
            },
            "output": {"type": "object", "properties": {"x": {"type": "string"}}},
        }
    )
    manifest = {
        "mcpgen": 1,
        "server": {"name": "clash"},
        "$defs": {"T": {"type": "object", "properties": {"a": {"type": "string"}}}},
        "tools": tools,
        "prompts": [{"name": "p", "description": "p", "messages": [{"role": "user", "text": "x"}]}],
        "resources": [{"name": "r", "uriTemplate": "c://{expand}/{result}", "description": "r"}],
    }
    (tmp_path / "m.yaml").write_text(yaml.safe_dump(manifest), "utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["build", str(tmp_path / "m.yaml"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    tree = ast.parse((out / "src" / "clash_mcp" / "client.py").read_text("utf-8"))
    module = {
        a.asname or a.name
        for n in tree.body
        if isinstance(n, ast.ImportFrom | ast.Import)
        for a in n.names
    }
    client = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ClashClient")
    methods = [n for n in client.body if isinstance(n, ast.AsyncFunctionDef)]
    assert len(methods) == len(tools) + 2
    shadowed = {m.name for m in methods} & (module | base_client_names())
    assert shadowed == set()
    for method in methods:
        params = {a.arg for a in (*method.args.args, *method.args.kwonlyargs)} - {"self"}
        body = [n for statement in method.body for n in ast.walk(statement)]
        bound = {n.id for n in body if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        used = {n.func.id for n in body if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        used |= {
            n.value.id
            for n in body
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
        }
        assert params & (bound | (used & module)) == set(), method.name


def test_python_reading_normalizes_only_what_python_does() -> None:
    """NFKC as Python reads an identifier: ASCII as it is (the fast path), ``ﬁ`` folded
    inside an otherwise ASCII name, ``²`` (not an identifier character) kept."""
    assert all(python_reading(chr(i)) == chr(i) for i in range(128))
    assert python_reading("repo_ﬁle") == "repo_file"
    assert python_reading("µs") == "μs"
    assert python_reading("x²") == "x²"
