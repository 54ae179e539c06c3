"""A server's entry in a host's MCP config (``HOSTS``), built from its ``_spec.json``
environment and launcher: what ``mcpgen install`` merges into the config file and what the
generated README shows (``readme_snippets``)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Json = Any


class ProjectError(Exception):
    """Bad input to a host command (exit status 2); ``lines``: the problems, printed first."""

    def __init__(self, message: str, lines: list[str] | None = None) -> None:
        super().__init__(message)
        self.lines = lines or []


@dataclass(frozen=True)
class EnvVar:
    name: str
    description: str = ""
    secret: bool = False
    required: bool = False
    default: str | None = None
    # transports it matters for; empty = all of them (listener settings are http-only)
    transports: tuple[str, ...] = ()
    credential: bool = False  # of the wrapped API (a client id too, not only a secret)


def needed_env(environment: list[EnvVar], transport: str = "stdio") -> list[EnvVar]:
    """What a host must set: the server fails without it, or it is (part of) a credential."""
    needed = (v for v in environment if v.required or v.secret or v.credential)
    return [v for v in needed if not v.transports or transport in v.transports]


def env_vars(items: Json, where: Path | str) -> list[EnvVar]:
    """The ``environment`` entries of a ``_spec.json`` (``where``: for the error)."""
    if not isinstance(items, list):  # spec format 1, before the list
        raise ProjectError(f"{where}: no environment list: built by an older mcpgen, rebuild it")
    out = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise ProjectError(f"{where}: environment entries need a name: {item!r}")
        default = item.get("default")
        out.append(
            EnvVar(
                name=item["name"],
                description=str(item.get("description") or ""),
                secret=bool(item.get("secret")),
                required=bool(item.get("required")),
                default=None if default is None else str(default),
                transports=tuple(item.get("transports") or ()),
                credential=bool(item.get("credential")),
            )
        )
    return out


@dataclass(frozen=True)
class Launcher:
    command: str  # absolute when it can be
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    kind: str = "venv"  # venv | python | source | path | uvx
    note: str = ""  # one line: what was chosen and why

    @property
    def argv(self) -> list[str]:
        return [self.command, *self.args]


PLACEHOLDER = "<fill in {name}>"
_PLACEHOLDER = re.compile(r"^<fill in [A-Za-z_][A-Za-z0-9_]*>$")


@dataclass(frozen=True)
class Host:
    id: str
    title: str
    key: str  # the object holding the servers: "mcpServers" or "servers"
    stdio_type: bool  # entries carry "type": "stdio"
    inputs: bool = False  # secrets left open become ${input:...} prompts (VS Code)


HOSTS: dict[str, Host] = {
    h.id: h
    for h in (
        Host("claude-desktop", "Claude Desktop", "mcpServers", stdio_type=False),
        Host("claude-code", "Claude Code", "mcpServers", stdio_type=True),
        Host("cursor", "Cursor", "mcpServers", stdio_type=False),
        Host("vscode", "VS Code", "servers", stdio_type=True, inputs=True),
        Host("mcp-json", "mcp.json", "mcpServers", stdio_type=False),
    )
}


@dataclass
class Entry:
    """The server's entry for one host, and what the user still has to fill in."""

    name: str
    body: dict[str, Json]
    inputs: list[dict[str, Json]] = field(default_factory=list)  # VS Code prompts
    to_fill: list[str] = field(default_factory=list)  # placeholders left in env
    prompted: list[str] = field(default_factory=list)  # VS Code asks for these itself


