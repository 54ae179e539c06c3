"""Handler for the whoami tool.

The caller's identity as this server sees it (subject and granted scopes).

This file is yours: mcpgen created it once and never overwrites it.
Raise ``ToolError("message")`` to answer with a tool error the model can read.
"""

from __future__ import annotations

from ..._http import auth_info
from ..._runtime import Context
from ...models import WhoamiInput, WhoamiOutput


async def handle(args: WhoamiInput, ctx: Context) -> WhoamiOutput:
    info = auth_info(ctx.request.request)  # None on stdio and in memory
    if info is None:
        return WhoamiOutput(authenticated=False, subject="", scopes=[])
    return WhoamiOutput(authenticated=True, subject=info["subject"], scopes=info["scopes"] or [])
