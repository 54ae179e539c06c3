"""The build cache stays under its size limit: least recently used entries go first, at
most one look an hour, and it never breaks a build."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpgen import cache
from mcpgen.cli import main

MB = 1024 * 1024


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    folder.mkdir()
    monkeypatch.setenv("MCPGEN_CACHE_DIR", str(folder))
    monkeypatch.setenv(cache.SIZE_ENV, "1")  # megabytes
    return folder


def _entry(store: Path, name: str, size: int, age: float, now: float) -> Path:
    path = store / name
    path.write_bytes(b"x" * size)
    os.utime(path, (now - age, now - age))
    return path


def test_the_least_recently_used_entries_go_first(store: Path) -> None:
    now = time.time()
    entries = [_entry(store, f"e{i}", MB // 4, age=1000 * (10 - i), now=now) for i in range(10)]
    # 2.5 MB against a 1 MB limit; the oldest (e0) is read now, so it counts as the newest
    assert cache.read(entries[0]) is not None
    deleted = cache.prune(now)
    kept = sorted(p.name for p in store.iterdir() if not p.name.startswith("."))
    assert kept == ["e0", "e8", "e9"], kept  # down to 0.8 MB: three entries of 0.25 MB
    assert deleted == 7
    assert sum(p.stat().st_size for p in store.iterdir()) <= 0.8 * MB


def test_one_look_an_hour(store: Path) -> None:
    now = time.time()
    assert cache.prune(now) == 0  # under the limit: nothing to do, but the look is stamped
    _entry(store, "big", 2 * MB, age=10, now=now)
    assert cache.prune(now + 60) == 0  # too soon to look again
    assert (store / "big").exists()
    assert cache.prune(now + cache.PRUNE_EVERY + 1) == 1
    assert not (store / "big").exists()


def test_temp_files_of_killed_builds_are_removed(store: Path) -> None:
    now = time.time()
    old = _entry(store, "models-v4-x.1234.tmp", 10, age=2 * cache.PRUNE_EVERY, now=now)
    fresh = _entry(store, "models-v4-y.1235.tmp", 10, age=5, now=now)  # a build writing now
    assert cache.prune(now) == 1
    assert not old.exists() and fresh.exists()


def test_a_bad_limit_falls_back_to_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cache.SIZE_ENV, "lots")
    assert cache.size_limit() == cache.DEFAULT_SIZE_MB * MB
    monkeypatch.delenv(cache.SIZE_ENV)
    assert cache.size_limit() == cache.DEFAULT_SIZE_MB * MB
    monkeypatch.setenv(cache.SIZE_ENV, "0.5")
    assert cache.size_limit() == MB // 2


def test_no_cache_no_upkeep(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MCPGEN_CACHE_DIR", "")
    assert cache.prune() == 0
    monkeypatch.setenv("MCPGEN_CACHE_DIR", str(tmp_path / "missing"))
    assert cache.prune() == 0
    assert not (tmp_path / "missing").exists()


def test_a_build_keeps_the_cache_under_its_limit(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build over a full cache deletes the oldest entries, not the ones it just wrote
    (the calculator's are about 0.5 MB)."""
    monkeypatch.setenv(cache.SIZE_ENV, "2")
    now = time.time()
    for i in range(12):
        _entry(store, f"old{i}", MB // 4, age=10 * 86400, now=now)
    manifest = Path(__file__).resolve().parent.parent / "manifests" / "calculator.yaml"
    out = str(tmp_path / "out")
    result = CliRunner().invoke(main, ["build", str(manifest), "-o", out])
    assert result.exit_code == 0, result.output
    old = [p for p in store.iterdir() if p.name.startswith("old")]
    assert 0 < len(old) < 12  # the oldest went, down to 1.6 MB
    assert (store / cache.STAMP).exists()
    assert sum(p.stat().st_size for p in store.iterdir()) <= 1.6 * MB
    # every entry of the build is still there (names are content keys: the same build
    # into an empty cache writes the same ones)
    fresh = tmp_path / "fresh"
    monkeypatch.setenv("MCPGEN_CACHE_DIR", str(fresh))
    again = CliRunner().invoke(main, ["build", str(manifest), "-o", str(tmp_path / "out2")])
    assert again.exit_code == 0, again.output
    written = {p.name for p in fresh.iterdir() if not p.name.startswith(".")}
    assert written and written <= {p.name for p in store.iterdir()}


# -- advertised definitions (``model.remembered``) ----------------------------------------

DEFS = "$defs"  # (``remembered.DEFS``)

SPEC = Path(__file__).resolve().parent / "fixtures" / "openapi-real" / "train-travel-3.1.json"


def _advertised(source: Path = SPEC) -> list[str]:
    from mcpgen.pipeline import load_manifest

    loaded = load_manifest(source)
    assert loaded.manifest is not None, loaded.problems.format()
    # serialized: key order is part of what tools/list shows
    return [json.dumps(tool.advertised) for tool in loaded.manifest.tools]


def _pack(store: Path) -> Path:
    from mcpgen.model.remembered import PREFIX

    packs = list(store.glob(f"{PREFIX}*.json"))
    assert len(packs) == 1, packs  # one file per server, not one per tool
    return packs[0]


def test_advertised_definitions_read_from_the_cache_are_the_ones_computed(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _advertised()  # computed, and kept
    pack = _pack(store)
    entries = json.loads(pack.read_text("utf-8"))
    assert 0 < len(entries.keys() - {DEFS}) <= len(first)  # (DEFS: their definitions)
    assert _advertised() == first  # read back
    monkeypatch.setenv("MCPGEN_CACHE_DIR", "")
    assert _advertised() == first  # no cache at all
    monkeypatch.setenv("MCPGEN_CACHE_DIR", str(store))
    pack.write_text("{not json", "utf-8")  # an unreadable pack: computed again, written again
    assert _advertised() == first
    assert json.loads(pack.read_text("utf-8")) == entries
    # the pack is what the build uses: an entry replaced shows in the model
    key = next(iter(entries.keys() - {DEFS}))
    pack.write_text(json.dumps({**entries, key: {"description": "from the cache"}}), "utf-8")
    assert sum('"from the cache"' in text for text in _advertised()) >= 1


def test_a_pack_keeps_the_last_build_and_as_many_older_results(store: Path, tmp_path: Path) -> None:
    """Two versions of a spec built in turn (``mcpgen diff``) both find their results."""
    first = _advertised()
    entries = json.loads(_pack(store).read_text("utf-8"))
    data = json.loads(SPEC.read_text("utf-8"))
    for item in data["paths"].values():
        for operation in item.values():
            if isinstance(operation, dict) and "summary" in operation:
                operation["summary"] += " (changed)"
    changed = tmp_path / SPEC.name
    changed.write_text(json.dumps(data), "utf-8")
    second = _advertised(changed)
    assert second != first
    both = json.loads(_pack(store).read_text("utf-8"))
    assert set(entries) <= set(both) and len(both.keys() - {DEFS}) <= 2 * len(second)
    assert _advertised() == first and _advertised(changed) == second


def test_a_definition_many_operations_take_is_kept_once(store: Path, tmp_path: Path) -> None:
    """Every operation taking a big definition (its closure advertised as the input's
    ``$defs``) repeated it in the pack, read by every later build: 300 operations over 60
    definitions of 20 properties made 16 MB. Each definition is kept once, named by digest
    by the results; what a warm build reads back is what a cold one computed."""
    ref = "#/components/schemas/D{}".format
    schemas = {
        f"D{i}": {
            "type": "object",
            "properties": {
                **{f"p{j}": {"type": "string", "maxLength": 9} for j in range(10)},
                **(
                    {"next": {"$ref": ref(i + 1)}, "all": {"items": {"$ref": ref(i + 1)}}}
                    if i < 9
                    else {}
                ),
            },
        }
        for i in range(10)
    }
    paths = {
        f"/r{k}": {
            "post": {
                "operationId": f"op{k}",
                "requestBody": {"content": {"application/json": {"schema": {"$ref": ref(k % 2)}}}},
                "responses": {"200": {"description": "ok"}},
            }
        }
        for k in range(40)
    }
    data = {"openapi": "3.1.0", "info": {"title": "big", "version": "1"}, "paths": paths}
    spec = tmp_path / "big.json"
    spec.write_text(json.dumps(data | {"components": {"schemas": schemas}}), "utf-8")
    cold = _advertised(spec)
    assert all('"$defs"' in text for text in cold)  # (each repeats the closure)
    size = len(_pack(store).read_bytes())
    assert size < sum(map(len, cold)) / 3, (size, sum(map(len, cold)))  # (4.5x smaller)
    assert _advertised(spec) == cold  # read back


def test_an_advertised_definition_is_kept_per_options_and_per_compacting_code(
    monkeypatch: pytest.MonkeyPatch, store: Path
) -> None:
    from mcpgen.model import compact, remembered

    salt = remembered.Advertised(compact.CompactOptions(), None).salt
    assert remembered.Advertised(compact.CompactOptions(description=40), None).salt != salt
    monkeypatch.setattr(remembered, "_CODE", (*remembered._CODE[:-1], cache))
    assert remembered.Advertised(compact.CompactOptions(), None).salt != salt


def test_damaged_compiled_templates_and_runtime_imports_change_nothing(tmp_path: Path) -> None:
    """A warm build reads compiled templates and the runtime's imports from the cache; a
    damaged entry is made again and the output stays the same bytes."""
    import subprocess
    import sys

    manifest = Path(__file__).resolve().parent.parent / "manifests" / "calculator.yaml"
    store = tmp_path / "cache"

    def built(name: str) -> dict[str, bytes]:
        out = tmp_path / name
        subprocess.run(
            [sys.executable, "-m", "mcpgen", "build", str(manifest), "-o", str(out)],
            check=True,
            env={**os.environ, "MCPGEN_CACHE_DIR": str(store)},
            capture_output=True,
        )
        return {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}

    cold = built("cold")
    kept = [*store.glob("jinja-*.cache"), *store.glob("runtime-imports-*.json")]
    assert {p.name.split("-")[0] for p in kept} == {"jinja", "runtime"}
    assert built("warm") == cold
    for path in kept:
        path.write_bytes(b"\x00damaged")
    assert built("damaged") == cold
    assert json.loads(next(store.glob("runtime-imports-*.json")).read_text())  # made again


def test_format_verdicts_on_defaults_are_kept_and_a_rebuild_does_not_import_pydantic(
    tmp_path: Path,
) -> None:
    """A default checked against its format by pydantic (``check.formats``): the verdicts
    are kept in the cache by pydantic's version, so a rebuild (GitHub: 3 defaults) does not
    import pydantic (~50 ms); the warnings are the same, a damaged file only costs time."""
    import subprocess
    import sys

    field = {"type": "string", "format": "uri", "default": ""}  # no URL: left out, warned
    when = {"type": "string", "format": "date-time", "default": "2020-01-02T03:04:05Z"}
    schema = {"type": "object", "properties": {"site": field, "when": when}}
    spec = {
        "openapi": "3.1.0",
        "info": {"title": "Formats", "version": "1"},
        "paths": {
            "/things": {
                "post": {
                    "operationId": "make_thing",
                    "requestBody": {"content": {"application/json": {"schema": schema}}},
                    "responses": {"204": {"description": "done"}},
                }
            }
        },
    }
    source = tmp_path / "formats.json"
    source.write_text(json.dumps(spec), "utf-8")
    store = tmp_path / "cache"
    script = (
        "import sys; from pathlib import Path; from mcpgen.pipeline import load_manifest; "
        "loaded = load_manifest(Path(sys.argv[1])); assert loaded.manifest is not None; "
        "print([p.message for p in loaded.problems.warnings]); print('pydantic' in sys.modules)"
    )

    def checked() -> tuple[str, str]:
        done = subprocess.run(
            [sys.executable, "-c", script, str(source)],
            check=True,
            env={**os.environ, "MCPGEN_CACHE_DIR": str(store)},
            capture_output=True,
            text=True,
        )
        warnings, imported = done.stdout.splitlines()
        return warnings, imported

    warnings, imported = checked()
    assert "'default' does not match its schema" in warnings and imported == "True"
    kept = list(store.glob("formats-*.json"))
    assert len(kept) == 1
    verdicts = json.loads(kept[0].read_text("utf-8"))
    assert verdicts == {
        "pydantic AnyUrl ": False,
        "pydantic AwareDatetime " + when["default"]: True,
    }
    assert checked() == (warnings, "False")  # from the cache: pydantic not imported
    kept[0].write_text("{damaged", "utf-8")
    for imported_kept in store.glob("openapi-*.marshal"):  # (else no default is checked)
        imported_kept.unlink()
    assert checked() == (warnings, "True")  # checked again, and kept again
    assert json.loads(kept[0].read_text("utf-8")) == verdicts


def test_format_verdicts_are_written_once_a_build_by_python_version_and_capped(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cold build checking N new values writes the kept verdicts once (it rewrote the
    whole file for each); the file is named by Python's minor version too (a verdict may
    change with it), and starts over when it would grow past ``MAX_VERDICTS``."""
    import sys
    from importlib import metadata

    from mcpgen.check import formats
    from mcpgen.pipeline import load_manifest

    writes: list[str] = []
    write = cache.write
    monkeypatch.setattr(cache, "write", lambda p, t: writes.append(p.name) or write(p, t))
    source = tmp_path / "formats.json"

    def loaded(days: range) -> dict[str, bool]:
        dates = {f"d{d}": {"type": "string", "format": "date", "default": f"2020-01-{d:02d}"}
                 for d in days}  # fmt: skip
        schema = {"type": "object", "properties": dates}
        body = {"content": {"application/json": {"schema": schema}}}
        operation = {"operationId": "make", "requestBody": body, "responses": {"204": {}}}
        spec = {"openapi": "3.1.0", "info": {"title": "Formats", "version": "1"},
                "paths": {"/things": {"post": operation}}}  # fmt: skip
        source.write_text(json.dumps(spec), "utf-8")
        assert load_manifest(source).manifest is not None
        python = "py{}.{}".format(*sys.version_info[:2])
        name = f"formats-{python}-{metadata.version('pydantic')}.json"
        assert [w for w in writes if w.startswith("formats-")] == [name]
        writes.clear()
        kept: dict[str, bool] = json.loads((store / name).read_text("utf-8"))
        return kept

    assert len(loaded(range(1, 6))) == 5  # five new values: one write
    monkeypatch.setattr(formats, "MAX_VERDICTS", 6)
    assert sorted(loaded(range(6, 8))) == ["datetime date 2020-01-06", "datetime date 2020-01-07"]


def test_a_rebuild_with_the_same_schemas_reads_the_planned_modules_without_planning(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The modules planned for a set of models are listed in the cache by all the plan
    reads: a rebuild after a description changed (GitHub: 0.1 s of planning) reads them by
    their keys (the schemas' keys the model stage made for the build cache: nothing is
    serialized again); a changed schema or a damaged list plans again. Same files either way."""
    from mcpgen.render import model_parts

    planned: list[int] = []
    real_plan = model_parts.plan
    monkeypatch.setattr(model_parts, "plan", lambda m: planned.append(1) or real_plan(m))
    data = json.loads(SPEC.read_text("utf-8"))
    source = tmp_path / SPEC.name

    def built(name: str, cache_dir: Path = store) -> dict[str, str]:
        monkeypatch.setenv("MCPGEN_CACHE_DIR", str(cache_dir))
        source.write_text(json.dumps(data), "utf-8")
        out = tmp_path / name
        done = CliRunner().invoke(main, ["build", str(source), "-o", str(out)])
        assert done.exit_code == 0, done.output
        return {str(p.relative_to(out)): p.read_text("utf-8") for p in out.rglob("*.py")}

    built("first")
    assert len(planned) == 1 and len(list(store.glob(f"{model_parts.PLANS_PREFIX}*"))) == 1
    operation = next(iter(next(iter(data["paths"].values())).values()))
    operation["description"] = "Changed: " + operation.get("description", "")
    keyed: list[object] = []  # the schemas serialized again to key the plan: none
    real_key = cache.schema_key
    monkeypatch.setattr(cache, "schema_key", lambda *a: keyed.append(a[2]) or real_key(*a))
    touched = built("touched")
    assert len(planned) == 1  # not planned again
    assert model_parts.model_code._sorted_json not in keyed  # the model stage's keys reused
    assert touched == built("fresh", tmp_path / "fresh-cache")  # what planning makes
    planned.clear()
    [record] = store.glob(f"{model_parts.PLANS_PREFIX}*")
    kept = json.loads(record.read_text("utf-8"))["modules"]
    damaged = [
        [["_part00", ["X"], "../../etc/passwd"]],
        [["../../escaped", *kept[0][1:]], *kept[1:]],  # each a module file the cache holds
        [[kept[0][0], ["X\nimport os"], kept[0][2]], *kept[1:]],
        [[kept[0][0], ["class"], kept[0][2]], *kept[1:]],
    ]
    for number, modules in enumerate(damaged, 1):
        record.write_text(json.dumps({"modules": modules}), "utf-8")
        assert built(f"damaged{number}") == touched and len(planned) == number
    schema = {"name": "added", "in": "query", "schema": {"type": "string"}}
    operation.setdefault("parameters", []).append(schema)
    built("schema")
    assert len(planned) == len(damaged) + 1  # a schema changed: planned again


def test_the_search_index_analyzes_only_texts_no_build_before_analyzed(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each text's terms are kept in the build cache: a rebuild after one description
    changed analyzes that description alone, and ships the index a fresh analysis makes."""
    from mcpgen.pipeline import load_manifest
    from mcpgen.render.spec import search_json, spec_data
    from mcpgen.runtime.search_words import Analyzer

    loaded = load_manifest(SPEC)
    assert loaded.manifest is not None
    data = {**spec_data(loaded.manifest), "mode": "code"}
    analyzed: list[str] = []
    real_terms = Analyzer.terms
    monkeypatch.setattr(Analyzer, "terms", lambda s, t: analyzed.append(t) or real_terms(s, t))
    first = search_json(data)
    assert analyzed and first == search_json(data)
    analyzed.clear()
    tools = [dict(t) for t in data["tools"]]
    for part in ("definition", "full"):  # (the full description, when compacted, is searched)
        tools[0][part] = {**tools[0].get(part, {}), "description": "Changed."}
    touched = {**data, "tools": tools}
    again = search_json(touched)
    assert analyzed == ["Changed."]
    monkeypatch.setenv("MCPGEN_CACHE_DIR", str(store / "fresh"))
    assert again == search_json(touched) != first


def test_a_rebuild_reads_the_examples_of_unchanged_input_schemas(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The example arguments of the generated tests are kept by the input schema's key: a
    rebuild after a description changed derives none again, and writes the same tests."""
    from mcpgen.model import examples

    derived: list[object] = []
    real_valid = examples._valid
    monkeypatch.setattr(examples, "_valid", lambda *a: derived.append(1) or real_valid(*a))
    data = json.loads(SPEC.read_text("utf-8"))
    source = tmp_path / SPEC.name

    def built(name: str) -> str:
        source.write_text(json.dumps(data), "utf-8")
        done = CliRunner().invoke(main, ["build", str(source), "-o", str(tmp_path / name)])
        assert done.exit_code == 0, done.output
        return (tmp_path / name / "tests" / "test_generated.py").read_text("utf-8")

    first = built("first")
    assert derived
    derived.clear()
    operation = next(iter(next(iter(data["paths"].values())).values()))
    operation["description"] = "Changed."
    assert built("touched") == first and not derived
    monkeypatch.setenv("MCPGEN_CACHE_DIR", str(tmp_path / "fresh-cache"))
    assert built("fresh") == first and derived
