"""``mcpgen call`` and ``mcpgen list`` on a SOURCE (project folder, command line or URL),
through the SDK's client. Exit status: 0 ok, 1 ``isError``, 2 bad input or no server."""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import re
import shlex
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from mcpgen.host_entry import ProjectError, render
from mcpgen.load import MAX_DEPTH, json_text

from .project import Json, describe, launcher

if TYPE_CHECKING:
    from mcp.client import Client

EXIT_OK, EXIT_TOOL_ERROR, EXIT_BAD_INPUT = 0, 1, 2
# what a terminal may obey rather than show: C0 and C1 controls and bidirectional overrides
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@dataclass
class Source:
    """Where the server is: ``url`` (streamable HTTP) or ``argv`` (spawned over stdio)."""

    url: str | None = None
    argv: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    label: str = ""
    refused: list[int] = field(default_factory=list)  # 401/403 answers of a URL's server


def resolve_source(
    source: str | None,
    command: str | None = None,
    env: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
    token: str | None = None,
    python: Path | None = None,
) -> Source:
    """SOURCE -> a ``Source``: an http(s) URL, a project folder, else a command line."""
    extra_env, all_headers = dict(env or {}), dict(headers or {})
    if token:
        all_headers["Authorization"] = f"Bearer {token}"
    is_url = command is None and (source or "").startswith(("http://", "https://"))
    if all_headers and not is_url:  # (--command too: they were dropped without a word)
        raise ProjectError("--header and --token apply to URLs only")
    if command is not None:
        return _command(command, extra_env)
    if source is None:
        raise ProjectError("give a SOURCE: a project folder, a URL or --command 'CMD ARGS'")
    if is_url:
        return Source(url=source, headers=all_headers, label=source)
    path = Path(source)
    if path.is_dir():
        project = describe(path)
        run = launcher(project, python=python, own=Path(sys.executable))
        env = {**run.env, **extra_env}
        return Source(argv=run.argv, env=env, cwd=str(project.root), label=source)
    return _command(source, extra_env)


def _command(line: str, env: dict[str, str]) -> Source:
    try:
        argv = shlex.split(line)
    except ValueError as exc:
        raise ProjectError(f"cannot split the command {line!r}: {exc}") from exc
    if not argv:
        raise ProjectError("empty command")
    if shutil.which(argv[0]) is None:
        raise ProjectError(f"{argv[0]!r} is neither a project folder, a URL nor a command on PATH")
    return Source(argv=argv, env=env, label=line)


class NotFinite(ValueError):
    """1e400, NaN or Infinity: sent, it would arrive as null."""


def finite(literal: str) -> float:
    number = float(literal)
    if not math.isfinite(number):
        raise NotFinite(literal)
    return number


def parse_arguments(
    args_json: str | None, pairs: Sequence[str], schema: Mapping[str, Json] | None
) -> dict[str, Json]:
    """``--args JSON`` overlaid with ``key=value`` pairs: JSON when it parses, else text (and
    text for a string property: ``zip=02134`` stays "02134")."""
    arguments: dict[str, Json] = {}
    try:
        if args_json is not None:
            try:
                loaded = json.loads(args_json, parse_float=finite, parse_constant=finite)
            except NotFinite as exc:
                raise ProjectError(f"--args: {exc} is not a finite number") from exc
            except ValueError as exc:
                raise ProjectError(f"--args is not JSON: {exc}") from exc
            if not isinstance(loaded, dict):
                raise ProjectError("--args must be a JSON object")
            arguments.update(loaded)
        properties = (schema or {}).get("properties") or {}
        for pair in pairs:
            key, sep, raw = pair.partition("=")
            if not sep or not key:
                raise ProjectError(f"argument {pair!r}: expected key=value")
            prop = properties.get(key)
            arguments[key] = raw
            if not (isinstance(prop, dict) and prop.get("type") in ("string", ["string"])):
                with contextlib.suppress(ValueError):
                    arguments[key] = json.loads(raw, parse_float=finite, parse_constant=finite)
        if not json_text.too_deep(arguments, MAX_DEPTH):
            return arguments
    except RecursionError:  # deeper than json itself goes
        pass
    raise ProjectError(f"the arguments nest deeper than {MAX_DEPTH} levels (mcpgen's limit)")


