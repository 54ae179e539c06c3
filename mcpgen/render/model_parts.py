"""The ``models`` package: shared definitions in one module, tool and prompt models in parts.

datamodel-code-generator runs once per module, not once per build:

* ``_shared`` holds the manifest's shared ``$defs`` (an OpenAPI spec's component schemas);
* ``_partNN`` modules hold the tool and prompt models, spread over parts by a hash of the
  class name (so adding or changing a tool changes one part); a reference to a shared
  definition becomes an import from ``_shared`` (the generator's ``external_ref_mapping``),
  and the generator reads only the shared definitions the part uses;
* tools with the same schema share a class (the others subclass the first, in the same
  part), and a tool schema that copies a shared class subclasses it (``modelgen``).

Each module is cached by the schemas it is made from, so a rebuild after one operation
changed runs the generator on one part. Modules still to generate go to the build's process
pool (``workers``): generating and black-formatting a module is one task, beside the
formatting of the other files. ``models/__init__.py`` imports a part when one of its
names is first used: a server loads a tool's models when the tool is first called.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from functools import cache as cache_result
from importlib import metadata
from pathlib import Path
from typing import Any

from mcpgen.check.schemas import ref_strings
from mcpgen.format import cache, format_file
from mcpgen.format import warm as format_warm
from mcpgen.format.pool import Workers, done
from mcpgen.model.types import Manifest
from mcpgen.problems import InputError
from mcpgen.render import models as modelgen
from mcpgen.render.models import (
    DATA_KEYWORDS,
    SCHEMA_MAPS,
    combined_document,
    defined_names,
    generator_options,
    generator_settings,
    locate_failure,
    model_schemas,
    run_generator,
    share_duplicates,
    unescape,
)

Json = Any
SHARED = "_shared"
# Tool/prompt models per part, on average. Each generator run re-reads the shared schemas
# its part uses, so fewer, bigger parts cost less in all; a changed schema regenerates one
# part, which must stay small enough to hide behind the rest of a rebuild (bench/HISTORY.md).
PART_SIZE = 80
BACKGROUND_MODELS = 1  # models still to generate before the process pool is used
ONE_TASK_MODELS = 200  # fewer models still to generate than this: one pool task for all
_SHARED_FILE = "__mcpgen_shared__.json"  # where a part's references to shared schemas point


@dataclass(frozen=True)
class ModelModule:
    name: str  # module name inside the models package: "_shared", "_part03"
    classes: tuple[str, ...]  # the names it defines for the package to re-export
    document: dict[str, Json]  # what datamodel-code-generator gets
    shared: dict[str, Json] | None  # the ``_shared`` definitions its references point into
    shared_key: str = ""  # digest of ``shared`` (part of the cache key)


def _parts(count: int) -> int:
    return max(1, -(-count // PART_SIZE))


def _bucket(name: str, parts: int) -> int:
    return int(hashlib.sha256(name.encode()).hexdigest()[:8], 16) % parts


def _def_name(ref: str) -> tuple[str, bool] | None:
    """(definition name, whether the reference points inside it) for ``#/$defs/...``."""
    if not ref.startswith("#/$defs/"):
        return None
    segments = ref[len("#/$defs/") :].split("/")
    return unescape(segments[0]), len(segments) > 1


def _externalize(node: Json, shared: set[str], used: set[str], names: bool = False) -> Json:
    """Point references to shared definitions at the shared file (imports, once mapped);
    the names referred to are added to ``used``. ``names``: ``node`` maps property (or
    definition) names to schemas, none of them a keyword."""
    if isinstance(node, list):
        return [_externalize(item, shared, used) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Json] = {}
    for key, value in node.items():
        if names:
            out[key] = _externalize(value, shared, used)
            continue
        target = _def_name(value) if key == "$ref" and isinstance(value, str) else None
        if target is not None and target[0] in shared:
            if target[1]:
                raise _NotSplittable(value)
            used.add(target[0])
            out[key] = _SHARED_FILE + value
            continue
        if key in DATA_KEYWORDS:
            out[key] = value
        else:
            out[key] = _externalize(value, shared, used, key in SCHEMA_MAPS)
    return out


def _references(schema: Json) -> set[str]:
    """Names of the definitions ``schema`` refers to (``#/$defs/NAME...``)."""
    return {target[0] for ref in ref_strings(schema) if (target := _def_name(ref)) is not None}


