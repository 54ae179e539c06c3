"""MCP over stdin and stdout, served from the event loop: on pipes or sockets (what hosts
give the servers they spawn) through asyncio pipe transports, not the SDK's ``stdio_server``
and its worker-thread round trip per read, write and flush (``bench/calls.py``); otherwise
(a terminal, a file, Windows, trio) a worker thread reads and the SDK's transport writes.

While serving, fd 0 reads the null device and fd 1 writes to stderr (a stray ``print``
cannot corrupt the wire). Unlike SDK 2.3, a line that is not JSON is answered with -32700
and one that is no JSON-RPC message with -32600, as JSON-RPC 2.0 asks (``jsonrpc.py``).
"""

from __future__ import annotations

import asyncio
import io
import logging
import os
import select
import stat
import sys
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Coroutine, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from typing import TYPE_CHECKING, Any

import anyio
from mcp.shared.message import SessionMessage
from mcp_types import (
    JSONRPCNotification,
    JSONRPCRequest,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

from . import jsonrpc
from .stdio_pending import Pending

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

    from .server import GeneratedServer

logger = logging.getLogger(__name__)
BUSY = "Server busy: too many requests waiting while it waits for the client's answer"

READ_SIZE = 1 << 16  # bytes per read from stdin
# The least a line may hold: the peer is the host that started the server, and a request
# refused here is answered with id null, which it cannot match to the call it waits on
LINE_FLOOR = 64 << 20
Reader = Callable[["MemoryObjectSendStream[SessionMessage | Exception]"], Coroutine[Any, Any, None]]
Writer = Callable[["MemoryObjectReceiveStream[SessionMessage]"], Coroutine[Any, Any, None]]


async def serve(server: GeneratedServer, limit: int) -> None:
    """Serve ``server`` on stdin/stdout until stdin ends; a line over ``limit`` bytes (the
    body limit, ``max_body_size``) or ``LINE_FLOOR``, whichever is larger, is answered -32600
    and dropped, never held whole."""
    limit = max(limit, LINE_FLOOR)
    options = server.create_initialization_options()
    if on_pipes():
        async with Wire.claim(limit) as wire:
            await _run(server, options, wire.read_into, wire.write_from)
        return
    # stdin a file or a terminal, Windows, trio: lines read here as on pipes (by a worker
    # thread), the answers written by the SDK's transport (given no stdin to read)
    from mcp.server.stdio import stdio_server

    pending = Pending()
    with _claimed_stdin() as stdin:
        async with stdio_server(anyio.wrap_file(io.StringIO())) as (unread, sdk_writes):
            await unread.aclose()

            async def reply(text: str) -> None:
                await sdk_writes.send(SessionMessage(jsonrpc_message_adapter.validate_json(text)))

            async def chunks(size: int) -> bytes:
                with suppress(OSError):  # (EIO: the terminal hung up) the end of input
                    return await stdin.read1(size)
                return b""

            async def read(messages: MemoryObjectSendStream[SessionMessage | Exception]) -> None:
                lines = _lines(chunks, limit, reply)
                await _read(
                    lines, messages, reply, pending, hung_up=lambda: _hung_up(stdin.wrapped)
                )

            async def write(writes: MemoryObjectReceiveStream[SessionMessage]) -> None:
                async with writes, sdk_writes:
                    async for message in writes:
                        await sdk_writes.send(message)
                        pending.wrote(message.message)  # handed over: nothing cancels it now

            await _run(server, options, read, write)


async def _run(server: GeneratedServer, options: Any, read: Reader, write: Writer) -> None:
    """``server`` on what ``read`` feeds it, its messages to ``write``."""
    reads, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, writes = anyio.create_memory_object_stream[SessionMessage](0)
    reading = anyio.CancelScope()

    async def read_all() -> None:
        with reading:
            await read(reads)

    async with anyio.create_task_group() as tg:
        tg.start_soon(read_all)
        tg.start_soon(write, writes)
        await server.run(read_stream, write_stream, options)
        # The server closed its write stream: the writer ends once it has written
        # everything; the reader is only waiting for input nobody will answer.
        reading.cancel()


@contextmanager
def _claimed_stdin() -> Iterator[anyio.AsyncFile[bytes]]:
    """stdin's lines, fd 0 claimed as the SDK claims it (reading the null device meanwhile);
    ``sys.stdin`` read in place when it is not fd 0."""
    try:
        private = _divert(0, os.open(os.devnull, os.O_RDONLY)) if sys.stdin.fileno() == 0 else -1
    except (AttributeError, OSError, ValueError):
        private = -1
    try:  # (a worker thread may still be reading it: it stays open, as in the SDK)
        yield anyio.wrap_file(
            os.fdopen(private, "rb", closefd=False) if private >= 0 else sys.stdin.buffer
        )
    finally:
        if private >= 0:
            with suppress(OSError):
                os.dup2(private, 0)


async def _read(
    lines: AsyncIterable[bytes],
    messages: MemoryObjectSendStream[SessionMessage | Exception],
    reply: Callable[[str], Awaitable[None]],
    pending: Pending,
    gone: Callable[[], bool] = lambda: False,
    hung_up: Callable[[], bool] = lambda: False,
) -> None:
    """Each line to the server as a message, or answered here (-32700, -32600: what the SDK
    would drop or take for a notification); a ping behind parked requests, which must not
    wait for slow calls, to the server at once; at the end, a grace for what is in flight."""
    async with messages, anyio.create_task_group() as tg:
        tg.start_soon(pending.dispatch, messages)
        async for raw in lines:
            if not raw.strip():
                continue
            line = raw.decode("utf-8", "replace")  # as the SDK reads it
            try:
                message = jsonrpc_message_adapter.validate_json(line, by_name=False)
            except ValidationError as exc:
                answer = jsonrpc.error_for(line)
                if answer is None:
                    await messages.send(exc)  # a malformed response: the SDK logs it
                else:
                    await reply(answer)
                continue
            if isinstance(message, JSONRPCNotification) and jsonrpc.has_bad_id(line):
                await reply(jsonrpc.error(jsonrpc.INVALID_REQUEST, "Invalid Request"))
            elif isinstance(message, JSONRPCRequest) and pending.full():
                if message.method == "ping":  # the SDK answers it as below the cap, at once
                    await pending.answer(message, messages)
                elif (parked := await pending.park(message, len(raw), hung_up)) is None:
                    break  # stdin closed behind a full park, and the grace ran out
                elif not parked:
                    await reply(jsonrpc.error(jsonrpc.BUSY, BUSY, message.id))
            elif not pending.unpark(message):
                await messages.send(pending.read(message))
        else:
            pending.end()  # the dispatcher ends once the parked requests are sent
            await pending.drained(gone)
        tg.cancel_scope.cancel()  # (the parked requests left, if the grace ran out)


def on_pipes() -> bool:
    """True when stdin and stdout are two different pipes or sockets on a POSIX asyncio loop."""
    if sys.platform == "win32":
        return False
    try:
        asyncio.get_running_loop()  # (RuntimeError: another anyio backend)
        if sys.stdin.fileno() != 0 or sys.stdout.fileno() != 1:
            return False
        modes = [os.fstat(0), os.fstat(1)]
    except (RuntimeError, AttributeError, OSError, ValueError):
        return False
    if not all(stat.S_ISFIFO(s.st_mode) or stat.S_ISSOCK(s.st_mode) for s in modes):
        return False
    # One socket on both (inetd style) cannot be split into a read and a write transport.
    return (modes[0].st_dev, modes[0].st_ino) != (modes[1].st_dev, modes[1].st_ino)


class _Output(asyncio.Protocol):
    """The stdout transport's protocol: ``lost`` once the client has closed it, ``flushed``
    done while nothing waits to be written (the transport pauses it at the first byte)."""

    def __init__(self) -> None:
        self.lost: BaseException | None = None
        self.closed = asyncio.get_running_loop().create_future()
        self.flushed = asyncio.get_running_loop().create_future()
        self.flushed.set_result(None)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.WriteTransport)
        transport.set_write_buffer_limits(high=0)

    def pause_writing(self) -> None:
        self.flushed = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if not self.flushed.done():
            self.flushed.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = exc or BrokenPipeError("stdout closed")
        self.resume_writing()
        if not self.closed.done():
            self.closed.set_result(None)