@asynccontextmanager
async def session(source: Source, timeout: float) -> AsyncIterator[Client]:
    """A connected ``Client`` for ``source``; a failure is one ``ProjectError``."""
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    said: list[str] = []

    def hush(record: logging.LogRecord) -> bool:  # one line, not the SDK's traceback
        errors: list[Any] = getattr(record.exc_info and record.exc_info[1], "errors", list)()
        said.append(record.getMessage() + (f": {errors[0].get('input')!r:.80}" if errors else ""))
        return False

    stdio_log = logging.getLogger("mcp.client.stdio")  # (what a server wrote on stdout)
    stdio_log.addFilter(hush)
    with tempfile.TemporaryFile("w+", encoding="utf-8") as log:
        try:
            async with contextlib.AsyncExitStack() as stack:
                if source.url is not None:
                    import httpx2
                    from mcp.client.streamable_http import streamable_http_client

                    async def seen(response: httpx2.Response) -> None:
                        if response.status_code in (401, 403):
                            source.refused.append(response.status_code)

                    hooks = {"response": [seen]}
                    http = httpx2.AsyncClient(
                        headers=source.headers, timeout=httpx2.Timeout(timeout), event_hooks=hooks
                    )
                    await stack.enter_async_context(http)
                    transport = streamable_http_client(source.url, http_client=http)
                else:
                    # this shell's environment with --env over it; stdout not UTF-8 is junk
                    command, *args = source.argv
                    env = {**os.environ, **source.env}
                    params = StdioServerParameters(
                        command=command, args=args, env=env, cwd=source.cwd,
                        encoding_error_handler="replace",
                    )  # fmt: skip
                    transport = stdio_client(params, errlog=log)
                async with Client(transport, read_timeout_seconds=timeout) as client:
                    yield client
        except Exception as exc:
            raise failure(source, exc, log, said[0] if said else "") from exc
        finally:
            stdio_log.removeFilter(hush)


