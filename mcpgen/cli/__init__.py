"""The ``mcpgen`` command line. Exit codes: 0 ok, 1 drift found by --check, 2 bad input."""

from __future__ import annotations

import json
import os
import shlex
import signal
import sys
from importlib.metadata import PackageNotFoundError
from pathlib import Path
from typing import Any, NoReturn

import click

from mcpgen import __version__, identifiers
from mcpgen.check.structure import manifest_schema
from mcpgen.format import ENGINES
from mcpgen.health import check_command
from mcpgen.hosts.commands import COMMANDS as HOST_COMMANDS
from mcpgen.pipeline import load_manifest
from mcpgen.problems import Problems
from mcpgen.surface.report import diff as diff_command

EXIT_OK, EXIT_DRIFT, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 70


def counted(number: int, noun: str) -> str:
    """``1 tool``, ``2 tools``, ``0 tools``."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def report(problems: Problems, strict: bool = False) -> None:
    color = sys.stderr.isatty() and not os.environ.get("NO_COLOR") and not os.environ.get("CI")
    for problem in problems.sorted():
        click.echo(problem.format(color), err=True)
    errors, warnings = len(problems.errors), len(problems.warnings)
    if errors or (strict and warnings):
        click.echo(f"{errors} error(s), {warnings} warning(s)", err=True)


def bad_input(problems: Problems, strict: bool = False) -> NoReturn:
    report(problems, strict)
    sys.exit(EXIT_BAD_INPUT)


class _Group(click.Group):
    """Anything unexpected as a one-line message, not a traceback."""

    def invoke(self, ctx: click.Context) -> object:
        try:  # SIGTERM stops a command as Ctrl-C does
            previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
        except ValueError:  # (not the main thread)
            previous = None
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)
        except RecursionError:
            click.echo("error: input nested too deeply", err=True)
            sys.exit(EXIT_BAD_INPUT)
        except OSError as exc:  # the system refused a path given (too long, denied...): no bug
            click.echo(f"error: {exc}", err=True)
            sys.exit(EXIT_BAD_INPUT)
        except Exception as exc:  # a bug in mcpgen: one line, not a traceback
            missing = getattr(exc, "name", None)  # (a dependency an install lacks: no bug)
            if (
                isinstance(exc, ModuleNotFoundError | PackageNotFoundError)
                and missing
                and missing.partition(".")[0] != "mcpgen"
            ):
                click.echo(
                    f"error: {missing} is not installed; install mcpgen with its dependencies "
                    "(pip install mcpgen, or pip install . in its checkout)",
                    err=True,
                )
                sys.exit(EXIT_BAD_INPUT)
            if os.environ.get("MCPGEN_DEBUG"):
                raise
            click.echo(
                f"internal error: {type(exc).__name__}: {exc} (set MCPGEN_DEBUG=1 for details)",
                err=True,
            )
            sys.exit(EXIT_INTERNAL)
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="mcpgen")
def main() -> None:
    """Generate typed Model Context Protocol servers and clients from a manifest.

    Write a manifest (``mcpgen init``), check it (``mcpgen validate``), then build a
    server package from it (``mcpgen build``). Exit status: 0 ok; 1 drift found by
    ``build --check``, a breaking change found by ``diff``, or problems found by
    ``check``; 2 bad input; 70 an internal error (a bug in mcpgen: ``MCPGEN_DEBUG=1``
    shows its traceback).
    """


@main.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path), default=".")
@click.option("--name", default=None, help="Server name (default: the folder's name).")
@click.option("--force", is_flag=True, help="Overwrite an existing mcpgen.yaml.")
def init(directory: Path, name: str | None, force: bool) -> None:
    """Write a starter manifest (DIRECTORY/mcpgen.yaml) that validates and builds."""
    from mcpgen.cli.starter import starter_manifest

    target = directory / "mcpgen.yaml"
    if directory.exists() and not directory.is_dir():  # ``init /dev/null``: "File exists"
        click.echo(f"{directory}: not a folder (init writes DIRECTORY/mcpgen.yaml)", err=True)
        sys.exit(EXIT_BAD_INPUT)
    if target.exists() and not force:
        click.echo(f"{target}: already exists (use --force to overwrite)", err=True)
        sys.exit(EXIT_BAD_INPUT)
    server_name = name or directory.resolve().name
    try:
        directory.mkdir(parents=True, exist_ok=True)
        target.write_text(starter_manifest(server_name), encoding="utf-8")
    except OSError as exc:
        click.echo(f"{target}: cannot write: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    click.echo(f"wrote {target}")
    shown, out = shlex.quote(str(target)), shlex.quote(str(directory / "server"))
    click.echo(f"next: mcpgen validate {shown} && mcpgen build {shown} -o {out}")
    click.echo(f"then: mcpgen dev {shown} (serves that project, rebuilds it on every change)")


@main.command()
@click.argument("manifest", type=click.Path(path_type=Path))
@click.option("--strict", is_flag=True, help="Treat warnings as errors.")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    help="json: one object with every problem (for editors and CI annotations).",
)
def validate(manifest: Path, strict: bool, output_format: str) -> None:
    """Check MANIFEST (or an OpenAPI document) and report every problem at once, as
    FILE:LINE:COL: level: field: message."""
    loaded = load_manifest(manifest, strict)
    m = loaded.manifest
    if output_format == "json":
        data = {"ok": m is not None, "problems": [p.to_data() for p in loaded.problems.sorted()]}
        if m is not None:
            data.update(tools=len(m.tools), resources=len(m.resources), prompts=len(m.prompts))
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        sys.exit(EXIT_BAD_INPUT if m is None else 0)
    if m is None:
        bad_input(loaded.problems, strict)
    report(loaded.problems)
    click.echo(
        f"{manifest}: ok ({counted(len(m.tools), 'tool')}, "
        f"{counted(len(m.resources), 'resource')}, {counted(len(m.prompts), 'prompt')}, "
        f"{counted(len(loaded.problems.warnings), 'warning')})"
    )


@main.command()
def schema() -> None:
    """Print the JSON Schema of the manifest format (for editors and yaml-language-server)."""
    click.echo(json.dumps(manifest_schema(), indent=2))


@main.command()
@click.argument("manifest", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the model as JSON.")
def inspect(manifest: Path, as_json: bool) -> None:
    """Show the normalized model that templates are rendered from."""
    loaded = load_manifest(manifest)
    if loaded.manifest is None:
        bad_input(loaded.problems)
    m = loaded.manifest
    if as_json:
        click.echo(json.dumps(m.to_data(), indent=2, sort_keys=True, ensure_ascii=False))
        return
    s = m.server
    click.echo(f"server {s.name} {s.version} (package {s.package}, distribution {s.distribution})")
    for tool in m.tools:
        out = f" -> {tool.output_model}" if tool.output_model else ""
        handler = identifiers.handler_path("tools", tool.ident)
        where = f"{tool.http.method} {tool.http.path}" if tool.http else handler
        task = f", task {tool.task}" if tool.task else ""
        click.echo(f"  tool {tool.name}: {where} ({tool.input_model}{out}{task})")
    if m.meta_tools:
        click.echo("  meta-tool mode: tools/list shows search/describe/call_operation")
    for resource in m.resources:
        kind = "template" if resource.is_template else "resource"
        source = "handler" if resource.has_handler else "static"
        if resource.http:
            source = f"{resource.http.method} {resource.http.path}"
        click.echo(f"  {kind} {resource.uri_template or resource.uri} ({source})")
    for prompt in m.prompts:
        click.echo(f"  prompt {prompt.name} ({len(prompt.arguments)} arguments)")
    for completion in m.completions:
        click.echo(f"  completion {completion.target} {completion.ref} {completion.argument}")


@main.command()
@click.argument("source", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Output folder (default: the project built from SOURCE here or beside it, "
    "else ./<server name>).",
)
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if OUTPUT differs.")
@click.option(
    "--diff", "show_diff", is_flag=True, help="Print a unified diff of what would change."
)
@click.option("--strict", is_flag=True, help="Treat warnings as errors.")
@click.option(
    "--max-context-bytes",
    type=click.IntRange(min=1),
    default=None,
    help="Fail when tools/list would be larger than this many bytes.",
)
@click.option("--timings", is_flag=True, help="Print the wall time of each build phase.")
@click.option(
    "--name",
    default=None,
    help="Server name for an OpenAPI SOURCE (default: a short name from its title or host).",
)
@click.option(
    "--rename",
    "renames",
    multiple=True,
    metavar="OLD=NEW",
    help="The manifest renamed OLD to NEW: move its handler file to the new name and update "
    "the model class names it uses (repeatable; KIND:OLD=NEW for a resource or prompt).",
)
@click.option(
    "--formatter",
    type=click.Choice(ENGINES),
    default="ruff",
    show_default=True,
    help="What formats the generated Python: ruff format (set to write black's bytes) or black.",
)
def build(source: Path, output: Path | None, **options: Any) -> None:
    """Generate a server package (and typed client) from SOURCE into OUTPUT.

    SOURCE is a manifest, or an OpenAPI 3.0 / 3.1 or Swagger 2.0 document (YAML or JSON)
    whose operations become tools that call the API.
    """
    from mcpgen.cli.build import run_build

    sys.exit(run_build(source, output, **options))


for command in (diff_command, check_command, *HOST_COMMANDS):
    main.add_command(command)


def run() -> None:
    """The ``mcpgen`` command (console script and ``python -m mcpgen``)."""
    try:
        main()
    except BrokenPipeError:  # stdout closed early (``mcpgen ... | head``)
        sys.stderr.close()
        sys.exit(1)