def _closure(roots: set[str], deps: dict[str, set[str]]) -> list[str]:
    seen: set[str] = set()
    stack = list(roots)
    while stack:
        name = stack.pop()
        if name in seen or name not in deps:
            continue
        seen.add(name)
        stack.extend(deps[name])
    return sorted(seen)


class _NotSplittable(Exception):
    """A reference into the inside of a shared definition: generate as one module."""


def plan(manifest: Manifest) -> list[ModelModule]:
    """The modules of the models package. A part gets, as the file its references point
    into, only the shared definitions it needs (with theirs): the generator reads less, and
    a changed shared definition regenerates only the parts that use it."""
    models, group_of = share_duplicates(model_schemas(manifest))
    shared = manifest.shared_defs
    if not models and not shared:
        return []
    shared_document = combined_document({}, shared)
    shared_defs: dict[str, Json] = shared_document["$defs"]
    deps = {name: _references(schema) for name, schema in shared_defs.items()}
    shared_names = set(shared)
    digests: dict[str, str] = {}  # shared definition -> digest, made when first needed
    parts = [ModelModule(SHARED, tuple(sorted(shared)), shared_document, None)] if shared else []
    count = _parts(len(models))
    buckets: list[dict[str, Json]] = [{} for _ in range(count)]
    for name in sorted(models):
        # a group of identical schemas stays together (its members subclass the first)
        buckets[_bucket(group_of.get(name, name), count)][name] = models[name]
    width = max(2, len(str(count - 1)))
    try:
        for index, bucket in enumerate(buckets):
            if not bucket:
                continue
            document = combined_document(bucket, shared, include_shared=False)
            subset: dict[str, Json] | None = None
            needed: list[str] = []
            if shared:
                used: set[str] = set()
                document = {
                    **document,
                    "$defs": _externalize(document["$defs"], shared_names, used),
                }
                needed = _closure(used, deps)
                subset = {**shared_document, "$defs": {n: shared_defs[n] for n in needed}}
            name = f"_part{index:0{width}d}"
            parts.append(
                ModelModule(
                    name,
                    tuple(sorted(bucket)),
                    document,
                    subset,
                    _subset_digest(needed, shared_defs, digests) if subset is not None else "",
                )
            )
    except _NotSplittable:
        return [whole_module(manifest)]
    return parts


def whole_module(manifest: Manifest) -> ModelModule:
    """Every model in one module (one generator run on one document)."""
    models, shared = share_duplicates(model_schemas(manifest))[0], manifest.shared_defs
    document = combined_document(models, shared)
    return ModelModule("_part00", tuple(sorted({*models, *shared})), document, None)


def _cache_file(module: ModelModule, package: str) -> Path | None:
    store = cache.cache_dir()
    if store is None:
        return None
    # A part's output can depend on the shared schemas it extends (allOf), so the ones it
    # uses are part of its key: changing a shared definition regenerates the parts using it.
    key = _digest([_settings(package), module.document])
    if module.shared is not None:
        key = _digest([key, module.shared_key])
    return store / f"{cache.MODELS_PREFIX}{key}.py"  # formatted


@cache_result
def _settings(package: str) -> str:
    """The generator's version and settings, part of every module's cache key."""
    settings = generator_settings(base_module=f"{package}.models._base")
    version = metadata.version("datamodel-code-generator")
    return version + json.dumps(settings, sort_keys=True)


def _subset_digest(names: list[str], defs: dict[str, Json], digests: dict[str, str]) -> str:
    """The digest of the shared definitions ``names``, each definition serialized once per
    build however many parts use it."""
    for name in names:
        if name not in digests:
            digests[name] = _digest(defs[name])
    return _digest([[name, digests[name]] for name in names])


