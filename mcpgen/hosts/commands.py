"""The click commands ``install``, ``call``, ``list``, ``bundle``, ``dev`` and ``add``
(exit status 0 ok, 1 a tool error from ``call``, 2 bad input)."""

from __future__ import annotations

import re
import shlex
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import click

from mcpgen.health import stubs_left
from mcpgen.host_entry import HOSTS, ProjectError, build_entry, merge, render

from . import install as inst
from .bundle import RUNTIMES, build_bundle
from .call import EXIT_BAD_INPUT, call_tool, list_server, run
from .project import KINDS, describe, launcher
from .registry import PLACEHOLDER_NAMESPACE, check_replaceable
from .registry import server_json as make_server_json

FILE = click.Path(dir_okay=False, path_type=Path)
FOLDER = click.Path(file_okay=False, path_type=Path)


def say(message: str) -> None:
    click.echo(message, err=True)


def fail(message: str) -> NoReturn:
    say(f"error: {message}")
    sys.exit(EXIT_BAD_INPUT)


def _pairs(names: str) -> Callable[[click.Context, click.Parameter, Any], dict[str, str]]:
    """A callback for a repeated ``NAME=VALUE`` option: a dict, each NAME matching ``names``."""
    pattern = re.compile(names)

    def parse(ctx: click.Context, param: click.Parameter, pairs: Any) -> dict[str, str]:
        values = {}
        for pair in pairs:
            name, sep, value = pair.partition("=")
            if not sep or not pattern.fullmatch(name.strip()):
                raise click.BadParameter(f"{pair!r}: expected NAME=VALUE", ctx, param)
            values[name.strip()] = value
        return values

    return parse


_env = click.option(
    "--env",
    multiple=True,
    metavar="K=V",
    callback=_pairs(r"[A-Za-z_][A-Za-z0-9_]*"),
    help="A variable for the server (repeatable).",
)
_python = click.option(
    "--python",
    type=FILE,
    help="Interpreter of the venv the project is installed in (default: PROJECT/.venv).",
)


@click.command()
@click.argument("host", type=click.Choice(list(HOSTS)))
@click.argument("project", type=FOLDER)
@click.option("--name", help="Entry name (default: the server's name).")
@_env
@click.option("--print", "show", is_flag=True, help="Print the entry; write nothing.")
@click.option(
    "--config", type=FILE, help="Config file to merge into (default: the host's own for this OS)."
)
@click.option(
    "--launcher",
    "kind",
    type=click.Choice(KINDS),
    help="How the host starts the server (default: the first that works).",
)
@click.option(
    "--force",
    is_flag=True,
    help="Replace an entry of that name that runs something else (its env is dropped).",
)
@_python
def install(
    host: str,
    project: Path,
    name: str | None,
    env: dict[str, str],
    show: bool,
    config: Path | None,
    kind: str | None,
    force: bool,
    python: Path | None,
) -> None:
    """Add PROJECT (a generated project folder) to HOST's MCP config.

    The entry starts the server with an absolute command (the project's venv script, the
    script on PATH, or uvx), with an env entry for every variable the server needs: values
    from --env, else placeholders that the command names. The file is backed up first,
    other servers are kept, and a second run changes nothing. An entry of the same name
    that runs another command or project is refused unless --force, and its env (which
    may hold that server's secrets) is never carried over.
    """
    try:
        proj = describe(project)
        name = name or proj.name
        run = launcher(proj, python=python, kind=kind)
        spec = HOSTS[host]
        path = config or inst.config_path(spec)
        existing = None if show else inst.replaceable(path, spec, name, run, force, proj)
        entry = build_entry(spec, name, proj.needed_env("stdio"), run, env, existing)
        say(f"launcher: {run.kind}: {run.note}")
        if show:
            click.echo(render(merge(spec, {}, entry)), nl=False)
        else:
            outcome = inst.write_config(path, spec, entry)
            if outcome.changed:
                saved = f" (backup: {outcome.backup})" if outcome.backup else ""
                say(f"{spec.title}: wrote {entry.name!r} to {path}{saved}")
            else:
                say(f"{spec.title}: {path} already has {entry.name!r}: unchanged")
    except ProjectError as exc:
        fail(str(exc))
    if unknown := sorted(env.keys() - {v.name for v in proj.environment}):
        say(f"note: the project does not list {', '.join(unknown)}")
    if entry.to_fill:
        where = "the printed entry" if show else str(path)
        say(f"fill in before use, in {where}: {', '.join(entry.to_fill)}")
    if entry.prompted:
        say(f"{spec.title} will ask for: {', '.join(entry.prompted)}")
    if show:
        return
    if host == "claude-code" and shutil.which("claude"):
        say(
            f"(Claude Code's own CLI does the same: claude mcp add-json --scope user "
            f"{shlex.quote(entry.name)} '<the entry>')"
        )
    if outcome.changed and host != "mcp-json":
        say(f"restart {spec.title} to load it")


