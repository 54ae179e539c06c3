"""A rolling upgrade: replicas of the previous release (5d06ba16) and of this one share the
Redis bus. One caller's resource update (``CallerUpdate``) travels under a kind of its own,
which the previous release drops as unknown: read as a plain ``ResourceUpdated`` it would tell
every subscriber of the URI when and what that caller changed. Every other event reads the
same both ways."""

from __future__ import annotations

import json

from mcp.server.subscriptions import (
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)

from mcpgen.runtime.events import CallerUpdate
from mcpgen.runtime.identity import Identity
from mcpgen.runtime.shared_redis_bus import decode_event, encode_event


# The previous release's decoder, verbatim from `git show 5d06ba16:mcpgen/runtime/
# shared_redis_bus.py` (what a replica not yet upgraded runs), renamed.
def release_decode_event(data: str | bytes) -> tuple[str, str, ServerEvent] | None:
    """(origin, message id, event) of a message on the channel, or None if it is not one."""
    try:
        message = json.loads(data)
        origin, message_id, kind = message["o"], message["i"], message["k"]
    except (ValueError, TypeError, KeyError):
        return None
    if not (isinstance(origin, str) and isinstance(message_id, str)):
        return None
    event: ServerEvent
    if kind == "tools":
        event = ToolsListChanged()
    elif kind == "prompts":
        event = PromptsListChanged()
    elif kind == "resources":
        event = ResourcesListChanged()
    elif kind == "resource" and isinstance(message.get("u"), str):
        event = ResourceUpdated(uri=message["u"])
    else:
        return None
    return origin, message_id, event


def release_encode_event(event: ServerEvent, origin: str, message_id: str) -> str:
    """The previous release's encoder, verbatim but for its table inlined."""
    kinds = {
        ToolsListChanged: "tools",
        PromptsListChanged: "prompts",
        ResourcesListChanged: "resources",
        ResourceUpdated: "resource",
    }
    message = {"o": origin, "i": message_id, "k": kinds[type(event)]}
    if isinstance(event, ResourceUpdated):
        message["u"] = event.uri
    return json.dumps(message, separators=(",", ":"))


SHARED: list[ServerEvent] = [
    ToolsListChanged(),
    PromptsListChanged(),
    ResourcesListChanged(),
    ResourceUpdated(uri="notes://all"),
]


def test_a_callers_update_is_dropped_by_a_replica_of_the_previous_release() -> None:
    update = CallerUpdate("notes://all", Identity(subject="alice").key)
    message = encode_event(update, "new", "1")
    assert release_decode_event(message) is None
    decoded = decode_event(message)
    assert decoded == ("new", "1", update) and isinstance(decoded[2], CallerUpdate)


def test_other_events_read_the_same_both_ways() -> None:
    for n, event in enumerate(SHARED):
        assert release_decode_event(encode_event(event, "new", str(n))) == ("new", str(n), event)
        assert decode_event(release_encode_event(event, "old", str(n))) == ("old", str(n), event)