def _digest(value: Json) -> str:
    text = json.dumps(value, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def generate_module(module: ModelModule, package: str) -> str:
    """One generator run; raises what the generator raises."""
    options = generator_options(base_module=f"{package}.models._base")
    if module.shared is None:
        source = run_generator(module.document, options)
    else:
        # The generator reads the shared schemas a part extends (allOf) from a file under
        # its base path, the working directory; the mapping turns references into imports.
        with tempfile.TemporaryDirectory() as folder:
            target = Path(folder).resolve() / _SHARED_FILE
            target.write_text(json.dumps(module.shared), "utf-8")
            options["external_ref_mapping"] = {str(target): f"{package}.models.{SHARED}"}
            previous = os.getcwd()
            os.chdir(folder)
            try:
                source = run_generator(module.document, options)
            finally:
                os.chdir(previous)
    return source.rstrip("\n") + "\n"


def _generate_checked(module: ModelModule, package: str) -> tuple[str, str | None]:
    """(formatted source, None) or ("", the generator's error); errors are located by the
    caller. Runs in a pool worker for big builds: generating and formatting a module is one
    task, so the build process never handles the unformatted text."""
    try:
        source = generate_module(module, package)
    except Exception as exc:
        return "", str(exc) or type(exc).__name__
    missing = sorted(set(module.classes) - defined_names(source))
    if missing:
        return "", f"model generation produced no class for {', '.join(missing)}"
    path = f"src/{package}/models/{module.name}.py"
    return format_file(source, path, scope=package), None


def _generate_many(modules: list[ModelModule], package: str) -> list[tuple[str, str | None]]:
    return [_generate_checked(module, package) for module in modules]


class ModelJob:
    """Generation of every module of the models package, formatted: cached ones are read at
    once, the others generated here (small builds) or in the build's process pool, beside
    the formatting of the other files (``result`` waits)."""

    def __init__(self, manifest: Manifest, workers: Workers | None = None) -> None:
        self.manifest = manifest
        self.package = manifest.server.package
        self.modules = plan(manifest)
        self.sources: dict[str, str] = {}
        self.pending: dict[str, tuple[Future[list[tuple[str, str | None]]], int]] = {}
        todo = []
        for module in self.modules:
            cached = cache.read(_cache_file(module, self.package))
            if cached is None:
                todo.append(module)
            else:
                self.sources[module.name] = cached
        count = sum(len(m.classes) for m in todo)
        pool = workers if workers is not None and count >= BACKGROUND_MODELS else None
        # biggest first, so the longest run does not start last; few models are one task
        # (one worker loads the generator while the other formats)
        todo.sort(key=lambda m: -len(m.classes))
        tasks = [todo] if todo and count < ONE_TASK_MODELS else [[m] for m in todo]
        if pool is not None:
            # every worker will run the generator only when there are enough tasks
            pool.warm(*([modelgen.warm] if len(tasks) >= pool.jobs else []), format_warm)
        for task in tasks:
            if pool is not None and len(tasks) == 1:
                future = pool.submit_spare(_generate_many, task, self.package)
            elif pool is not None:
                future = pool.submit(_generate_many, task, self.package)
            else:
                future = done(_generate_many, task, self.package)
            for index, module in enumerate(task):
                self.pending[module.name] = (future, index)

    def result(self) -> dict[str, str]:
        """Module name -> formatted source; InputError with located problems."""
        failed: str | None = None
        for module in self.modules:
            if module.name not in self.pending:
                continue
            future, index = self.pending[module.name]
            try:
                source, error = future.result()[index]
            except BrokenProcessPool:  # a worker died (out of memory?): try here
                source, error = _generate_checked(module, self.package)
            if error is not None:
                failed = failed or error
                continue
            cache.write(_cache_file(module, self.package), source)
            self.sources[module.name] = source
        if failed is not None:
            self._all_in_one(failed)
        return {m.name: self.sources[m.name] for m in self.modules}

    def _all_in_one(self, error: str) -> None:
        """A part the generator rejects may only be a limit of the split (references across
        modules): generate every model as one module instead; if that fails too, the
        schemas really are at fault, and ``_fail`` says which."""
        if [m.name for m in self.modules] != ["_part00"] or self.modules[0].shared is not None:
            whole = whole_module(self.manifest)
            source = cache.read(_cache_file(whole, self.package))
            if source is None:
                source, error_whole = _generate_checked(whole, self.package)
                if error_whole is None:
                    cache.write(_cache_file(whole, self.package), source)
            else:
                error_whole = None
            if error_whole is None:
                self.modules, self.sources = [whole], {whole.name: source}
                return
        self._fail(error)

    def _fail(self, error: str) -> None:
        """Say which schemas the generator rejects, and where they are."""
        models = model_schemas(self.manifest)
        raise InputError(locate_failure(self.manifest, models, Exception(error)))
