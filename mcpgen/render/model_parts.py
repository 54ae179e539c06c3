"""The ``models`` package, one datamodel-code-generator run per module: ``_shared`` holds
the manifest's shared ``$defs``; ``_partNN`` the tool and prompt models, spread over parts
by a hash of the class name (changing a tool changes one part), their references to shared
definitions made imports from ``_shared`` (the generator's ``external_ref_mapping``). Each
module is kept in the build cache by the schemas it is made from.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache as cache_result
from importlib import metadata
from keyword import iskeyword
from pathlib import Path
from typing import Any

from mcpgen import cache, identifiers
from mcpgen.check import schemas as schema_code
from mcpgen.check.schemas import closure, def_target, ref_strings
from mcpgen.literals import compact_json
from mcpgen.model.types import Manifest, Tool
from mcpgen.problems import InputError
from mcpgen.render import models as model_code
from mcpgen.render.models import (
    SETTINGS,
    combined_document,
    defined_names,
    generator_options,
    locate_failure,
    model_schemas,
    run_generator,
    share_duplicates,
)

Json = Any
SHARED = "_shared"
# Tool/prompt models per part, on average. Each generator run re-reads the shared schemas
# its part uses, so fewer, bigger parts cost less in all; a changed schema regenerates one
# part, which must stay small enough to hide behind the rest of a rebuild (bench/HISTORY.md).
PART_SIZE = 80
_SHARED_FILE = "__mcpgen_shared__.json"  # where a part's references to shared schemas point
PLANS_PREFIX = "models-plan-v1-"  # the modules planned for a set of models (``_plan_file``)
_MODULE = re.compile(f"{SHARED}|_part[0-9]+")  # the names ``plan`` gives, nothing else
_KEPT = re.compile(re.escape(cache.MODELS_PREFIX) + "[0-9a-f]{64}[.]py")
_PLANNING = (__file__, model_code.__file__, identifiers.__file__, schema_code.__file__)  # its code


# The generator writes fields in property order: keys that guard its output keep key order
# (sorted keys kept the old code after a change that only reordered properties).
def _key(value: Json) -> str:
    return cache.digest(value, compact_json)


@dataclass(frozen=True)
class ModelModule:
    name: str  # module name inside the models package: "_shared", "_part03"
    classes: tuple[str, ...]  # the names it defines for the package to re-export
    document: dict[str, Json]  # what datamodel-code-generator gets
    shared: dict[str, Json] | None  # the ``_shared`` definitions its references point into
    shared_key: str = ""  # digest of ``shared`` (part of the cache key)


def _parts(count: int) -> int:
    return max(1, -(-count // PART_SIZE))


def _externalize(shared: dict[str, Json], used: set[str]) -> Callable[[str], str]:
    """A reference to a shared definition made one into the shared file (adding the name
    to ``used``)."""

    def point(ref: str) -> str:
        target = def_target(ref)
        if target is None or target[0] not in shared:
            return ref
        if target[1]:
            raise _NotSplittable(ref)
        used.add(target[0])
        return _SHARED_FILE + ref

    return point


class _NotSplittable(Exception):
    """A reference into the inside of a shared definition: generate as one module."""


def plan(manifest: Manifest) -> list[ModelModule]:
    """The modules of the models package. A part's references point into a file of only
    the shared definitions it needs (with theirs): the generator reads less, and a changed
    shared definition regenerates only the parts that use it."""
    models, group_of = share_duplicates(model_schemas(manifest))
    shared = manifest.shared_defs
    shared_document = combined_document({}, shared)
    shared_defs: dict[str, Json] = shared_document["$defs"]
    deps = {  # the definitions each refers to (``#/$defs/NAME...``)
        name: {target[0] for ref in ref_strings(schema) if (target := def_target(ref))}
        for name, schema in shared_defs.items()
    }
    digests: dict[str, str] = {}  # shared definition -> digest, made when first needed
    parts = [ModelModule(SHARED, tuple(sorted(shared)), shared_document, None)] if shared else []
    count = _parts(len(models))
    buckets: list[dict[str, Json]] = [{} for _ in range(count)]
    for name in sorted(models):
        # a group of identical schemas stays together (its members subclass the first)
        group = group_of.get(name, name).encode()
        buckets[int(hashlib.sha256(group).hexdigest()[:8], 16) % count][name] = models[name]
    width = max(2, len(str(count - 1)))
    try:
        for index, bucket in enumerate(buckets):
            if not bucket:
                continue
            used: set[str] = set()
            point = _externalize(shared, used) if shared else None
            document = combined_document(bucket, shared, include_shared=False, then=point)
            subset: dict[str, Json] | None = None
            key = ""
            if shared:
                needed = sorted(closure(used, deps))
                subset = {**shared_document, "$defs": {n: shared_defs[n] for n in needed}}
                # each shared definition serialized once per build, however many parts use it
                for n in needed:
                    digests[n] = digests.get(n) or _key(shared_defs[n])
                key = _key([[n, digests[n]] for n in needed])
            name = f"_part{index:0{width}d}"
            parts.append(ModelModule(name, tuple(sorted(bucket)), document, subset, key))
    except _NotSplittable:
        return [whole_module(manifest)]
    return parts


def whole_module(manifest: Manifest) -> ModelModule:
    models, shared = share_duplicates(model_schemas(manifest))[0], manifest.shared_defs
    document = combined_document(models, shared)
    return ModelModule("_part00", tuple(sorted({*models, *shared})), document, None)


def _plan_file(manifest: Manifest) -> Path | None:
    """Where the modules planned for these models are listed, keyed by all that ``plan``
    reads and the code that plans: a rebuild whose schemas did not change (GitHub, one
    description changed: 0.1 s) reads the modules by the keys listed."""
    store = cache.cache_dir()
    if store is None:
        return None
    digests: dict[int, tuple[Json, str]] = {}  # bundled definitions, each serialized once

    def schemas(t: Tool) -> tuple[Json, Json]:  # (each made once in the model stage)
        return t.schema_keys or tuple(
            cache.schema_key(s, digests, compact_json) for s in (t.input_schema, t.output_schema)
        )

    tools = [[t.input_model, t.output_model, *schemas(t)] for t in manifest.tools]
    prompts = [
        [p.class_name, [[a.name, a.description, a.required] for a in p.arguments]]
        for p in manifest.prompts
    ]
    code = [hashlib.sha256(Path(str(file)).read_bytes()).hexdigest() for file in _PLANNING]
    key = [_settings(manifest.server.package), code, tools, prompts, manifest.shared_defs]
    return store / f"{PLANS_PREFIX}{_key(key)}.json"


def _planned(record: Path | None) -> Models | None:
    """The modules a build before planned; None when the list (or a module) is missing or
    damaged."""
    entries = cache.read_pack(record).get("modules")
    if record is None or not isinstance(entries, list) or not entries:
        return None
    modules, sources = [], {}
    for entry in entries:
        if not (isinstance(entry, list) and len(entry) == 3 and _KEPT.fullmatch(str(entry[2]))):
            return None
        name, classes, file = entry
        if not (_MODULE.fullmatch(str(name)) and isinstance(classes, list)):
            return None
        if not all(isinstance(c, str) and c.isidentifier() and not iskeyword(c) for c in classes):
            return None
        source = cache.read(record.parent / file)
        if source is None:
            return None
        modules.append(ModelModule(str(name), tuple(classes), {}, None))
        sources[str(name)] = source
    return Models(modules, sources, frozenset(sources))


@cache_result
def _settings(package: str) -> str:
    """Part of every module's cache key."""
    settings = {"base_module": f"{package}.models._base", **SETTINGS}
    return metadata.version("datamodel-code-generator") + json.dumps(settings, sort_keys=True)


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
            with contextlib.chdir(folder):
                source = run_generator(module.document, options)
    return source.rstrip("\n") + "\n"