def _connection_options(f: click.decorators.FC) -> click.decorators.FC:
    for option in reversed(
        [
            click.option("--command", help="Spawn this command line over stdio."),
            _env,
            click.option(
                "--header",
                "headers",
                multiple=True,
                metavar="K=V",
                callback=_pairs(r".+"),
                help="An HTTP header (URLs only).",
            ),
            click.option("--token", help="Bearer token (URLs only)."),
            _python,
            click.option(
                "--timeout",
                type=click.FloatRange(min=0.1),
                default=30.0,
                show_default=True,
                help="Seconds to wait for the server.",
            ),
        ]
    ):
        f = option(f)
    return f


@click.command(name="call")
@click.argument("words", nargs=-1, metavar="SOURCE TOOL [KEY=VALUE]...")
@click.option("--args", "args_json", default=None, help="Arguments as one JSON object.")
@click.option("--json", "raw", is_flag=True, help="Print the whole result as JSON.")
@_connection_options
def call_command(
    words: tuple[str, ...], args_json: str | None, raw: bool, timeout: float, **connection: Any
) -> None:
    """Call TOOL on the server at SOURCE and print its result.

    SOURCE is a generated project folder, a URL (streamable HTTP) or a command line; with
    --command, give only TOOL. Values in KEY=VALUE are JSON when they parse as JSON
    (numbers=[1,2]), else text. Exit status: 0 ok, 1 the tool answered with an error,
    2 bad input or no server.
    """
    source = words[0] if words and connection["command"] is None else None
    rest = words if source is None else words[1:]
    if not rest:
        fail("name the TOOL to call (mcpgen list SOURCE shows them)")
    sys.exit(run(call_tool, source, connection, rest[0], args_json, rest[1:], timeout, raw))


