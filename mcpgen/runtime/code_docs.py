"""What code mode and search mode answer about operations: Python signatures with the
shapes of parameters and results (``search_docs``), one operation in detail, and the ranked
results with reasons of search mode's ``search_operations``."""

from __future__ import annotations

import builtins
import json
import keyword
import re
from collections.abc import Callable, Sequence
from typing import Any

import mcp_types as types

from .search import Hit, OperationDoc, SearchIndex
from .shapes import FULL, RESULT, SHORT, Budget, Shapes

Json = Any
Allowed = Callable[[str], bool]

DOC_CHARS = 160  # characters of the line of docs per operation
DETAIL_CHARS = 140  # characters of each parameter's description in the detailed view
# Python's own names (``list``, ``import``): the sandbox never looks them up, so an operation
# named one is a function with ``_`` added there (``list_``), as the generated client has it
SHADOWED = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | frozenset(dir(builtins))


def python_name(name: str) -> str:
    return f"{name}_" if name in SHADOWED else name


def operation_name(index: SearchIndex, name: str) -> str:
    """The operation a sandbox function name stands for: ``list`` for ``list_``, else itself."""
    base = name.removesuffix("_")
    return base if base in SHADOWED and index.get(name) is None else name


def signature(doc: OperationDoc, budget: Budget = SHORT, result: Budget = RESULT) -> str:
    """``name(a: str, b: int = None) -> {...}``: the function code mode gives the code."""
    schema = doc.input_schema or {}
    shapes = Shapes(schema, budget)
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    order = sorted(properties, key=lambda n: n not in required)
    params = []
    optional = 0
    for name in order:
        kind = shapes.type(properties[name])
        if name in required:
            params.append(f"{name}: {kind}")
            continue
        optional += 1
        if optional <= budget.optional:
            params.append(f"{name}: {kind} = None")
    if optional > budget.optional:
        params.append(f"...  # +{optional - budget.optional} optional: search_docs({doc.name!r})")
        return f"{python_name(doc.name)}({', '.join(params)}\n) -> {result_type(doc, result)}"
    return f"{python_name(doc.name)}({', '.join(params)}) -> {result_type(doc, result)}"


def result_type(doc: OperationDoc, budget: Budget = RESULT) -> str:
    """The shape of what calling the operation returns in the sandbox."""
    schema = doc.output_schema
    if not schema:
        return "Any"
    shapes = Shapes(schema, budget)
    if doc.wrapped:
        inner = (shapes.resolve(schema).get("properties") or {}).get("result")
        if inner is not None:
            return shapes.type(inner)
    return shapes.type(schema)


_MARKDOWN_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def doc_line(doc: OperationDoc, chars: int = DOC_CHARS) -> str:
    line = doc.line
    if doc.description and doc.description.strip() != line:
        first = doc.description.strip().split("\n\n")[0].replace("\n", " ")
        if first and first != line:
            line = f"{line}. {first}" if line else first
    line = " ".join(_MARKDOWN_LINK.sub(r"\1", line).split())
    return line if len(line) <= chars else line[: chars - 3].rstrip() + "..."


def detail(doc: OperationDoc) -> str:
    """The full view of one operation: every parameter with its description, a deeper result."""
    lines = [signature(doc, FULL, FULL), f"    # {doc_line(doc, 400)}"]
    if doc.method:
        lines.append(f"    # {doc.method} {doc.path}")
    schema = doc.input_schema or {}
    shapes = Shapes(schema, FULL)
    required = set(schema.get("required") or ())
    for name, prop in (schema.get("properties") or {}).items():
        described = str(shapes.resolve(prop).get("description") or "")
        described = " ".join(_MARKDOWN_LINK.sub(r"\1", described).split())
        if len(described) > DETAIL_CHARS:
            described = described[: DETAIL_CHARS - 3].rstrip() + "..."
        mark = "required" if name in required else "optional"
        lines.append(f"    #   {name} ({mark}): {described}".rstrip())
    return "\n".join(lines)


def docs_answer(hits: Sequence[Hit], query: str) -> str:
    """The text ``search_docs`` answers: one signature and one line of docs per operation."""
    if not hits:
        return f"No operation matches {query!r}. Try other words (what you want to do and to what)."
    if len(hits) == 1 and hits[0].name == query.strip():
        return detail(hits[0].doc)
    count = f"{len(hits)} operation" + ("s" if len(hits) > 1 else "")
    lines = [f"# {count} for {query!r}, best first; call them inside execute"]
    for hit in hits:
        lines.append(signature(hit.doc))
        lines.append(f"    # {doc_line(hit.doc)}")
    return "\n".join(lines)


# -- search mode (meta tools) -----------------------------------------------------------


def search_operations(
    index: SearchIndex, query: str, limit: int = 10, allowed: Allowed | None = None
) -> types.CallToolResult:
    """The answer of the ``search_operations`` meta tool: ranked, with why each matched."""
    hits = index.search(query, max(1, min(int(limit), 50)), allowed)
    found = [
        {
            "name": hit.name,
            "title": hit.doc.title or None,
            "summary": doc_line(hit.doc),
            "matched": hit.matched,
        }
        for hit in hits
    ]
    data: dict[str, Json] = {"operations": found}
    return types.CallToolResult(
        content=[text(json.dumps(data, ensure_ascii=False, separators=(",", ":")))],
        structured_content=data,
    )


def text(value: str) -> types.TextContent:
    return types.TextContent(type="text", text=value)
