"""``mcpgen add tool|resource|prompt NAME``: one more skeleton entry written into the
manifest's text (the rest kept as it was), validated before anything is written."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from mcpgen.host_entry import Json, ProjectError
from mcpgen.load.document import display_path
from mcpgen.problems import InputError, fail


def skeleton(kind: str, name: str, server: str, uri: str | None = None) -> dict[str, Json]:
    """A small valid entry to start from; every TODO is the author's to replace."""
    if kind == "tool":
        return {
            "name": name,
            "description": f"TODO: what {name} does, for the model that calls it.",
            "input": {
                "type": "object",
                "properties": {"text": {"type": "string", "description": "TODO"}},
                "required": ["text"],
                "additionalProperties": False,
            },
            "output": {
                "type": "object",
                "properties": {"result": {"type": "string"}},
                "required": ["result"],
            },
        }
    if kind == "resource":
        target = uri or f"{_scheme(server)}://{name}"
        return {  # no text/blob/file: a handler provides the content
            "uriTemplate" if "{" in target else "uri": target,
            "name": name,
            "description": f"TODO: what {name} holds.",
            "mimeType": "text/plain",
        }
    return {
        "name": name,
        "description": f"TODO: what the {name} prompt asks for.",
        "arguments": [{"name": "topic", "description": "TODO", "required": True}],
        "messages": [{"role": "user", "text": "TODO: write the prompt about {{ topic }}."}],
    }


def _scheme(server: str) -> str:
    scheme = re.sub(r"[^a-z0-9+.-]", "-", server.lower()).strip("-.+")
    return scheme if scheme[:1].isalpha() else "server"


class _Dumper(yaml.SafeDumper):
    """Block style, short all-scalar lists and mappings on one line, indented sequences."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _scalar(value: Json) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _represent_list(dumper: yaml.SafeDumper, data: list[Json]) -> yaml.Node:
    flow = bool(data) and all(_scalar(v) for v in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


def _represent_dict(dumper: yaml.SafeDumper, data: dict[str, Json]) -> yaml.Node:
    flow = 0 < len(data) <= 3 and all(_scalar(v) for v in data.values())
    return dumper.represent_mapping("tag:yaml.org,2002:map", data.items(), flow_style=flow)


_Dumper.add_representer(list, _represent_list)
_Dumper.add_representer(dict, _represent_dict)


def _yaml_item(entry: dict[str, Json], indent: int) -> list[str]:
    text = yaml.dump([entry], Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    pad = " " * indent
    return [pad + line + "\n" if line else "\n" for line in text.splitlines()]


def insert_yaml(text: str, section: str, entry: dict[str, Json], file: str) -> str:
    """``text`` with ``entry`` appended to the top-level block list ``section`` (made when
    missing), as the file indents and spaces its items."""
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    key = re.compile(rf"{re.escape(section)}\s*:([^\r\n]*)")
    found = next(((i, m) for i, line in enumerate(lines) if (m := key.match(line))), None)
    if found is None:
        blank = [] if not lines or not lines[-1].strip() else ["\n"]
        return "".join([*lines, *blank, f"{section}:\n", *_yaml_item(entry, 2)])
    header, match = found
    rest, _, comment = match.group(1).partition("#")
    rest = rest.strip()
    if rest in ("[]", "null", "~"):
        lines[header] = f"{section}:" + (f"  #{comment}" if comment else "") + "\n"
    elif rest:  # an anchor, tag or alias: other entries may share or type the list
        mark = rest.split()[0] if rest[0] in "&!*" else ""
        what = f"carries {mark!r} (an anchor, tag or alias)" if mark else "is written in flow style"
        why = (
            f"'{section}:' {what} ({rest[:30]}...); add appends only to a "
            "plain block list (one '- ' item a line): write it as one, or add the entry by hand"
        )
        raise fail(file, why, header + 1, match.start(1) + match.group(1).find(rest) + 1)
    keys = (i for i in range(header + 1, len(lines)) if re.match(r"[^\s#-]", lines[i]))
    end = next(keys, len(lines))  # the next top-level key
    while end - 1 > header and (not lines[end - 1].strip() or lines[end - 1].startswith("#")):
        end -= 1  # blank lines and column-0 comments before the next key stay with it
    body = lines[header + 1 : end]
    items = [i for i, line in enumerate(body) if re.match(r"^\s*- ", line)]
    indent = len(body[items[0]]) - len(body[items[0]].lstrip()) if items else 2
    spaced = any(not body[i - 1].strip() for i in items[1:])
    new = (["\n"] if spaced and items else []) + _yaml_item(entry, indent)
    return "".join([*lines[:end], *new, *lines[end:]])


def insert_json(text: str, data: dict[str, Json], section: str, entry: dict[str, Json]) -> str:
    """``data`` (``text`` as read) with ``entry`` appended to ``section``, as the file indents."""
    data.setdefault(section, []).append(entry)
    indent = re.search(r"^\{\s*\n(\s+)\"", text)
    return json.dumps(data, indent=len(indent.group(1)) if indent else 2, ensure_ascii=False) + "\n"


def add_entry(
    manifest: Path, kind: str, name: str, uri: str | None = None, description: str | None = None
) -> str:
    """The manifest's new text (not yet written); else ``ProjectError``, its ``lines`` the
    problems (``FILE:LINE:COL: error: ...``)."""
    from mcpgen.load import load_file
    from mcpgen.pipeline import load_source_text

    section, shown = f"{kind}s", display_path(manifest)  # tools, resources, prompts
    try:  # mcpgen's own loader says where a file cannot be read or parsed (JSON, written
        doc, raw = load_file(manifest), manifest.read_bytes()  # back whole: 1e400 refused)
        text, data = raw.decode("utf-8").replace("\r\n", "\n"), doc.data
        if not isinstance(data, dict) or "mcpgen" not in data:
            raise fail(shown, "not an mcpgen manifest (no 'mcpgen:' key)", 1, 1)
        items = data.get(section)
        for i, item in enumerate(items if isinstance(items, list) else []):
            if isinstance(item, dict) and str(item.get("name")) == name:
                at, taken = doc.locate([section, i, "name"]), f"already a {kind} named {name!r}"
                raise fail(shown, f"there is {taken}", at.line, at.column, f"{section}[{i}].name")
        entry = skeleton(kind, name, str((data.get("server") or {}).get("name") or "server"), uri)
        entry["description"] = description or entry["description"]
        if manifest.suffix == ".json" or text.lstrip().startswith("{"):
            new = insert_json(text, data, section, entry)
        else:
            new = insert_yaml(text, section, entry, shown)
    except InputError as exc:
        lines = [problem.format() for problem in exc.problems]
        raise ProjectError("nothing added (file left untouched)", lines) from None
    except OSError as exc:  # (read a moment before by load_file)
        raise ProjectError(f"{shown}: error: cannot read file: {exc.strerror}") from None
    new = new.replace("\n", "\r\n") if b"\r\n" in raw else new  # (a Windows file stays one)
    loaded = load_source_text(new, shown, manifest.parent)
    if loaded.manifest is None:  # the original's problems when it has any: they are on disk
        before = load_source_text(text, shown, manifest.parent)
        why = f"the new {kind} {name!r} would not validate"
        if before.manifest is None:
            why, loaded = "does not validate as it is: fix it first", before
        lines = [problem.format() for problem in loaded.problems.sorted()]
        raise ProjectError(f"{shown}: {why} (file left untouched)", lines)
    return new
