"""Meta-tool mode for very large APIs: three tools instead of one per operation.

``search_operations`` finds operations by words, ``describe_operation`` returns one
operation's full tool definition (input and output schemas), ``call_operation`` validates
the arguments against that definition and makes the call. tools/list stays a few KB
whatever the size of the API.
"""

from __future__ import annotations

from typing import Any

Json = Any

META_TOOLS: list[dict[str, Json]] = [
    {
        "name": "search_operations",
        "title": "Search API operations",
        "description": (
            "Find operations of this API by keywords (matched against names, summaries, "
            "descriptions and paths). Returns names to pass to describe_operation and "
            "call_operation."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Words to look for"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    },
    {
        "name": "describe_operation",
        "title": "Describe an API operation",
        "description": "The full definition of one operation: what it does and its input schema.",
        "inputSchema": {
            "type": "object",
            "properties": {"name": {"type": "string", "description": "Operation name"}},
            "required": ["name"],
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    },
    {
        "name": "call_operation",
        "title": "Call an API operation",
        "description": (
            "Call one operation by name with arguments matching its input schema "
            "(see describe_operation)."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "Operation name"},
                "arguments": {"type": "object", "description": "The operation's arguments"},
            },
            "required": ["name"],
            "additionalProperties": False,
        },
        "annotations": {"openWorldHint": True},
    },
]
