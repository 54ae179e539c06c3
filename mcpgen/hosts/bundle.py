"""A generated project -> an MCP Bundle (``.mcpb``, npm ``@anthropic-ai/mcpb`` 2.1): a
deterministic zip whose ``server/main.py`` runs the package over stdio, with the runtime
``uv`` (manifest 0.4: the host installs the dependencies; portable) or ``python`` (0.3:
vendored into ``server/lib`` by pip, for this platform and Python version only)."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from mcpgen.host_entry import EnvVar, ProjectError, render

from .project import STDIO, Json, Project, require_stdio

RUNTIMES = ("uv", "python")
MAIN = '''"""Start the bundled {name} MCP server over stdio (written by mcpgen bundle)."""

import os
import runpy
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
for path in (os.path.join(os.path.dirname(HERE), "src"), os.path.join(HERE, "lib")):
    if os.path.isdir(path) and path not in sys.path:
        sys.path.insert(0, path)
runpy.run_module({package!r}, run_name="__main__", alter_sys=True)
'''
SKIP_DIRS = {"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
PIP_INSTALL = ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile"]
ZIP_DATE = (1980, 1, 1, 0, 0, 0)


@dataclass(frozen=True)
class Built:
    path: Path
    manifest: Json
    sha256: str
    files: int
    skipped: tuple[str, ...] = ()  # what was left out of the project, and why


def config_key(var: EnvVar) -> str:
    return re.sub(r"[^a-z0-9_]", "_", var.name.lower())


def user_config(project: Project) -> dict[str, Json]:
    """One option per variable the server needs; credentials are ``sensitive``."""
    options: dict[str, Json] = {}
    for var in project.needed_env("stdio"):
        option: dict[str, Json] = {
            "type": "string",
            "title": var.name,
            "description": var.description or f"the {var.name} environment variable",
            "required": var.required,
        }
        if var.secret:
            option["sensitive"] = True
        elif var.default is not None:
            option["default"] = var.default
        options[config_key(var)] = option
    return options


_SIMPLE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def _display(text: str, arguments: set[str]) -> str:
    """A Jinja message as a host shows it: ``{{ arg }}`` (``{{ arg or 3 }}``) becomes
    ``${arguments.arg}``, tags and comments dropped (text that does not lex: ``_SIMPLE``)."""
    import jinja2

    try:
        tokens = list(jinja2.Environment().lex(text))
    except jinja2.TemplateSyntaxError:
        return _SIMPLE.sub(r"${arguments.\1}", text)
    out: list[str] = []
    expression: list[tuple[str, str]] | None = None
    for _, kind, value in tokens:
        if kind == "data":
            out.append(value)
        elif kind == "variable_begin":
            expression = []
        elif kind == "variable_end" and expression is not None:
            name = next((v for k, v in expression if k == "name"), None)
            shown = "".join(v for _, v in expression).strip()
            out.append(f"${{arguments.{name}}}" if name in arguments else shown)
            expression = None
        elif expression is not None:
            expression.append((kind, value))
    return "".join(out)


def prompt_text(project: Project, prompt: Json) -> str:
    """The prompt's messages as a host shows them (``_display``), else its description."""
    parts = []
    name = prompt["name"]
    arguments = {str(a.get("name")) for a in prompt.get("arguments") or [] if isinstance(a, dict)}
    for message in project.prompt_messages.get(name, []):
        if message.get("kind", "text") == "text" and message.get("text"):
            parts.append(_display(str(message["text"]), arguments))
        elif message.get("kind") == "resource":
            parts.append(f"[resource {message.get('uri')}]")
        elif message.get("kind") in ("image", "audio"):
            parts.append(f"[{message['kind']}]")
    if parts:
        return "\n\n".join(parts)
    return prompt.get("description") or f"The {name} prompt (written by the server)."


def manifest(project: Project, runtime: str) -> Json:
    env = {var.name: "${user_config." + config_key(var) + "}" for var in project.needed_env()}
    uv = ["run", "--directory", "${__dirname}", "server/main.py"]
    args = uv if runtime == "uv" else ["${__dirname}/server/main.py"]
    config: dict[str, Json] = {"command": runtime, "args": [*args, *STDIO]}  # uv or python
    if env:
        config["env"] = env
    meta = project.meta
    authors = [a.get("name") for a in meta.get("authors") or [] if isinstance(a, dict)]
    data: dict[str, Json] = {
        "manifest_version": "0.4" if runtime == "uv" else "0.3",
        "name": project.name,
        "display_name": project.title,
        "version": project.version,
        "description": project.description or project.title,
    }
    instructions = project.server.get("instructions")
    if isinstance(instructions, str) and instructions.strip():
        data["long_description"] = instructions.strip()
    data["author"] = {"name": next((a for a in authors if a), f"{project.name} authors")}
    if isinstance(project.server.get("websiteUrl"), str):
        data["homepage"] = project.server["websiteUrl"]
    data["server"] = {"type": runtime, "entry_point": "server/main.py", "mcp_config": config}
    data["tools"] = [
        {"name": t["name"], **({"description": t["description"]} if t.get("description") else {})}
        for t in project.tools
    ]
    data["prompts"] = [
        {
            "name": p["name"],
            **({"description": p["description"]} if p.get("description") else {}),
            "arguments": [a["name"] for a in p.get("arguments") or []],
            "text": prompt_text(project, p),
        }
        for p in project.prompts
    ]
    if isinstance(meta.get("license"), str):
        data["license"] = meta["license"]
    requires = str(meta.get("requires-python") or ">=3.11")
    compatibility: dict[str, Json] = {}
    if runtime == "python":  # compiled wheels fit one platform and Python version
        major, minor = sys.version_info[:2]
        requires = f">={major}.{minor}.0 <{major}.{minor + 1}.0"
        platform = "win32" if sys.platform == "win32" else "darwin"
        compatibility["platforms"] = ["linux" if sys.platform.startswith("linux") else platform]
    data["compatibility"] = {**compatibility, "runtimes": {"python": requires}}
    if options := user_config(project):
        data["user_config"] = options
    return data


