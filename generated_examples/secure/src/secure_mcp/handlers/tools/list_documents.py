"""Handler for the list_documents tool.

The titles of every stored document.

This file is yours: mcpgen created it once and never overwrites it.
Raise ``ToolError("message")`` to answer with a tool error the model can read.
"""

from __future__ import annotations

from ...models import ListDocumentsInput, ListDocumentsOutput
from .. import DOCUMENTS


async def handle(args: ListDocumentsInput) -> ListDocumentsOutput:
    return ListDocumentsOutput(titles=sorted(DOCUMENTS))