def failure(source: Source, exc: BaseException, log: IO[str], noise: str = "") -> ProjectError:
    """Why talking to ``source`` failed, in one line: the innermost error and the last line
    a spawned server wrote; a 401 or 403 says what to do. Our ``ProjectError`` passes as is."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, ProjectError):
        return exc
    message = (str(exc).strip().splitlines() or [""])[0]
    error = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    try:
        log.flush()
        log.seek(0)
        said = [line.strip() for line in log.read().splitlines() if line.strip()]
    except (OSError, ValueError):
        said = []
    tail = f" (server said: {said[-1]})" if said else ""
    text = f"{source.label}: {error}{tail}{f' ({noise})' if noise else ''}"
    given = any(name.lower() == "authorization" for name in source.headers)
    if 401 in source.refused and given:
        text += " (HTTP 401: the server refused the token given; check --token)"
    elif 401 in source.refused:
        text += " (HTTP 401: the server wants a token: --token TOKEN)"
    elif 403 in source.refused:
        text += " (HTTP 403: the token given lacks a scope or the origin is not allowed)"
    return ProjectError(text)


MAX_PAGES = 1000  # a server whose cursors never end cannot keep us here


async def _all(client: Client, kind: str) -> list[Any]:
    """Every page of ``kind`` (``list_KIND`` and the page's field): tools, prompts, ..."""
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await getattr(client, f"list_{kind}")(cursor=cursor)
        items.extend(getattr(page, kind))
        cursor = page.next_cursor
        if not cursor:
            break
    return items


async def call_tool(
    source: Source,
    tool: str,
    args_json: str | None,
    pairs: Sequence[str],
    timeout: float = 30.0,
    raw: bool = False,
) -> int:
    """Print the tool's result; the exit status."""
    async with session(source, timeout) as client:
        tools = {t.name: t for t in await _all(client, "tools")}
        if tool not in tools:
            known = ", ".join(sorted(tools)) or "none"
            raise ProjectError(f"{source.label}: no tool {tool!r} (tools: {known})")
        arguments = parse_arguments(args_json, pairs, tools[tool].input_schema)
        result = await client.call_tool(tool, arguments)
    text = printable(format_content(result.content), "\n\t")  # its lines kept
    if raw:
        sys.stdout.write(render_json(dump(result)))
    elif result.is_error:
        sys.stderr.write(f"tool error: {text}\n")
    elif result.structured_content is not None:
        sys.stdout.write(render_json(result.structured_content))
    elif text:
        sys.stdout.write(text + "\n")
    return EXIT_TOOL_ERROR if result.is_error else EXIT_OK


async def list_server(source: Source, timeout: float = 30.0, as_json: bool = False) -> int:
    """Print the server's tools (with their arguments), prompts and resources."""
    async with session(source, timeout) as client:
        caps, info = client.server_capabilities, client.server_info
        kinds = {"tools": caps.tools, "prompts": caps.prompts, "resources": caps.resources}
        kinds["resource_templates"] = caps.resources
        found = {k: await _all(client, k) if on is not None else [] for k, on in kinds.items()}
    if as_json:
        data = {"server": dump(info) if info is not None else None}
        for kind, items in found.items():
            data[kind.replace("resource_templates", "resourceTemplates")] = list(map(dump, items))
        sys.stdout.write(render_json(data))
        return EXIT_OK
    tools, prompts = found["tools"], found["prompts"]
    resources, templates = found["resources"], found["resource_templates"]
    lines = [f"server {info.name} {info.version}"] if info is not None else []
    lines.append(f"tools ({len(tools)}):")
    for t in tools:
        lines.append(f"  {t.name}({_signature(t.input_schema)})" + _summary(t.description))
    if prompts:
        lines.append(f"prompts ({len(prompts)}):")
        for p in prompts:
            names = ", ".join(a.name + ("" if a.required else "?") for a in p.arguments or [])
            lines.append(f"  {p.name}({names})" + _summary(p.description))
    if resources or templates:
        lines.append(f"resources ({len(resources) + len(templates)}):")
        lines.extend(f"  {r.uri}  {r.name}" for r in resources)
        lines.extend(f"  {r.uri_template}  {r.name}" for r in templates)
    sys.stdout.write("\n".join(map(printable, lines)) + "\n")
    return EXIT_OK


def run(
    func: Callable[..., Awaitable[int]],
    source: str | None,
    connection: Mapping[str, Any],
    *args: Any,
) -> int:
    """Run ``call_tool`` or ``list_server`` on SOURCE; the exit status (2: a ProjectError)."""
    try:
        try:  # before anyio, which comes with it
            import mcp.client  # noqa: F401
        except ImportError as exc:
            raise ProjectError(
                f"talking to a server needs the MCP Python SDK ({exc}): pip install 'mcp>=2.3,<2.4'"
            ) from exc
        import anyio

        return int(anyio.run(func, resolve_source(source, **connection), *args))
    except ProjectError as exc:  # (Ctrl-C is the command line's: "interrupted", exit 130)
        sys.stderr.write(f"error: {printable(str(exc))}\n")
        return EXIT_BAD_INPUT
    finally:
        sys.stdout.flush()


def printable(text: str, keep: str = "") -> str:
    """A server's text for a terminal: control characters not in ``keep`` shown (``\\xNN``,
    ``\\uNNNN``), not obeyed."""
    return CONTROL.sub(lambda c: c.group() if c.group() in keep else _escaped(c.group()), text)


def _escaped(char: str) -> str:
    return f"\\x{ord(char):02x}" if char < " " else f"\\u{ord(char):04x}"


def render_json(data: Json) -> str:
    """``data`` as indented JSON for a terminal (``printable``: the same value)."""
    return printable(render(data), "\n")


def dump(model: Any) -> Json:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def format_content(blocks: Sequence[Any]) -> str:
    """Content blocks as text: text as it is, other kinds as a one-line summary."""
    out = []
    for block in blocks:
        data = dump(block)
        kind = data.get("type")
        if kind == "text":
            out.append(str(data.get("text", "")))
        elif kind in ("image", "audio"):
            size = len(str(data.get("data", ""))) * 3 // 4
            out.append(f"[{kind} {data.get('mimeType', '')}, about {size} bytes]")
        elif kind == "resource_link":
            out.append(f"[resource link {data.get('uri')}]")
        elif kind == "resource":
            resource = data.get("resource") or {}
            text = resource.get("text")
            out.append(text if text is not None else f"[resource {resource.get('uri')}]")
        else:
            out.append(json.dumps(data, ensure_ascii=False))
    return "\n".join(out)


def _signature(schema: Mapping[str, Json]) -> str:
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    parts = []
    for name, prop in properties.items():
        kind: Any = "any"
        if isinstance(prop, dict):
            ref = str(prop.get("$ref") or "").rsplit("/", 1)[-1]
            kind = prop.get("type") or ref or ("enum" if "enum" in prop else "any")
        if isinstance(kind, list):
            kind = "|".join(map(str, kind))
        parts.append(f"{name}{'' if name in required else '?'}: {kind}")
    return ", ".join(parts)


def _summary(text: str | None) -> str:
    """The first line of ``text`` after two spaces; nothing when there is none."""
    lines = (text or "").strip().splitlines()
    return f"  {lines[0]}" if lines else ""
