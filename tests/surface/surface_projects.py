"""Real generated projects for the tests of ``build --rename``, ``mcpgen check`` and the CI
workflow: a small manifest with a tool of each shape, a resource and a prompt."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from click.testing import CliRunner

from mcpgen.cli import main

ROOT = Path(__file__).resolve().parents[2]
SHOP_SPEC = ROOT / "manifests" / "openapi" / "shop.yaml"
PACKAGE = "shelf_mcp"
HANDLERS = f"src/{PACKAGE}/handlers"

SHELF = """\
mcpgen: 1
server: {name: shelf}
tools:
  - name: add_book
    description: Add a book to the shelf.
    input:
      type: object
      properties:
        title: {type: string}
        pages: {type: integer}
      required: [title]
    output:
      type: object
      properties:
        id: {type: string}
        title: {type: string}
      required: [id, title]
  - name: count_books
    description: How many books there are.
    output:
      type: object
      properties: {count: {type: integer}}
      required: [count]
resources:
  - uriTemplate: "shelf://book/{id}"
    name: book
    description: One book as text.
    mimeType: text/plain
prompts:
  - name: review
    description: Review a book.
    handler: true
    arguments:
      - {name: book, required: true}
"""

# handler bodies that type-check against SHELF's models
ADD_BOOK = "return AddBookOutput(id='1', title=args.title.strip())"
COUNT_BOOKS = "return CountBooksOutput(count=0)"
BOOK = "return f'book {id}'"
REVIEW = "return f'Review {args.book}'"


def cli(*args: str | Path) -> tuple[int, str]:
    """``mcpgen ARGS``: exit status and everything it printed (stdout and stderr)."""
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert "Traceback" not in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


def build(manifest: Path, out: Path, *extra: str) -> str:
    code, output = cli("build", manifest, "-o", out, *extra)
    assert code == 0, output
    return output


def implement(path: Path, body: str) -> None:
    """Replace the stub's ``raise NotImplementedError`` by ``body``."""
    text = path.read_text("utf-8")
    assert "    raise NotImplementedError\n" in text, text
    path.write_text(text.replace("    raise NotImplementedError\n", f"    {body}\n"), "utf-8")


def shelf(tmp: Path, text: str = SHELF, written: bool = True) -> tuple[Path, Path]:
    """(manifest, project): SHELF built into ``tmp/project``, the manifest beside it, every
    handler written (unless ``written`` is false)."""
    manifest = tmp / "mcpgen.yaml"
    manifest.write_text(text, "utf-8")
    project = tmp / "project"
    build(manifest, project)
    if written:
        implement(project / HANDLERS / "tools/add_book.py", ADD_BOOK)
        implement(project / HANDLERS / "tools/count_books.py", COUNT_BOOKS)
        implement(project / HANDLERS / "resources/book.py", BOOK)
        implement(project / HANDLERS / "prompts/review.py", REVIEW)
    return manifest, project


def edit(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text("utf-8")
    assert text.count(old) >= count, (old, text)
    path.write_text(text.replace(old, new), "utf-8")


def lines_with(output: str, pattern: str) -> list[str]:
    return [line.strip() for line in output.splitlines() if re.search(pattern, line)]


@contextmanager
def mypy_cache(tmp: Path) -> Iterator[None]:
    """Point mypy at a cache shared by the tests of one session (a first run costs 10 s)."""
    old = os.environ.get("MYPY_CACHE_DIR")
    os.environ["MYPY_CACHE_DIR"] = str(tmp)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("MYPY_CACHE_DIR", None)
        else:
            os.environ["MYPY_CACHE_DIR"] = old
