"""Handler for the whoami tool.

The caller's identity as this server sees it (subject and granted scopes).

This file is yours: mcpgen created it once and never overwrites it.
Raise ``ToolError("message")`` to answer with a tool error the model can read.
"""

from __future__ import annotations

from ... import Context
from ...models import WhoamiInput, WhoamiOutput


async def handle(args: WhoamiInput, ctx: Context) -> WhoamiOutput:
    identity = ctx.identity  # the local user on stdio and in memory: no scopes to report
    if identity.scopes is None:
        return WhoamiOutput(authenticated=False, subject="", scopes=[])
    return WhoamiOutput(
        authenticated=True, subject=identity.subject, scopes=sorted(identity.scopes)
    )