class Wire:
    """stdin and stdout, taken over from fds 0 and 1 for the life of the connection."""

    def __init__(self, out: asyncio.WriteTransport, output: _Output, limit: int) -> None:
        self.reader = asyncio.StreamReader(limit=2 * READ_SIZE)
        self.out, self.output, self.limit = out, output, limit
        self.pending = Pending()
        self.stdin: asyncio.ReadTransport | None = None

    @classmethod
    @asynccontextmanager
    async def claim(cls, limit: int) -> AsyncIterator[Wire]:
        sys.stdout.flush()
        stdin_fd = _divert(0, os.open(os.devnull, os.O_RDONLY))
        try:
            stdout_fd = _divert(1, os.dup(2))
        except BaseException:
            _restore(0, stdin_fd)
            raise
        loop, transports = asyncio.get_running_loop(), list[asyncio.BaseTransport]()
        try:
            # The transports own duplicates of the wire, so closing them leaves the originals
            # to restore fds 0 and 1 with.
            stdout = os.fdopen(os.dup(stdout_fd), "wb", buffering=0)
            out, output = await loop.connect_write_pipe(_Output, stdout)
            transports.append(out)
            wire = cls(out, output, limit)
            stdin = os.fdopen(os.dup(stdin_fd), "rb", buffering=0)
            wire.stdin, _ = await loop.connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(wire.reader), stdin
            )
            transports.append(wire.stdin)
            yield wire
            if output.lost is None:  # the last answer leaves (or the client goes) first
                out.close()
                with anyio.move_on_after(5):
                    await output.closed
        finally:
            for transport in transports:
                transport.close()
            _restore(1, stdout_fd)
            _restore(0, stdin_fd)

    async def send(self, text: str) -> None:
        """One message, on its way before the next (waiting while the client does not
        read): clients that parse a read chunk at a time (both TypeScript SDKs) then see a
        progress notification before the result that follows it."""
        if self.output.lost is None:
            self.out.write(text.encode() + b"\n")
        if self.out.get_write_buffer_size() and self.output.lost is None:
            await self.output.flushed
        if self.output.lost is not None:
            raise BrokenPipeError("the client closed stdout") from self.output.lost

    async def write_from(self, messages: MemoryObjectReceiveStream[SessionMessage]) -> None:
        async with messages:
            async for message in messages:
                self.pending.wrote(message.message)
                await self.send(message.message.model_dump_json(by_alias=True, exclude_unset=True))

    async def read_into(self, messages: MemoryObjectSendStream[SessionMessage | Exception]) -> None:
        lines = _lines(self.reader.read, self.limit, self.send)
        await _read(lines, messages, self.send, self.pending, self.gone, self.hung_up)

    def gone(self) -> bool:
        return self.output.lost is not None

    def hung_up(self) -> bool:
        """Whether the client closed stdin, even with lines still unread in it."""
        if self.stdin is None or self.stdin.is_closing():  # (closed: the transport read EOF)
            return True
        return _hung_up(self.stdin.get_extra_info("pipe"))


