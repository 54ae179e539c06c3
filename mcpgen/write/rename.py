"""``mcpgen build --rename OLD=NEW``: the user's handler follows an item the manifest renamed
(its model class names and its stub's docstring line too; docs/surface.md). Every rename is
checked before anything is written.
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from mcpgen import identifiers as names
from mcpgen.model.types import Manifest
from mcpgen.write import Move

KINDS = ("tool", "resource", "prompt")


class RenameError(Exception):
    """A rename that cannot be done; the message is one line, for the user."""


@dataclass(frozen=True)
class Rename:
    old: str
    new: str
    kind: str | None = None  # tool | resource | prompt; None: whichever has a file


def parse(values: Iterable[str]) -> list[Rename]:
    """``old=new`` or ``kind:old=new`` (kind: tool, resource, prompt)."""
    found = []
    for value in values:
        head, sep, new = value.partition("=")
        kind, colon, old = head.partition(":")
        if not colon:
            kind, old = "", head
        if not sep or not old.strip() or not new.strip() or (colon and kind not in KINDS):
            raise RenameError(
                f"--rename {value!r}: expected OLD=NEW or KIND:OLD=NEW (KIND: tool, resource, "
                "prompt), e.g. --rename export_notes=export_all_notes"
            )
        found.append(Rename(old.strip(), new.strip(), kind or None))
    return found


def _handled(manifest: Manifest, kind: str) -> dict[str, tuple[str, dict[str, str]]]:
    """name -> (file ident, {model class derived from the name: the new item's class})."""
    if kind == "tool":
        return {
            t.name: (t.ident, {"Input": t.input_model, "Output": t.output_model or ""})
            for t in manifest.tools
            if not t.mode_tool
        }
    if kind == "resource":
        return {r.name: (r.ident, {}) for r in manifest.resources if r.has_handler}
    return {p.name: (p.ident, {"Arguments": p.class_name}) for p in manifest.prompts if p.handler}


def plan_moves(
    root: Path, manifest: Manifest, renames: list[Rename], stub: Callable[[str], str | None]
) -> list[Move]:
    """The moves for ``renames``, or :class:`RenameError` naming the first that cannot be.
    ``stub(relative)``: the stub a build writes there; a target that is still exactly that
    stub (a build without ``--rename`` made it) is replaced by the moved handler."""
    package = f"src/{manifest.server.package}/"
    moves: list[Move] = []
    for rename in renames:
        head = f"--rename {rename.old}={rename.new}"
        candidates = []
        for kind in [rename.kind] if rename.kind else KINDS:
            items = _handled(manifest, kind)
            if rename.new not in items:
                continue
            if rename.old in items:
                raise RenameError(
                    f"{head}: {rename.old!r} is still a {kind} of the manifest (rename it there "
                    "first)"
                )
            ident, classes = items[rename.new]
            old = package + names.handler_path(f"{kind}s", names.ident(rename.old))
            new = package + names.handler_path(f"{kind}s", ident)
            candidates.append((kind, old, new, classes))
        if not candidates:
            what = rename.kind or "tool, resource or prompt"
            raise RenameError(f"{head}: the manifest has no {what} {rename.new!r} with a handler")
        existing = [c for c in candidates if (root / c[1]).is_file()]
        if len(existing) > 1:
            raise RenameError(
                f"{head}: both a {existing[0][0]} and a {existing[1][0]} have that name; say "
                f"which, e.g. --rename {existing[0][0]}:{rename.old}={rename.new}"
            )
        kind, old, new, classes = (existing or candidates)[0]
        if not existing:
            raise RenameError(f"{head}: {old} does not exist")
        if old == new:
            raise RenameError(f"{head}: both names have the file {new}; nothing to move")
        try:
            untouched = (root / new).read_text("utf-8") == stub(new)
        except (OSError, UnicodeDecodeError):
            untouched = False
        if ((root / new).exists() and not untouched) or any(m.new == new for m in moves):
            raise RenameError(
                f"{head}: {new} exists already and is not the untouched stub (move or delete it "
                "first)"
            )
        if any(m.old == old for m in moves):
            raise RenameError(f"--rename: {old} is renamed twice")
        try:
            text = (root / old).read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise RenameError(f"{head}: cannot read {old}: {exc}") from None
        pascal = names.pascal(rename.old)
        mapping = {pascal + end: to for end, to in classes.items() if to and to != pascal + end}
        text = rename_names(text, mapping)
        # the stub's first docstring line, if the user kept it, names the new item
        before, after = ('"""' + _TITLES[kind].format(name) for name in (rename.old, rename.new))
        if text.startswith(before):
            text = after + text[len(before) :]
        moves.append(Move(old, new, text))
    return moves


def rename_names(source: str, mapping: dict[str, str]) -> str:
    """``source`` with every Python name in ``mapping`` replaced (names only: strings,
    comments and attributes of other objects keep their text). Source that does not
    tokenize is returned unchanged."""
    if not mapping:
        return source
    lines = source.splitlines(keepends=True)
    edits: list[tuple[int, int, int, str]] = []
    previous = ""
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.NAME and token.string in mapping and previous != ".":
                (row, col), (_, end) = token.start, token.end
                edits.append((row, col, end, mapping[token.string]))
            if token.type not in (tokenize.NL, tokenize.COMMENT):
                previous = token.string
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return source
    for row, col, end, text in sorted(edits, reverse=True):
        line = lines[row - 1]
        lines[row - 1] = line[:col] + text + line[end:]
    return "".join(lines)


_TITLES = {
    "tool": "Handler for the {} tool.",
    "resource": "Content of the {} resource",
    "prompt": "Renders the {} prompt.",
}