@click.command(name="list")
@click.argument("source", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the listings as JSON.")
@_connection_options
def list_command(source: str | None, as_json: bool, timeout: float, **connection: Any) -> None:
    """List the tools (with their arguments), prompts and resources of SOURCE."""
    sys.exit(run(list_server, source, connection, timeout, as_json))


@click.command()
@click.argument("project", type=FOLDER)
@click.option("-o", "--output", type=FILE, help="The bundle (default: ./NAME-VERSION.mcpb).")
@click.option(
    "--runtime",
    type=click.Choice(RUNTIMES),
    default="uv",
    show_default=True,
    help="uv: the host installs the dependencies (portable); python: vendor them for "
    "this platform and Python version.",
)
@click.option("--registry-name", help="server.json name, e.g. io.github.you/x.")
@click.option("--mcpb-url", help="Where the bundle will be released (server.json).")
@click.option("--repository", help="Source repository URL (server.json).")
@click.option(
    "--server-json", type=FILE, help="Where to write server.json (default: beside the bundle)."
)
@click.option(
    "--allow-stubs",
    is_flag=True,
    help="Pack handlers that still raise NotImplementedError (warned) instead of refusing.",
)
@_python
def bundle(
    project: Path,
    output: Path | None,
    runtime: str,
    registry_name: str | None,
    mcpb_url: str | None,
    repository: str | None,
    server_json: Path | None,
    allow_stubs: bool,
    python: Path | None,
) -> None:
    """Pack PROJECT into an MCP Bundle (.mcpb) and write its MCP Registry server.json.
    Refuses a project whose handlers are still stubs (mcpgen check's stubs), unless
    --allow-stubs."""
    try:
        proj = describe(project)
        level = "warning" if allow_stubs else "error"
        for stub in (left := stubs_left(proj.root, proj.package)):
            say(f"{project / stub.path}:{stub.line or 1}: {level}: stubs: {stub.message}")
        if left and not allow_stubs:
            fail(
                f"{project}: {len(left)} handler(s) unwritten, a host would answer 'not "
                "implemented yet': write them, or pass --allow-stubs (nothing written)"
            )
        target = output or Path(f"{proj.name}-{proj.version}.mcpb")
        registry_path = server_json or target.with_name("server.json")
        # what does not depend on the bundle is refused before the bundle is written
        check_replaceable(registry_path, proj)
        make_server_json(proj, registry_name, mcpb_url, "0" * 64, repository)
        registry_path.parent.mkdir(parents=True, exist_ok=True)
        built = build_bundle(proj, target, runtime, str(python) if python else None, registry_path)
        document = make_server_json(proj, registry_name, mcpb_url, built.sha256, repository)
        registry_path.write_text(render(document), "utf-8")
    except ProjectError as exc:
        fail(str(exc))
    except OSError as exc:  # a read-only folder, a full disk
        fail(f"cannot write: {exc}")
    for left_out in built.skipped:
        say(f"warning: left out of the bundle: {left_out}")
    say(
        f"wrote {target} ({built.files} files, {target.stat().st_size} bytes, "
        f"sha256 {built.sha256}; runtime {runtime})"
    )
    say(f"wrote {registry_path} (validates against the registry's 2025-12-11 schema)")
    if options := built.manifest.get("user_config") or {}:
        say(f"the host asks the user for: {', '.join(sorted(options))}")
    if registry_name is None:
        say(
            f"note: server.json uses the placeholder {PLACEHOLDER_NAMESPACE}/...; pass --registry-name"
        )


@click.command(name="dev")
@click.argument("manifest", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option(
    "-o",
    "--output",
    type=FOLDER,
    help="Output folder (default: the project built from MANIFEST here or beside it, "
    "else ./<server name>).",
)
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    help="[default: http when the server offers it, else stdio]",
)
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True)
@_python
def dev_command(
    manifest: Path, output: Path | None, transport: str | None, port: int, python: Path | None
) -> None:
    """Build MANIFEST, run the server, and rebuild and restart it on every change to the
    manifest, the files it names or the handlers (one line each; a failed build keeps
    the last good server running). Stop with Ctrl-C."""
    from .dev import dev

    if output is None:
        from mcpgen.cli.starter import default_output
        from mcpgen.pipeline import load_manifest

        loaded = load_manifest(manifest)
        if loaded.manifest is None:
            fail(
                f"{manifest} does not validate; run mcpgen validate {shlex.quote(str(manifest))}, or give -o"
            )
        output = default_output(manifest, loaded.manifest.server.name)
    sys.exit(dev(manifest, output, transport, port, python))


@click.command(name="add")
@click.argument("kind", type=click.Choice(["tool", "resource", "prompt"]))
@click.argument("name")
@click.argument("manifest", type=FILE, default="mcpgen.yaml")
@click.option(
    "-o", "--output", type=FOLDER, help="Build the project here afterwards (writes the new stub)."
)
@click.option("--description", help="Its description (default: a TODO).")
@click.option("--uri", help="resource: its URI or URI template.")
def add_command(
    kind: str,
    name: str,
    manifest: Path,
    output: Path | None,
    description: str | None,
    uri: str | None,
) -> None:
    """Append a skeleton KIND named NAME to MANIFEST (default mcpgen.yaml), keeping the rest
    of the file as it is; with -o, build its stub too."""
    from .add import add_entry  # (imports PyYAML, which a build of JSON does not need)

    try:
        new = add_entry(manifest, kind, name, uri, description)
    except ProjectError as exc:  # the problems, located, then why nothing was added
        say("\n".join([*exc.lines, str(exc)]))
        sys.exit(EXIT_BAD_INPUT)
    try:
        inst.write_atomic(manifest, new)
    except ProjectError as exc:
        fail(str(exc))
    say(f"{manifest}: added {kind} {name!r} (fill in its TODOs)")
    if output is not None:
        from mcpgen.cli.build import run_build

        sys.exit(run_build(manifest, output, check=False, show_diff=False, strict=False))


COMMANDS = [install, call_command, list_command, bundle, dev_command, add_command]
