"""The core of the generator: a pure function from the model to ``{path: contents}``, of
two kinds: generated files, rewritten on every build, and user-owned handler stubs,
created once and never touched again.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from mcpgen import __version__
from mcpgen import timings as timing
from mcpgen.host_entry import readme_snippets
from mcpgen.identifiers import handler_path
from mcpgen.model import examples
from mcpgen.model.types import Manifest
from mcpgen.render.deploy import deploy_data, deploy_templates
from mcpgen.render.lock import dumps as _lock_text
from mcpgen.render.lock import surface as _lock
from mcpgen.render.model_parts import Models, start_models
from mcpgen.render.models import defined_names
from mcpgen.render.spec import environment, search_json, spec_data, spec_json
from mcpgen.render.templates import render
from mcpgen.vendoring import left_out, requirements, runtime_files


@dataclass
class Output:
    generated: dict[str, str] = field(default_factory=dict)
    stubs: dict[str, str] = field(default_factory=dict)
    # user files the server uses when they exist, never created: the overrides of imported
    # operations (``handlers/tools/<tool>.py``)
    overrides: set[str] = field(default_factory=set)
    # the surface lock (``LOCK_FILE``) as data, for the build's summary of what changed
    surface: dict[str, Any] | None = None
    formatted: set[str] = field(default_factory=set)  # generated files already formatted


GENERATED_TEMPLATES = {
    "pyproject.toml": "pyproject.toml.jinja",
    "README.md": "README.md.jinja",
    ".gitignore": "gitignore.jinja",
    ".dockerignore": "dockerignore.jinja",
    "src/{pkg}/__init__.py": "package/__init__.py.jinja",
    "src/{pkg}/__main__.py": "package/__main__.py.jinja",
    "src/{pkg}/server.py": "package/server.py.jinja",
    "src/{pkg}/client.py": "package/client.py.jinja",
    "Dockerfile": "Dockerfile.jinja",
    "tests/conftest.py": "tests/conftest.py.jinja",
    "tests/test_generated.py": "tests/test_generated.py.jinja",
    "tests/cases.json": "tests/cases.json.jinja",
}
LOCK_FILE = "mcp-surface.json"  # what clients see (``mcpgen.surface``; ``mcpgen diff``)
CI_GITHUB = ".github/workflows/mcp.yml"  # on request: manifest ``ci: {github: true}``
# the manifest's parts templates see by their own names
MANIFEST_PARTS = "server capabilities tools resources prompts completions http auth deploy"


def context(manifest: Manifest, source: str | None = None) -> dict[str, Any]:
    """Everything a template may see: the model's parts, by name. ``source``: where the
    manifest is, relative to the output folder (default: its file name, beside it)."""
    source_name = manifest.source.replace("\\", "/").rsplit("/", 1)[-1]
    env = environment(manifest)
    source_path = source or source_name
    return {
        "m": manifest,
        **{name: getattr(manifest, name) for name in MANIFEST_PARTS.split()},
        "default_transport": manifest.default_transport,
        "mcpgen_version": __version__,
        "source_name": source_name,
        "source_path": source_path,
        "source_shell": shlex.quote(source_path),
        "host_snippets": readme_snippets(manifest.server.name, manifest.server.script, env),
        "credential_env": [e for e in env if e.get("credential")],
        "d": deploy_data(manifest) if manifest.deploy else None,
        # what the package imports (its runtime's included), and the user's own
        "dependencies": [*requirements(manifest), *manifest.server.dependencies],
        "runtime_left_out": left_out(manifest),  # told to mypy: imported by a carried module
    }


def render_project(manifest: Manifest, source: str | None = None) -> Output:
    """Every file of the project, its Python not yet formatted (``mcpgen.format``);
    ``source`` as for ``context``, recorded in ``pyproject.toml`` for ``mcpgen check``."""
    out = render_without_models(manifest, source)
    add_models(out, manifest, start_models(manifest)())
    return out


def render_without_models(manifest: Manifest, source: str | None = None) -> Output:
    """Every file of the project but the models package (``add_models``)."""
    pkg = manifest.server.package
    with timing.phase("surface lock"):
        surface = _lock(manifest)
    out = Output(surface=surface)
    keyed = [(t.schema_keys[0], t.input_schema) for t in manifest.tools if t.schema_keys]
    with timing.phase("render templates"), examples.kept(keyed):
        ctx = context(manifest, source)
        oldest = re.match(r"\s*>=\s*(3\.\d+)", manifest.server.python_requires)
        ctx["ci_python"] = oldest.group(1) if oldest else "3.11"
        for path, template in GENERATED_TEMPLATES.items():
            out.generated[path.format(pkg=pkg)] = render(template, **ctx)
        for path, template in deploy_templates(manifest).items():
            out.generated[path] = render(template, **ctx)
        if manifest.ci.github:
            out.generated[CI_GITHUB] = render("ci/github.yml.jinja", **ctx)
        out.generated[f"src/{pkg}/py.typed"] = ""
        out.generated.update(runtime_files(manifest))
        init = render("stubs/__init__.py.jinja", **ctx)
        out.stubs[f"src/{pkg}/handlers/__init__.py"] = init
        imported = [t for t in manifest.tools if t.http and not t.mode_tool]
        if imported:  # a home for overrides of imported operations
            out.stubs[f"src/{pkg}/handlers/tools/__init__.py"] = init
            out.overrides.update(f"src/{pkg}/{handler_path('tools', t.ident)}" for t in imported)
        for path, kind, item in stubs(manifest):
            out.stubs[path.rsplit("/", 1)[0] + "/__init__.py"] = init
            out.stubs[path] = stub(kind, item, ctx)
    with timing.phase("JSON files"):  # _spec.json, _search.json (search and code modes), lock
        data = spec_data(manifest)
        out.generated[f"src/{pkg}/_spec.json"] = spec_json(manifest, data)
        index = search_json(data)
        if index is not None:
            out.generated[f"src/{pkg}/_search.json"] = index
        out.generated[LOCK_FILE] = _lock_text(surface)
    return out


def add_models(out: Output, manifest: Manifest, models: Models) -> None:
    """The models package into ``out``: ``__init__`` (each module with every class it
    defines, nested models too), ``_base`` and the modules."""
    pkg = manifest.server.package
    classes = {}
    for module in models.modules:  # the planned classes first
        found = defined_names(models.sources[module.name])
        classes[module.name] = [*module.classes, *sorted(found - set(module.classes))]
    ctx = context(manifest)
    out.generated[f"src/{pkg}/models/__init__.py"] = render(
        "package/models_init.py.jinja", **ctx, model_modules=classes
    )
    if classes:
        out.generated[f"src/{pkg}/models/_base.py"] = render("package/models_base.py.jinja", **ctx)
    out.generated.update(
        {f"src/{pkg}/models/{name}.py": text for name, text in models.sources.items()}
    )
    out.formatted.update(f"src/{pkg}/models/{name}.py" for name in models.cached)


def stubs(manifest: Manifest) -> Iterator[tuple[str, str, Any]]:
    """(path, handler folder, item) of every handler stub (its template: the kind, singular)."""
    for kind in ("tools", "resources", "prompts", "completions"):
        for item in getattr(manifest, f"handled_{kind}"):
            yield f"src/{manifest.server.package}/{handler_path(kind, item.ident)}", kind, item


def stub(kind: str, item: Any, ctx: dict[str, Any]) -> str:
    return render(f"stubs/{kind[:-1]}.py.jinja", **ctx, **{kind[:-1]: item})
