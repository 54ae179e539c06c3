"""The core of the generator: a pure function from the model to ``{path: contents}``.

Writing, ``--check`` and ``--diff`` are thin wrappers over this map (see ``writer``).
Two kinds of files come out: generated files, rewritten on every build, and user-owned
handler stubs, created once and never touched again.
"""

from __future__ import annotations

import functools
import re
import shlex
import sys
from dataclasses import dataclass, field
from typing import Any

import click

from mcpgen import __version__
from mcpgen import timings as timing
from mcpgen.format import FormatJob
from mcpgen.format.pool import Workers, forked
from mcpgen.hosts.install import readme_snippets
from mcpgen.identifiers import handler_path
from mcpgen.model.types import Manifest
from mcpgen.render.deploy import deploy_context, deploy_templates
from mcpgen.render.model_parts import ModelJob
from mcpgen.render.spec import READABLE_TOOLS, environment, search_json, spec_data, spec_json
from mcpgen.render.templates import render
from mcpgen.surface.lock import dumps as _lock_text
from mcpgen.surface.lock import surface as _lock
from mcpgen.vendoring import runtime_files


@dataclass
class Output:
    generated: dict[str, str] = field(default_factory=dict)
    stubs: dict[str, str] = field(default_factory=dict)
    # user files the server uses when they exist, never created: the overrides of imported
    # operations (``handlers/tools/<tool>.py``)
    overrides: set[str] = field(default_factory=set)
    # the surface lock (``LOCK_FILE``) as data, for the build's summary of what changed
    surface: dict[str, Any] | None = None


CLIENT_TEMPLATE = "package/client.py.jinja"
# Outputs (besides the client) of templates that lay code out as black does, checked by
# tests/test_preformatted.py: their pieces ``preformatted`` recognises skip black.
LAID_OUT = ("tests/test_generated.py",)

GENERATED_TEMPLATES = {
    "pyproject.toml": "pyproject.toml.jinja",
    "README.md": "README.md.jinja",
    ".gitignore": "gitignore.jinja",
    "src/{pkg}/__init__.py": "package/__init__.py.jinja",
    "src/{pkg}/__main__.py": "package/__main__.py.jinja",
    "src/{pkg}/server.py": "package/server.py.jinja",
    "src/{pkg}/client.py": CLIENT_TEMPLATE,
    "Dockerfile": "Dockerfile.jinja",
    "tests/conftest.py": "tests/conftest.py.jinja",
    "tests/test_generated.py": "tests/test_generated.py.jinja",
    "tests/cases.json": "tests/cases.json.jinja",
}
LOCK_FILE = "mcp-surface.json"  # what clients see (``mcpgen.surface``; ``mcpgen diff``)
CI_GITHUB = ".github/workflows/mcp.yml"  # on request: manifest ``ci: {github: true}``
def context(manifest: Manifest, source: str | None = None) -> dict[str, Any]:
    """Everything a template may see: the model's parts, by name. ``source``: where the
    manifest is, relative to the output folder (default: its file name, beside it)."""
    source_name = manifest.source.replace("\\", "/").rsplit("/", 1)[-1]
    source_path = source or source_name
    return {
        "m": manifest,
        "server": manifest.server,
        "capabilities": manifest.capabilities,
        "tools": manifest.tools,
        "resources": manifest.resources,
        "prompts": manifest.prompts,
        "completions": manifest.completions,
        "http": manifest.http,
        "auth": manifest.auth,
        "default_transport": manifest.default_transport,
        "mcpgen_version": __version__,
        "source_name": source_name,
        "source_path": source_path,
        "source_shell": shlex.quote(source_path),
        "host_snippets": readme_snippets(
            manifest.server.name, manifest.server.script, environment(manifest)
        ),
        "deploy": None,
        **deploy_context(manifest),
    }


def render_project(
    manifest: Manifest,
    show_progress: bool = False,
    workers: Workers | None = None,
    source: str | None = None,
) -> Output:
    """Render and format every file. One process pool serves the whole build: the model
    generator's runs start first and the formatting of the other files queues behind them.

    ``source`` is where the manifest is, relative to the output folder (POSIX): recorded in
    ``pyproject.toml`` (``[tool.mcpgen] source``) for ``mcpgen check``; by default the
    manifest's file name (a manifest beside the project)."""
    if workers is None:
        with Workers() as own:
            return render_project(manifest, show_progress, own, source)
    pkg = manifest.server.package
    with timing.phase("surface lock"):
        surface = _lock(manifest)
    # A big API's JSON files (half a second) are written by a child while this process
    # plans the models, renders the other files and formats them.
    big = len(manifest.tools) > READABLE_TOOLS
    json_files = (forked if big else functools.partial)(_json_files, manifest, surface)
    with timing.phase("models: cache or start"):
        models = ModelJob(manifest, workers)
    with timing.phase("render templates"):
        out = _render_templates(manifest, source)
        planned = [(m.name, m.classes) for m in models.modules]
        package = _models_package(manifest, planned)
    out.surface = surface
    preformatted = set(runtime_files(manifest))
    python = {
        path: text
        for files in (out.generated, out.stubs)
        for path, text in files.items()
        if path.endswith(".py") and path not in preformatted
    }
    with timing.phase("format"):
        formatted = _format({**python, **package}, workers, manifest, show_progress)
    with timing.phase("JSON files (child)"):
        out.generated.update(json_files())
    with timing.phase("models (datamodel-code-generator)"):
        sources = models.result()
    # every class a part defines is re-exported (nested models too), not only the planned
    ended = [(m.name, classes_in(sources[m.name], m.classes)) for m in models.modules]
    if ended != planned:
        package = _models_package(manifest, ended)
        formatted.update(FormatJob(package, scope=manifest.server.package).run())
    out.generated.update({path: formatted[path] for path in package})
    out.generated.update({f"src/{pkg}/models/{name}.py": text for name, text in sources.items()})
    for files in (out.generated, out.stubs):
        files.update({path: formatted[path] for path in files if path in formatted})
    return out


