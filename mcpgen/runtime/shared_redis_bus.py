"""The event bus between replicas: a ``SubscriptionBus`` over one Redis pub/sub channel.

Messages on the channel are compact JSON: ``{"o": origin, "i": message id, "k": kind,
"u": uri}`` with kind ``tools``, ``prompts``, ``resources``, ``resource`` or
``caller-resource`` (``u`` only for these two; the second, one caller's update, adds
``"c": caller``: a new kind, which a replica of a release before it drops as unknown during a
rolling upgrade instead of telling every subscriber). The origin is one bus instance (one
replica); the message id is unique per origin, so a receiver can drop a message it already
delivered. With a secret each message is sealed under it, bound to the channel: a message
published by whoever reaches Redis without the secret (another server on the same Redis) is
dropped, not delivered.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import time
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)

from .events import CallerUpdate
from .sealing import SharedStateConfigError

if TYPE_CHECKING:
    from .local_cache import ValueCodec
    from .shared_redis_link import RedisLink

__all__ = ["RedisBus", "decode_event", "encode_event"]

logger = logging.getLogger(__name__)

LIVENESS = "mcpgen-shared-liveness"

_EVENT_KINDS: dict[type, str] = {
    ToolsListChanged: "tools",
    PromptsListChanged: "prompts",
    ResourcesListChanged: "resources",
    ResourceUpdated: "resource",
}


def encode_event(event: ServerEvent, origin: str, message_id: str) -> str:
    caller = getattr(event, "caller", None)  # a CallerUpdate: that caller's subscriptions only
    kind = "caller-resource" if isinstance(caller, str) else _EVENT_KINDS[type(event)]
    message = {"o": origin, "i": message_id, "k": kind}
    if isinstance(event, ResourceUpdated):
        message["u"] = event.uri
    if isinstance(caller, str):
        message["c"] = caller
    return json.dumps(message, separators=(",", ":"))


def decode_event(data: str | bytes) -> tuple[str, str, ServerEvent] | None:
    """(origin, message id, event) of a message on the channel, or None if it is not one."""
    try:
        message = json.loads(data)
        origin, message_id, kind = message["o"], message["i"], message["k"]
    except (ValueError, TypeError, KeyError):
        return None
    if not (isinstance(origin, str) and isinstance(message_id, str)):
        return None
    uri, caller = message.get("u"), message.get("c")
    event: ServerEvent
    if kind == "tools":
        event = ToolsListChanged()
    elif kind == "prompts":
        event = PromptsListChanged()
    elif kind == "resources":
        event = ResourcesListChanged()
    elif kind == "resource" and isinstance(uri, str):
        event = ResourceUpdated(uri=uri)
    elif kind == "caller-resource" and isinstance(uri, str) and isinstance(caller, str):
        event = CallerUpdate(uri, caller)
    else:
        return None
    return origin, message_id, event


class RedisBus:
    """A ``SubscriptionBus`` over one Redis pub/sub channel.

    ``publish`` hands the event to this replica's listeners at once (so they get it exactly
    once, Redis up or not) and queues it for the channel; a sender task publishes it tagged
    with this bus's origin and a message id. A listener task delivers what other replicas
    published, skipping its own origin and any message id already seen (a retried PUBLISH
    cannot deliver twice). While Redis is down, queued events wait (identical events are
    coalesced, at most ``max_pending`` kept) and are published once Redis is back and the
    other replicas had ``settle`` seconds to subscribe again. Pub/sub has no replay: what
    another replica published while this one alone was cut off is not delivered here; the
    ``on_gap`` callbacks run when its subscription is back, so the runtime can end its listen
    streams (``ListenHandler.close``: clients re-listen and refetch, as the spec has it).
    """

    def __init__(
        self,
        link: RedisLink,
        channel: str,
        values: ValueCodec,
        *,
        max_pending: int = 1024,
        seen_window: int = 4096,
        settle: float | None = None,
        liveness: float = 3.0,
    ) -> None:
        self._link = link
        self._liveness = liveness
        self.channel = channel
        self._values = values
        self.origin = uuid.uuid4().hex
        self._local = InMemorySubscriptionBus()
        self._ids = itertools.count(1)
        self._outbox: OrderedDict[ServerEvent, str] = OrderedDict()
        self._max_pending = max(1, max_pending)
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._seen_window = max(1, seen_window)
        self._settle = 2 * link.retry_interval if settle is None else settle
        self._wake = asyncio.Event()
        self._subscribed = asyncio.Event()
        self._recovered_at: float | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._gap_callbacks: dict[object, Callable[[], None]] = {}
        self._remote: dict[object, Callable[[ServerEvent], Awaitable[None]]] = {}
        self._forwarding: set[asyncio.Task[None]] = set()
        self.received = 0  # events delivered here from other replicas
        self.sent = 0  # events published to the channel
        self.dropped = 0  # queued events given up (queue full during an outage)

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        """Register a local listener (``ListenHandler``'s or any other); returns unsubscribe."""
        return self._local.subscribe(listener)

    def on_gap(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` each time the subscription is back after this replica lost it:
        events other replicas published meanwhile may be missing here. Returns unsubscribe."""
        token = object()
        self._gap_callbacks[token] = callback

        def unsubscribe() -> None:
            self._gap_callbacks.pop(token, None)

        return unsubscribe

    def on_remote_event(
        self, listener: Callable[[ServerEvent], Awaitable[None]]
    ) -> Callable[[], None]:
        """Await ``listener(event)`` in a task of its own for each event received from
        another replica (never for this replica's own). Returns unsubscribe."""
        token = object()
        self._remote[token] = listener

        def unsubscribe() -> None:
            self._remote.pop(token, None)

        return unsubscribe

    async def publish(self, event: ServerEvent) -> None:
        await self._local.publish(event)
        if event in self._outbox:
            return  # the same level trigger is already on its way
        if len(self._outbox) >= self._max_pending:
            self._outbox.popitem(last=False)
            self.dropped += 1
            if self.dropped == 1 or self.dropped % 1000 == 0:
                logger.warning("shared state: %d queued events dropped", self.dropped)
        self._outbox[event] = f"{self.origin}:{next(self._ids)}"
        self._wake.set()

    @property
    def subscribed(self) -> bool:
        return self._subscribed.is_set()

    @property
    def pending(self) -> int:
        return len(self._outbox)

    async def start(self, timeout: float = 5.0) -> None:
        if self._tasks:
            return
        self._tasks = [
            asyncio.create_task(self._listen(), name="shared-bus-listen"),
            asyncio.create_task(self._send(), name="shared-bus-send"),
        ]
        try:
            await asyncio.wait_for(self._subscribed.wait(), timeout)
        except TimeoutError:
            await self.aclose()
            raise SharedStateConfigError(
                f"could not subscribe to {self.channel} on Redis at {self._link.url}"
            ) from None

    async def aclose(self, flush: float = 1.0) -> None:
        deadline = time.monotonic() + flush
        while self._outbox and self.subscribed and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        tasks, self._tasks = self._tasks, []
        tasks += list(self._forwarding)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _listen(self) -> None:
        had_outage = False
        while True:
            pubsub = self._link.subscriber.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(self.channel)
                while not self._link.up:  # a full Redis takes SUBSCRIBE: wait for the probe
                    await asyncio.sleep(0.05)
                if had_outage:
                    self._recovered_at = time.monotonic()
                    for callback in list(self._gap_callbacks.values()):
                        try:
                            callback()
                        except Exception:  # one bad callback must not stop the others
                            logger.exception("shared state: a gap callback raised")
                self._subscribed.set()
                await self._read(pubsub)
            except asyncio.CancelledError:
                raise
            except self._link.outage_errors as exc:
                self._link.failed(exc)
            except Exception:  # keep listening whatever one message did
                logger.exception("shared state: event listener failed; subscribing again")
            finally:
                self._subscribed.clear()
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
            had_outage = True
            await asyncio.sleep(self._link.retry_interval)

    async def _read(self, pubsub: Any) -> None:
        """Deliver messages until the connection fails. A silent server (stalled, or a
        network that drops packets without a reset) is caught by a PING after ``liveness``
        quiet seconds that gets no answer within three timeouts."""
        heard = time.monotonic()
        pinged: float | None = None
        while True:
            message = await pubsub.get_message(timeout=min(1.0, self._liveness))
            now = time.monotonic()
            if message is not None:
                heard, pinged = now, None
                if message.get("type") == "message":
                    await self._receive(message["data"])
            elif pinged is not None and now - pinged > 3 * self._link.timeout:
                raise TimeoutError(f"no answer to PING on {self.channel} for {now - pinged:.1f} s")
            elif pinged is None and now - heard >= self._liveness:
                await pubsub.ping(LIVENESS)
                pinged = now

    async def _receive(self, data: str | bytes) -> None:
        try:
            text = self._values.unseal(
                data.decode() if isinstance(data, bytes) else data, self.channel
            )
        except Exception:  # not sealed under this secret for this channel
            text = ""
        decoded = decode_event(text)
        if decoded is None:
            logger.debug("shared state: ignored a message on %s that is not an event", self.channel)
            return
        origin, message_id, event = decoded
        if origin == self.origin or message_id in self._seen:
            return
        self._seen[message_id] = None
        while len(self._seen) > self._seen_window:
            self._seen.popitem(last=False)
        self.received += 1
        await self._local.publish(event)
        for listener in list(self._remote.values()):
            # A slow receiver (a client's stream) must not hold up the subscription.
            task = asyncio.create_task(self._forward(listener, event), name="shared-bus-forward")
            self._forwarding.add(task)
            task.add_done_callback(self._forwarding.discard)

    @staticmethod
    async def _forward(
        listener: Callable[[ServerEvent], Awaitable[None]], event: ServerEvent
    ) -> None:
        try:
            await listener(event)
        except Exception:  # one bad receiver must not stop the others
            logger.exception("shared state: a remote-event listener raised")

    async def _send(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._outbox:
                await self._subscribed.wait()
                if self._recovered_at is not None:
                    rest = self._recovered_at + self._settle - time.monotonic()
                    if rest > 0:
                        await asyncio.sleep(rest)
                    self._recovered_at = None
                    continue
                event, message_id = next(iter(self._outbox.items()))
                try:
                    message = encode_event(event, self.origin, message_id)
                    await self._link.client.publish(
                        self.channel, self._values.seal(message, self.channel)
                    )
                except self._link.outage_errors as exc:
                    self._link.failed(exc)
                    await asyncio.sleep(self._link.retry_interval)
                    continue
                self.sent += 1
                if self._outbox.get(event) == message_id:
                    del self._outbox[event]
