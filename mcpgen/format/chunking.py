"""Cut a big Python file into pieces black can format one at a time, and glue them back.

black formats statements independently of each other except for the blank lines between
them, so a file can be formatted piece by piece: each top-level statement on its own, and
each member of a very big class (the typed client has one method per tool) inside a
stand-in class. Pieces are what the build caches and formats in parallel: a rebuild after
one operation changed formats one method, not the whole client.

``join`` puts back black's blank lines: two around top-level functions and classes, one
around methods, otherwise what the source had (at most two at the top level, one inside a
class). ``tests/test_chunking.py`` checks the result equals black on the whole file for
every generated example.
"""

from __future__ import annotations

import ast
import dataclasses
from dataclasses import dataclass

WRAPPER = "class _mcpgen_piece:\n"
_MEMBER_INDENT = "    "  # how black indents the members of a class
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass(frozen=True)
class Piece:
    text: str  # source to hand to black (inside WRAPPER when ``member``)
    blank_before: int  # blank lines the source had before it
    first: str  # kind of its first statement (see ``_kind``)
    after: str  # kind of the statement before it at the same depth ("" for the first)
    member: bool  # a class member: formatted inside WRAPPER, which is then removed
    start: int  # where its own text (without WRAPPER) is in the source: offsets
    end: int


def _kind(node: ast.stmt, lines: list[str]) -> str:
    """What black's blank-line rules care about: def, stub (``def f(): ...`` on one
    line), import or other."""
    if isinstance(node, _DEFS):
        body = node.body
        if (
            len(body) == 1
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and body[0].value.value is Ellipsis
            and not lines[body[0].lineno - 1].lstrip().startswith("...")
        ):
            return "stub"
        return "def"
    if isinstance(node, ast.Import | ast.ImportFrom):
        return "import"
    return "other"


