"""The stdio transport's requests in flight (``stdio.py``): how many the server is handed
at once, those read past that held in order, and what is still unanswered at end of input."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio
from mcp.shared.dispatcher import as_request_id, coerce_request_id
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from mcp_types import (
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
)

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectSendStream

CANCELLED = "notifications/cancelled"
# seconds, once stdin ended, the requests read get to end, each in turn (a client that writes
# its requests and closes stdin, `printf ... | server`, still reads every answer), short: a
# host closes stdin to stop the server, and the handlers that do not end are then cancelled
EOF_GRACE = 2.0
# requests read and not yet answered before more are handed to the server: a client that
# writes and does not read holds the server's memory, not an ever growing heap of answers
IN_FLIGHT = 1024
# requests read past IN_FLIGHT, held in order until one in flight ends; reading goes on
# meanwhile (a cancellation, or the answer to a sampling or elicitation request, must reach
# the requests in flight) and stops only while this many are held, unless the server waits
# for the client's answer: then reading goes on, and requests past these are refused
PARKED = 1024
PARKED_BYTES = 16 << 20  # nor more than this of their lines (but always one, of any size)


class Pending:
    """Requests read and not yet answered: at end of input the SDK cancels what is still in
    flight, so the read stream is held open until these are answered (``EOF_GRACE``).
    Requests past ``IN_FLIGHT`` are ``parked`` (in order) until one in flight ends.

    A request is counted from when the server is handed it until the SDK writes its one
    answer or settles it unanswered (``on_request_unanswered``: cancelled)."""

    def __init__(self) -> None:
        self.running = 0
        self.parked: deque[tuple[JSONRPCRequest, int]] = deque()  # and its line's size
        self.held = 0  # bytes of the lines parked
        self.asking: set[RequestId | None] = set()  # the server's requests the client has to answer
        self.ended = False  # no more lines: the parked requests are the last ones
        self.changed = anyio.Event()

    def _change(self) -> None:  # wakes every waiter (each waits on the event it saw)
        self.changed.set()
        self.changed = anyio.Event()

    def read(self, message: JSONRPCMessage) -> SessionMessage:
        """``message`` for the server, a request counted until it settles."""
        if isinstance(message, JSONRPCResponse | JSONRPCError):
            self.asking.discard(_key(message.id))
        if not isinstance(message, JSONRPCRequest):
            return SessionMessage(message)
        self.running += 1
        return SessionMessage(message, ServerMessageMetadata(on_request_unanswered=self._settled))

    async def _settled(self) -> None:
        self.running -= 1
        self._change()

    def wrote(self, message: object) -> None:
        if isinstance(message, JSONRPCResponse | JSONRPCError):
            if message.id is not None and self.running:  # (id null: no request of ours)
                self.running -= 1
                self._change()
        elif isinstance(message, JSONRPCRequest):
            self.asking.add(_key(message.id))
            self._change()
        elif isinstance(message, JSONRPCNotification) and message.method == CANCELLED:
            self.asking.discard(_key((message.params or {}).get("requestId")))

    def full(self) -> bool:
        """Whether a request read now waits (behind the cap, or behind parked ones)."""
        return bool(self.parked) or self.running >= IN_FLIGHT

    async def park(
        self, message: JSONRPCRequest, size: int, hung_up: Callable[[], bool]
    ) -> bool | None:
        """False when ``message`` is refused: the park is full while the server waits for
        the client's answer (reading must go on to find it; stopping would deadlock). None
        when the client closed stdin meanwhile and ``EOF_GRACE`` passed without a change
        (the end of input behind the unread lines: nothing ends to make room for them)."""
        quiet = 0.0  # seconds the full park waited, stdin closed, and nothing changed
        while self.parked and (len(self.parked) >= PARKED or self.held + size > PARKED_BYTES):
            if self.asking:
                return False
            if quiet >= EOF_GRACE:
                return None
            with anyio.move_on_after(EOF_GRACE / 8) as waiting:
                await self.changed.wait()  # reading stops: memory stays bounded
            quiet = quiet + EOF_GRACE / 8 if waiting.cancelled_caught and hung_up() else 0.0
        self.parked.append((message, size))
        self.held += size
        self._change()
        return True

    async def answer(
        self, request: JSONRPCRequest, messages: MemoryObjectSendStream[SessionMessage | Exception]
    ) -> None:
        """``request`` to the server past the cap, reading waiting until a request is answered."""
        sent = self.read(request)
        running = self.running
        await messages.send(sent)
        while self.running >= running:
            await self.changed.wait()

    def unpark(self, message: object) -> bool:
        """True when ``message`` cancels a parked request: it is dropped, never run."""
        if not (isinstance(message, JSONRPCNotification) and message.method == CANCELLED):
            return False
        key = _key((message.params or {}).get("requestId"))
        for entry in self.parked if key is not None else ():
            if _key(entry[0].id) == key:
                self.parked.remove(entry)
                self.held -= entry[1]
                self._change()
                return True
        return False

    async def dispatch(self, messages: MemoryObjectSendStream[SessionMessage | Exception]) -> None:
        """The parked requests to the server, each once fewer than ``IN_FLIGHT`` are."""
        while self.parked or not self.ended:
            if not self.parked or self.running >= IN_FLIGHT:
                await self.changed.wait()
                continue
            request, size = self.parked.popleft()
            self.held -= size
            sent = self.read(request)
            self._change()
            # (queued before the reader can send another: the stream keeps the order)
            await messages.send(sent)

    async def drained(self, gone: Callable[[], bool]) -> None:
        """At end of input: the parked requests to the server, and every request answered,
        while they keep ending; ``EOF_GRACE`` without one ends the wait (the SDK then
        cancels what is in flight; what is still parked never runs)."""
        self.ended = True  # the dispatcher ends once the parked requests are sent
        self._change()
        while (left := len(self.parked) + self.running) and not gone():
            with anyio.move_on_after(EOF_GRACE) as waiting:
                while len(self.parked) + self.running >= left and not gone():
                    await self.changed.wait()
            if waiting.cancelled_caught:
                return


def _key(request_id: object) -> RequestId | None:
    """What the SDK takes ``request_id`` for (``"7"`` and ``7`` are one id; not ``true``)."""
    checked = as_request_id(request_id)
    return None if checked is None else coerce_request_id(checked)
