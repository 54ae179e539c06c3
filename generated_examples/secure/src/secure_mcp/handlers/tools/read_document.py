"""Handler for the read_document tool.

The text of one document, by title.

This file is yours: mcpgen created it once and never overwrites it.
Raise ``ToolError("message")`` to answer with a tool error the model can read.
"""

from __future__ import annotations

from ... import ToolError
from ...models import ReadDocumentInput, ReadDocumentOutput
from .. import DOCUMENTS


async def handle(args: ReadDocumentInput) -> ReadDocumentOutput:
    if args.title not in DOCUMENTS:
        raise ToolError(f"no document titled {args.title!r}")
    return ReadDocumentOutput(title=args.title, text=DOCUMENTS[args.title])