def _input_id(text: str) -> str:
    """A VS Code input id: lower case, digits and dashes only (``a}`` must not end a ref)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower())


def build_entry(
    host: Host,
    server: str,
    needed: list[EnvVar],
    run: Launcher,
    values: Mapping[str, str] | None = None,
    existing: Mapping[str, Json] | None = None,
) -> Entry:
    """The entry; each needed variable from ``values`` (``--env``), else the existing entry's
    filled-in value, else its default, else a placeholder (VS Code: an ``${input:...}``)."""
    given, old = dict(values or {}), env_of(existing)
    env: dict[str, str] = dict(run.env)
    entry = Entry(server, {})
    for var in needed:
        if var.name in given:
            env[var.name] = given.pop(var.name)
        elif isinstance(old.get(var.name), str) and not _PLACEHOLDER.match(old[var.name]):
            env[var.name] = old[var.name]
        elif var.default is not None and not var.secret:
            env[var.name] = var.default
        elif host.inputs:
            ident, text = _input_id(var.name), var.description or var.name
            env[var.name] = "${input:" + ident + "}"
            prompt = {"type": "promptString", "id": ident, "description": text}
            entry.inputs.append({**prompt, "password": var.secret})
            entry.prompted.append(var.name)
        else:
            env[var.name] = PLACEHOLDER.format(name=var.name)
            entry.to_fill.append(var.name)
    env.update(given)  # extra --env variables the project does not list
    entry.body = {"type": "stdio"} if host.stdio_type else {}
    entry.body.update(command=run.command, args=list(run.args))
    if env:
        entry.body["env"] = dict(sorted(env.items()))
    return entry


def env_of(entry: Json) -> Mapping[str, Json]:
    env = entry.get("env") if isinstance(entry, Mapping) else None
    return env if isinstance(env, Mapping) else {}


def runs_same(existing: Json, run: Launcher) -> bool:
    """Whether ``existing`` starts what ``run`` starts (command, args, launcher env): only
    then is it this project's entry, whose filled-in ``env`` values are kept."""
    return (
        isinstance(existing, Mapping)
        and existing.get("command") == run.command
        and existing.get("args", []) == list(run.args)
        and all(env_of(existing).get(name) == value for name, value in run.env.items())
    )


def merge(host: Host, data: dict[str, Json], entry: Entry) -> dict[str, Json]:
    """``data`` with ``entry`` put in (other servers, inputs and keys kept, key order too)."""
    servers = data.get(host.key, {})
    if not isinstance(servers, dict):
        raise ProjectError(f"{host.key!r} in the config is not an object (file left untouched)")
    inputs = data.get("inputs", [])
    if entry.inputs and not isinstance(inputs, list):
        raise ProjectError("'inputs' in the config is not a list (file left untouched)")
    known = {i.get("id") for i in inputs if isinstance(i, dict)} if entry.inputs else set()
    body, prompts = _own_prompts(servers, known, entry)
    merged = {**data, host.key: {**servers, entry.name: body}}
    if prompts:
        merged["inputs"] = [*inputs, *(i for i in prompts if i["id"] not in known)]
    return merged


_INPUT_REF = re.compile(r"\$\{input:([^}]+)\}")


def _own_prompts(
    servers: dict[str, Json], known: set[Json], entry: Entry
) -> tuple[Json, list[dict[str, Json]]]:
    """The entry's body and prompts, one renamed ``<server>-<id>`` (``-2``...) when its id is
    another server's or an orphan's (VS Code keeps one answer, maybe a secret, per id)."""
    run = Launcher(entry.body["command"], list(entry.body.get("args", [])))
    others = {n: o for n, o in servers.items() if n != entry.name or not runs_same(o, run)}
    own = {} if entry.name in others else servers.get(entry.name)  # this project's entry
    taken = set(_INPUT_REF.findall(json.dumps(others)))
    taken |= known - set(_INPUT_REF.findall(json.dumps(own)))
    env = dict(entry.body.get("env") or {})
    prompts = []
    for prompt in entry.inputs:
        ident = prompt["id"]
        if ident in taken:
            ident = base = _input_id(f"{entry.name}-{ident}")
            number = 1
            while ident in taken:
                number += 1
                ident = f"{base}-{number}"
            env = {
                k: v.replace(f"${{input:{prompt['id']}}}", f"${{input:{ident}}}")
                for k, v in env.items()
            }
        prompts.append({**prompt, "id": ident})
    return ({**entry.body, "env": env} if env else entry.body), prompts


def render(data: Json) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def readme_snippets(server: str, script: str, environment: list[Json]) -> dict[str, str]:
    """The entries ``install`` writes with nothing given, by host id, for the README."""
    needed = needed_env(env_vars(environment, "_spec.json"), "stdio")
    run = Launcher(f"/ABSOLUTE/PATH/TO/.venv/bin/{script}")
    return {
        host: render(merge(HOSTS[host], {}, build_entry(HOSTS[host], server, needed, run))).strip()
        for host in ("claude-desktop", "vscode")
    }