_CLASS = re.compile(r"^class ([A-Za-z]\w*)\b|^([A-Z]\w*)(?:: TypeAlias)? = ", re.M)


def classes_in(source: str, planned: tuple[str, ...]) -> tuple[str, ...]:
    """The public classes (and type aliases) a generated models module defines, the
    planned ones first, in order."""
    found = {a or b for a, b in _CLASS.findall(source)}
    return (*planned, *sorted(found - set(planned)))


def _client_path(pkg: str) -> str:
    return f"src/{pkg}/client.py"


def _models_package(
    manifest: Manifest, modules: list[tuple[str, tuple[str, ...]]]
) -> dict[str, str]:
    """The models package's own files: ``__init__`` (lists the modules) and ``_base``."""
    pkg = manifest.server.package
    files = {
        f"src/{pkg}/models/__init__.py": render(
            "package/models_init.py.jinja",
            **context(manifest),
            model_modules={name: list(classes) for name, classes in modules},
        )
    }
    if modules:
        files[f"src/{pkg}/models/_base.py"] = render(
            "package/models_base.py.jinja", **context(manifest)
        )
    return files


def _json_files(manifest: Manifest, surface: dict[str, Any]) -> dict[str, str]:
    """``_spec.json``, ``_search.json`` (search and code modes) and the surface lock."""
    pkg = manifest.server.package
    data = spec_data(manifest)
    files = {f"src/{pkg}/_spec.json": spec_json(manifest, data)}
    index = search_json(data)
    if index is not None:
        files[f"src/{pkg}/_search.json"] = index
    files[LOCK_FILE] = _lock_text(surface)
    return files


def _render_templates(manifest: Manifest, source: str | None = None) -> Output:
    """Every file but the models, the lock and the spec files, unformatted."""
    pkg = manifest.server.package
    ctx = context(manifest, source)
    oldest = re.match(r"\s*>=\s*(3\.\d+)", manifest.server.python_requires)
    ctx["ci_python"] = oldest.group(1) if oldest else "3.11"
    out = Output()
    for path, template in GENERATED_TEMPLATES.items():
        out.generated[path.format(pkg=pkg)] = render(template, **ctx)
    for path, template in deploy_templates(manifest).items():
        out.generated[path] = render(template, **ctx)
    if manifest.ci.github:
        out.generated[CI_GITHUB] = render("ci/github.yml.jinja", **ctx)
    out.generated[f"src/{pkg}/py.typed"] = ""
    out.generated.update(runtime_files(manifest))

    handlers = f"src/{pkg}/handlers"
    init = render("stubs/__init__.py.jinja", **ctx)
    out.stubs[f"{handlers}/__init__.py"] = init
    kinds: dict[str, list[tuple[str, str, dict[str, Any]]]] = {
        "tools": [
            ("stubs/tool.py.jinja", t.ident, {"tool": t}) for t in manifest.tools if not t.http
        ],
        "resources": [
            ("stubs/resource.py.jinja", r.ident, {"resource": r})
            for r in manifest.resources
            if r.has_handler
        ],
        "prompts": [
            ("stubs/prompt.py.jinja", p.ident, {"prompt": p}) for p in manifest.prompts if p.handler
        ],
        "completions": [
            ("stubs/completion.py.jinja", c.ident, {"completion": c})
            for c in manifest.completions
            if c.handler
        ],
    }
    imported = [t for t in manifest.tools if t.http and not t.mode_tool]
    if imported:  # a home for overrides of imported operations
        out.stubs[f"{handlers}/tools/__init__.py"] = init
        out.overrides.update(f"src/{pkg}/{handler_path('tools', t.ident)}" for t in imported)
    for kind, items in kinds.items():
        if not items:
            continue
        out.stubs[f"{handlers}/{kind}/__init__.py"] = init
        for template, ident, extra in items:
            out.stubs[f"src/{pkg}/{handler_path(kind, ident)}"] = render(template, **ctx, **extra)
    return out


def _format(
    python: dict[str, str], workers: Workers, manifest: Manifest, show_progress: bool
) -> dict[str, str]:
    # These templates lay code out as black does: only their pieces with long lines need it.
    pkg = manifest.server.package
    laid_out = {_client_path(pkg), *(path.format(pkg=pkg) for path in LAID_OUT)}
    job = FormatJob(python, workers, scope=pkg, laid_out=laid_out).start()
    # A bar on a terminal (big builds spend most of their time here); nothing when piped.
    with click.progressbar(
        length=job.units,
        label="formatting",
        file=sys.stderr,
        hidden=not show_progress or not job.units,
    ) as bar:
        return job.run(progress=bar.update)