def _is_string(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _start(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", None) or []
    return int(min([node.lineno, *(d.lineno for d in decorators)]))


def _statements(
    lines: list[str], body: list[ast.stmt], first: int, last: int
) -> list[tuple[int, int, ast.stmt, ast.stmt]] | None:
    """(start, end, first node, last node) line spans (1-based, inclusive) that cover lines first..last.

    Comment lines between statements belong to the statement before them (black attaches
    a comment to what follows, so a cut there could move blank lines): None when a piece
    cannot be cut cleanly (two statements on one line).
    """
    spans: list[tuple[int, int, ast.stmt, ast.stmt]] = []
    for node in body:
        start, end = _start(node), node.end_lineno or node.lineno
        if spans and start <= spans[-1][1]:
            return None
        if spans:
            between = lines[spans[-1][1] : start - 1]
            if any(line.strip() and not line.lstrip().startswith("#") for line in between):
                return None  # something ast does not see (should not happen)
            if (
                any(line.strip() for line in between)
                or _is_string(node)
                or _is_string(spans[-1][3])
            ):
                # A comment, or a bare string (black treats every triple-quoted one as a
                # docstring): black's blank lines around these depend on their
                # neighbours, so they stay in one piece with the statement before.
                prev_start, _, prev_node, _ = spans.pop()
                spans.append((prev_start, end, prev_node, node))
                continue
        spans.append((start, end, node, node))
    if not spans:
        return None
    spans[0] = (first, *spans[0][1:])
    spans[-1] = (spans[-1][0], last, *spans[-1][2:])
    return spans


def _blank_before(lines: list[str], start: int) -> int:
    """Blank lines just before 1-based line ``start``."""
    count = 0
    index = start - 2
    while index >= 0 and not lines[index].strip():
        count += 1
        index -= 1
    return count


def split(source: str, member_threshold: int = 400) -> list[Piece] | None:
    """Pieces of ``source`` (top-level statements; members of classes over
    ``member_threshold`` lines), or None when it should be formatted whole."""
    if "fmt:" in source:
        return None  # `# fmt: off/skip` regions can span pieces
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    lines = source.splitlines(keepends=True)
    spans = _statements(lines, tree.body, 1, len(lines)) if tree.body else None
    if spans is None:
        return None
    at = _offsets(lines)
    pieces: list[Piece] = []
    after = ""
    for index, (start, end, node, last) in enumerate(spans):
        blank = _blank_before(lines, _start(node)) if index else 0
        first = _kind(node, lines)
        if (
            isinstance(node, ast.ClassDef)
            and node is last
            and end - start > member_threshold
            and len(node.body) > 1
        ):
            members = _members(lines, at, node, start, end)
            if members is not None:
                head, head_end = members[0]
                pieces.append(Piece(head, blank, first, after, False, at[start - 1], head_end))
                pieces.extend(members[1])
                after = "def"
                continue
        text = "".join(lines[start - 1 : end])
        pieces.append(Piece(text, blank, first, after, False, at[start - 1], at[end]))
        after = _kind(last, lines)
    return pieces


def _offsets(lines: list[str], base: int = 0) -> list[int]:
    """Where each line starts (and, last, where the text ends)."""
    at = [base]
    for line in lines:
        at.append(at[-1] + len(line))
    return at


def _members(
    lines: list[str], at: list[int], node: ast.ClassDef, start: int, end: int
) -> tuple[tuple[str, int], list[Piece]] | None:
    """The class with its first member (and where it ends), then each other member as a
    wrapped piece."""
    first_member = _start(node.body[0])
    if first_member <= _start(node):
        return None  # `class X: a = 1` on one line
    spans = _statements(lines, node.body, first_member, end)
    if spans is None or len(spans) < 2:
        return None
    head = "".join(lines[start - 1 : spans[0][1]])
    after = _kind(spans[0][3], lines)
    return (head, at[spans[0][1]]), _member_pieces(lines, at, spans[1:], after, 0)[0]


def _member_pieces(
    lines: list[str],
    at: list[int],
    spans: list[tuple[int, int, ast.stmt, ast.stmt]],
    after: str,
    shift: int,
) -> tuple[list[Piece], str]:
    """Wrapped pieces of class members (offsets moved by ``shift``), and the kind of the
    last statement."""
    pieces = []
    for member_start, member_end, member, last in spans:
        text = WRAPPER + "".join(lines[member_start - 1 : member_end])
        blank = _blank_before(lines, _start(member))
        span = at[member_start - 1] + shift, at[member_end] + shift
        pieces.append(Piece(text, blank, _kind(member, lines), after, True, *span))
        after = _kind(last, lines)
    return pieces, after


def resplit(
    source: str, old: str, pieces: list[Piece], member_threshold: int = 400
) -> list[Piece] | None:
    """``split(source)``, made from ``pieces``, the split of an earlier version ``old``: the
    pieces before and after what changed are kept and only the members between them are
    parsed (a rebuild after one operation changed parses one method of the typed client,
    not the whole file). None when what changed is not inside one class's members."""
    if "fmt:" in source or not pieces:
        return None
    prefix = _common_prefix(old, source)
    suffix = _common_suffix(old, source, min(len(old), len(source)) - prefix)
    count = len(pieces)
    a = next((i for i, p in enumerate(pieces) if p.end > prefix), count)
    if a == count:
        return pieces if source == old else None
    b = next((i for i in range(a, count) if pieces[i].start >= len(old) - suffix), count)
    if a == 0 or b == count or not all(p.member for p in pieces[a : b + 1]):
        return None
    delta = len(source) - len(old)
    begin, stop = pieces[a - 1].end, pieces[b].start + delta
    middle = _changed_members(source[begin:stop], begin, pieces[a].after)
    if middle is None:
        return None
    new, after, blank = middle
    kept = [dataclasses.replace(p, start=p.start + delta, end=p.end + delta) for p in pieces[b:]]
    kept[0] = dataclasses.replace(kept[0], after=after, blank_before=blank)
    result = [*pieces[:a], *new, *kept]
    # the class must still be one split into members (over the threshold)
    head = next(i for i in range(a - 1, -1, -1) if not result[i].member)
    last = next((i for i in range(head + 1, len(result)) if not result[i].member), len(result))
    if source.count("\n", result[head].start, result[last - 1].end) - 1 <= member_threshold:
        return None
    return result


def _changed_members(text: str, offset: int, after: str) -> tuple[list[Piece], str, int] | None:
    """The pieces of class members ``text`` (at ``offset`` in the source; ``after``: the
    kind of the statement before), the kind of their last statement and the blank lines
    after them. None when the text is not whole members that split cleanly from their
    neighbours (a comment or a bare string at either end is glued to the neighbour)."""
    lines = (WRAPPER + text).splitlines(keepends=True)
    if not text.strip():
        return [], after, len(lines) - 1
    try:
        tree = ast.parse(WRAPPER + text)
    except SyntaxError:
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.ClassDef):
        return None
    body = tree.body[0].body
    if body[0].col_offset != len(_MEMBER_INDENT):
        return None  # deeper lines go on the statement before: not members of their own
    first, last = _start(body[0]), body[-1].end_lineno or body[-1].lineno
    if any(line.strip() for line in lines[1 : first - 1] + lines[last:]):
        return None  # comments before or after
    if _is_string(body[0]) or _is_string(body[-1]):
        return None
    spans = _statements(lines, body, first, last)
    if spans is None:
        return None
    at = _offsets(lines)
    pieces, after = _member_pieces(lines, at, spans, after, offset - len(WRAPPER))
    return pieces, after, len(lines) - last


def _common_prefix(old: str, new: str) -> int:
    low, high = 0, min(len(old), len(new))
    while low < high:  # old[:low] == new[:low]
        middle = (low + high + 1) // 2
        if new.startswith(old[low:middle], low):
            low = middle
        else:
            high = middle - 1
    return low


def _common_suffix(old: str, new: str, limit: int) -> int:
    low, high = 0, limit
    while low < high:  # the last ``low`` characters are the same
        middle = (low + high + 1) // 2
        if new.startswith(old[len(old) - middle : len(old) - low], len(new) - middle):
            low = middle
        else:
            high = middle - 1
    return low


def unwrap(formatted: str) -> str:
    """A member's formatted text without the stand-in class line."""
    assert formatted.startswith(WRAPPER)
    return formatted[len(WRAPPER) :]


def _blank_lines(piece: Piece) -> int:
    """black's blank lines between a piece and the statement before it."""
    limit = 1 if piece.member else 2
    if piece.first in ("def", "stub"):
        return 0 if piece.after == "stub" and piece.blank_before == 0 else limit
    if piece.after in ("def", "stub"):
        return limit
    if piece.after == "import" and piece.first != "import":
        return max(1, min(piece.blank_before, limit)) if piece.member else 1
    return min(piece.blank_before, limit)


def join(pieces: list[Piece], formatted: list[str]) -> str:
    """Glue formatted pieces with black's blank lines."""
    out: list[str] = []
    for index, (piece, text) in enumerate(zip(pieces, formatted, strict=True)):
        if index:
            out.append("\n" * _blank_lines(piece))
        out.append(unwrap(text) if piece.member else text)
    return "".join(out)
