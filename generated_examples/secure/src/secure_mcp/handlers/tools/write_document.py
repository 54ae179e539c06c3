"""Handler for the write_document tool.

Create or replace a document.

This file is yours: mcpgen created it once and never overwrites it.
Raise ``ToolError("message")`` to answer with a tool error the model can read.
"""

from __future__ import annotations

from ...models import WriteDocumentInput, WriteDocumentOutput
from .. import DOCUMENTS


async def handle(args: WriteDocumentInput) -> WriteDocumentOutput:
    DOCUMENTS[args.title] = args.text
    return WriteDocumentOutput(title=args.title, size=len(args.text))