def _generate_checked(module: ModelModule, package: str) -> tuple[str, str | None]:
    """(source, None) or ("", the generator's error)."""
    try:
        source = generate_module(module, package)
    except Exception as exc:
        return "", str(exc) or type(exc).__name__
    missing = sorted(set(module.classes) - defined_names(source))
    if missing:
        return "", f"model generation produced no class for {', '.join(missing)}"
    return source, None


@dataclass(frozen=True)
class Models:
    """The modules and their sources, formatted for those from the build cache (``cached``).
    ``fresh``: the cache file of each module generated, kept by the caller once formatted."""

    modules: list[ModelModule]
    sources: dict[str, str]
    cached: frozenset[str] = frozenset()
    fresh: dict[str, Path] = field(default_factory=dict)


def start_models(manifest: Manifest, cached: bool = False, jobs: int = 1) -> Callable[[], Models]:
    """Start making every module of the models package; the returned function waits for
    them (raising InputError with located problems). ``jobs`` > 1: in at most ``jobs``
    worker processes, one per ``PART_SIZE`` models (a worker first pays the generator's
    import, ~0.3-0.7 s, and a fork of a big build copies the memory its collector walks)."""
    package = manifest.server.package
    record = _plan_file(manifest) if cached else None
    kept = _planned(record)
    if kept is not None:  # the same models as a build before: its modules, by their keys
        return lambda: kept
    modules = plan(manifest)
    sources: dict[str, str] = {}
    files: dict[str, Path] = {}  # the cache files of the modules to generate
    keys: list[list[Json]] = []
    store = cache.cache_dir() if cached else None
    if store is not None:
        for module in modules:
            # A part's output can depend on the shared schemas it extends (allOf), so the ones
            # it uses are part of its key: a changed shared definition regenerates those parts.
            key = _key([_settings(package), module.document, module.shared_key])
            file = store / f"{cache.MODELS_PREFIX}{key}.py"  # formatted
            keys.append([module.name, list(module.classes), file.name])
            found = cache.read(file)
            if found is None:
                files[module.name] = file
            else:
                sources[module.name] = found
    cache.write(record, json.dumps({"modules": keys}))
    from_cache = frozenset(sources)
    todo = [module for module in modules if module.name not in sources]
    if not todo:  # all from the build cache (a rebuild): no pool, nor its import (7 ms)
        return lambda: Models(modules, sources, from_cache)
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    workers = min(jobs, len(todo), _parts(sum(len(m.classes) for m in todo)))
    # A small build (one part) forks one worker too: its heap is small, so the fork is
    # cheap, and the generator's import runs beside the rendering of the rest.
    small = jobs > 1 and sum(len(m.classes) for m in modules) <= PART_SIZE
    pool = ProcessPoolExecutor(workers) if workers > 1 or small else None
    biggest_first = sorted(todo, key=lambda m: -len(m.classes))
    futures = (
        {m.name: pool.submit(_generate_checked, m, package) for m in biggest_first} if pool else {}
    )

    def finish() -> Models:
        try:
            results = [
                futures[m.name].result() if pool else _generate_checked(m, package) for m in todo
            ]
        except BrokenProcessPool:  # a worker died (out of memory?): generate here
            results = [_generate_checked(module, package) for module in todo]
        finally:
            if pool is not None:
                pool.shutdown(cancel_futures=True)
        failed = next((error for _, error in results if error is not None), None)
        if failed is None:
            sources.update((m.name, source) for m, (source, _) in zip(todo, results, strict=True))
            made = {m.name: sources[m.name] for m in modules}
            return Models(modules, made, from_cache, files)
        # A part the generator rejects may only be a limit of the split (references
        # across modules): every model as one module; if that fails too, the schemas are
        # at fault.
        if [m.name for m in modules] != ["_part00"] or modules[0].shared is not None:
            whole = whole_module(manifest)
            source, error = _generate_checked(whole, package)
            if error is None:
                return Models([whole], {whole.name: source})
        raise InputError(locate_failure(manifest, model_schemas(manifest), Exception(failed)))

    return finish