def _hung_up(source: Any) -> bool:
    """Whether the client closed ``source`` (a pipe, socket or terminal), lines perhaps
    unread in it; never a file (no client leaves it), nor on Windows (no ``poll``)."""
    try:
        poll, closed = select.poll(), select.POLLHUP | getattr(select, "POLLRDHUP", 0)
        poll.register(source, select.POLLIN | closed)
    except (AttributeError, OSError, ValueError):
        return False
    return any(events & closed for _, events in poll.poll(0))


async def _lines(
    read: Callable[[int], Awaitable[bytes]], limit: int, reply: Callable[[str], Awaitable[None]]
) -> AsyncIterator[bytes]:
    """The lines of what ``read`` returns; one over ``limit`` bytes is answered as HTTP
    answers a body over it, then skipped to its end (held no further than ``limit``)."""
    pending: list[bytes] = []
    held = 0  # bytes in pending; -1 while skipping a line over the limit
    while chunk := await read(READ_SIZE):
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            if 0 <= held <= limit - (end - start):
                pending.append(chunk[start:end])
                yield b"".join(pending)
            elif held >= 0:
                await reply(jsonrpc.TOO_LARGE)
            pending.clear()
            start, held = end + 1, 0
        if start < len(chunk) and held >= 0:
            pending.append(chunk[start:])
            held += len(chunk) - start
            if held > limit:  # answered now: its end may never come
                await reply(jsonrpc.TOO_LARGE)
                pending.clear()
                held = -1
    if pending:
        yield b"".join(pending)


def _divert(fd: int, replacement: int) -> int:
    """Point ``fd`` at ``replacement`` and return a private duplicate of what it was."""
    try:
        private = os.dup(fd)
        os.dup2(replacement, fd)
    finally:
        os.close(replacement)
    return private


def _restore(fd: int, private: int) -> None:
    try:
        os.set_blocking(private, True)  # the transports made the shared description non-blocking
        os.dup2(private, fd)
    except OSError:
        logger.debug("could not restore fd %d", fd, exc_info=True)
    finally:
        os.close(private)