def _inside(path: Path, root: Path) -> bool:
    """Whether ``path``, links resolved, is ``root`` or below it."""
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):
        return False


def _kept(path: Path, root: Path, skipped: list[str]) -> bool:
    """Whether ``path`` goes into the bundle (not dot files, bundles, linked folders, links
    that leave the project); when not, ``skipped`` says why."""
    folder = path.is_dir()
    relative = path.relative_to(root).as_posix() + ("/" if folder else "")
    if path.name.startswith("."):
        why = "a dot folder: secrets or VCS data" if folder else "a dot file: may hold secrets"
    elif path.suffix == ".mcpb":
        why = "a bundle: not packed into another"
    elif path.is_symlink() and folder:
        why = "a linked folder: not followed"
    elif path.is_symlink() and not _inside(path, root):
        why = "a link to outside the project"
    else:
        return True
    skipped.append(f"{relative} ({why})")
    return False


def _project_files(project: Project, skipped: list[str], outputs: set[Path]) -> dict[str, bytes]:
    """The files under ``src/`` (``_kept``, not ``outputs``), pyproject.toml, README, licence."""
    root = project.root
    src = root / "src"
    if not _inside(src, root):
        raise ProjectError(f"{src} is a link that leaves the project: refusing to pack it")
    files: dict[str, bytes] = {}
    for folder, dirs, names in os.walk(src):  # links to folders are listed, never entered
        base = Path(folder)
        dirs[:] = [d for d in sorted(dirs) if d not in SKIP_DIRS and _kept(base / d, root, skipped)]
        for path in (base / name for name in sorted(names) if not name.endswith(".pyc")):
            if path.resolve() not in outputs and _kept(path, root, skipped) and path.is_file():
                files[path.relative_to(root).as_posix()] = path.read_bytes()
    pyproject = (root / "pyproject.toml").read_text(encoding="utf-8")
    if not re.search(r"^\[tool\.uv\]", pyproject, re.MULTILINE):
        pyproject = (
            pyproject.rstrip("\n")
            + "\n\n# Added by mcpgen bundle: uv installs the dependencies only;\n"
            + "# server/main.py runs the package from src/.\n[tool.uv]\npackage = false\n"
        )
    files["pyproject.toml"] = pyproject.encode()
    for extra in ("README.md", "LICENSE", "LICENSE.txt", "LICENSE.md"):
        path = root / extra
        if _kept(path, root, skipped) and path.is_file():
            files[extra] = path.read_bytes()
    return files


def _vendor(project: Project, python: str) -> dict[str, bytes]:
    """The dependencies installed by pip into a folder, as ``server/lib/...`` entries."""
    with tempfile.TemporaryDirectory(prefix="mcpgen-vendor-") as temp:
        target = Path(temp) / "lib"
        dependencies = map(str, project.meta.get("dependencies") or [])
        command = [python, *PIP_INSTALL, "--target", str(target), *dependencies]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            raise ProjectError(f"pip could not vendor the dependencies: {tail[0]}")
        files = {}
        for path in sorted(target.rglob("*")):
            relative = path.relative_to(target)
            if path.is_file() and not SKIP_DIRS & set(relative.parts) and path.suffix != ".pyc":
                files["server/lib/" + relative.as_posix()] = path.read_bytes()
        return files


def _write_zip(path: Path, files: dict[str, bytes]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(path.name + ".tmp")
    try:
        with zipfile.ZipFile(temp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
            for name in sorted(files):
                info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.create_system = 3  # unix, so the mode below is read
                info.external_attr = 0o644 << 16
                zf.writestr(info, files[name])
        temp.replace(path)
    except BaseException:  # a full disk, Ctrl-C: no half-written bundle left behind
        temp.unlink(missing_ok=True)
        raise


def _ours(path: Path) -> bool:
    """Whether ``path`` is a bundle mcpgen wrote (its ``server/main.py`` says so)."""
    try:
        with zipfile.ZipFile(path) as zf, zf.open("server/main.py") as main:
            return b"(written by mcpgen bundle)" in main.read(4096)
    except (zipfile.BadZipFile, OSError, KeyError, ValueError, EOFError, RuntimeError):
        return False  # not a zip, no server/main.py, encrypted or another compression


def build_bundle(
    project: Project,
    output: Path,
    runtime: str = "uv",
    python: str | None = None,
    registry: Path | None = None,
) -> Built:
    require_stdio(project)  # a bundle's host starts it over stdio
    if output.exists() and not _ours(output):
        raise ProjectError(
            f"{output}: exists and is not a bundle mcpgen wrote; move it away or give "
            "another -o (left untouched)"
        )
    data = manifest(project, runtime)
    skipped: list[str] = []
    files = _project_files(project, skipped, {p.resolve() for p in (output, registry) if p})
    files["server/main.py"] = MAIN.format(name=project.name, package=project.package).encode()
    if runtime == "python":
        files.update(_vendor(project, python or sys.executable))
    files["manifest.json"] = render(data).encode()
    _write_zip(output, files)
    digest = hashlib.sha256(output.read_bytes()).hexdigest()
    return Built(output, data, digest, len(files), tuple(skipped))
