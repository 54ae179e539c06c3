"""MCP over stdin and stdout, served from the event loop: on pipes or sockets (what hosts
give the servers they spawn) through asyncio pipe transports, not the SDK's ``stdio_server``
and its worker-thread round trip per read, write and flush (``bench/calls.py``); otherwise
(a terminal, a file, Windows, trio) worker threads read and write, as the SDK's would.

While serving, fd 0 reads the null device and fd 1 writes to stderr (a stray ``print``
cannot corrupt the wire). Unlike SDK 2.3, a line that is not JSON is answered with -32700
and one that is no JSON-RPC message with -32600, as JSON-RPC 2.0 asks (``jsonrpc.py``).
"""

from __future__ import annotations

import asyncio
import os
import select
import stat
import sys
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from functools import partial
from typing import TYPE_CHECKING, Any, BinaryIO, Literal

import anyio
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCMessage, JSONRPCNotification, JSONRPCRequest, jsonrpc_message_adapter
from pydantic import ValidationError

from . import jsonrpc
from .stdio_pending import IN_FLIGHT, Pending

try:  # SDK 2.3's claim of fds 0 and 1: no public API hands over the wire's own fds
    from mcp.server.stdio import _claim_fd, _open_stdin_diversion, _open_stdout_diversion
except ImportError as exc:  # (``stdio_server`` claims them for its own thread-read streams)
    raise ImportError(
        "the stdio transport needs mcp.server.stdio._claim_fd, private to the MCP SDK 2.3 "
        "that this package pins (mcp>=2.3,<2.4); the installed mcp lacks it: reinstall "
        "the package's dependencies"
    ) from exc

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectSendStream

    from .server import GeneratedServer

BUSY = "Server busy: too many requests waiting while it waits for the client's answer"

READ_SIZE = 1 << 16  # bytes per read from stdin
# The least a line may hold: the peer is the host that started the server, and a request
# refused here is answered with id null, which it cannot match to the call it waits on
LINE_FLOOR = 64 << 20


async def serve(server: GeneratedServer, limit: int) -> None:
    """Serve ``server`` on stdin/stdout until stdin ends; a line over ``limit`` bytes (the
    body limit, ``max_body_size``) or ``LINE_FLOOR``, whichever is larger, is answered -32600
    and dropped, never held whole."""
    limit = max(limit, LINE_FLOOR)
    if on_pipes():
        async with Wire.claim() as wire:
            await _run(server, limit, wire.reader.read, wire.send, wire.hung_up, wire.gone)
        return
    # stdin a file or a terminal, Windows, trio: lines read here as on pipes, and each
    # answer written and flushed, by a worker thread
    with _claimed(0, "rb") as claimed, _claimed(1, "wb") as out:
        stdin, stdout = anyio.wrap_file(claimed), anyio.wrap_file(out)

        async def chunks(size: int) -> bytes:
            with suppress(OSError):  # (EIO: the terminal hung up) the end of input
                return await stdin.read1(size)
            return b""

        async def write(message: SessionMessage) -> None:
            await stdout.write(line_of(message.message))
            await stdout.flush()

        await _run(server, limit, chunks, write, partial(_hung_up, claimed), lambda: False)


async def _run(
    server: GeneratedServer,
    limit: int,
    chunks: Callable[[int], Awaitable[bytes]],
    write: Callable[[SessionMessage], Awaitable[None]],
    hung_up: Callable[[], bool],
    gone: Callable[[], bool],
) -> None:
    """``server`` on the lines of what ``chunks`` reads; its messages, and the answers the
    reader gives itself, to ``write``."""
    reads, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    # Room for an answer to each request in flight: at the end the SDK answers those it
    # cancels, giving each 1 s to be taken, and drops the rest, one warning each
    write_stream, writes = anyio.create_memory_object_stream[SessionMessage](IN_FLIGHT + 1)
    pending, reading = Pending(), anyio.CancelScope()

    async def reply(text: str) -> None:
        await write(SessionMessage(jsonrpc_message_adapter.validate_json(text)))

    async def read_all() -> None:
        with reading:
            await _read(_lines(chunks, limit, reply), reads, reply, pending, gone, hung_up)

    async def write_all() -> None:
        async with writes:
            async for message in writes:
                pending.wrote(message.message)
                await write(message)

    async with anyio.create_task_group() as tg:
        tg.start_soon(read_all)
        tg.start_soon(write_all)
        await server.run(read_stream, write_stream, server.create_initialization_options())
        # The server closed its write stream: the writer ends once it has written
        # everything; the reader is only waiting for input nobody will answer.
        reading.cancel()


@contextmanager
def _claimed(fd: Literal[0, 1], mode: Literal["rb", "wb"]) -> Iterator[BinaryIO]:
    """The wire of stdin (``fd`` 0, reading the null device meanwhile) or stdout (1, writing
    to stderr), claimed by the SDK's own ``_claim_fd`` (SDK 2.3's; the sys stream's buffer in
    place when it is not that fd); on exit the wire is back in ``fd``, blocking again (the
    asyncio transports made it non-blocking), and the claim's duplicate of it closed: no
    worker thread reads it any more (a read in one is waited for, never abandoned)."""
    stream = sys.stdin if fd == 0 else sys.stdout
    divert = _open_stdin_diversion if fd == 0 else _open_stdout_diversion
    wire, release = _claim_fd(fd, stream, mode, divert)
    try:
        yield wire
    finally:
        with suppress(OSError, ValueError):
            os.set_blocking(wire.fileno(), True)
        if release is not None:
            release()
            with suppress(OSError, ValueError):
                duplicate = wire.fileno()
                if duplicate != fd and os.path.sameopenfile(duplicate, fd):  # fd restored
                    wire.close()  # (flushed; its fd is not the file's to close)
                    os.close(duplicate)


async def _read(
    lines: AsyncIterable[bytes],
    messages: MemoryObjectSendStream[SessionMessage | Exception],
    reply: Callable[[str], Awaitable[None]],
    pending: Pending,
    gone: Callable[[], bool],
    hung_up: Callable[[], bool],
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
                # (None: a malformed response, which the SDK logs)
                answer = jsonrpc.error_for(line)
                await (messages.send(exc) if answer is None else reply(answer))
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
            await pending.drained(gone)
        tg.cancel_scope.cancel()  # (the parked requests left, if the grace ran out)


def line_of(message: JSONRPCMessage) -> bytes:
    """``message`` as a line of JSON; one no JSON can carry as ``jsonrpc.unencodable`` says."""
    try:
        return message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
    except ValueError:  # (pydantic_core's PydanticSerializationError)
        text = jsonrpc.unencodable(message)
        return text.encode() + b"\n" if text else b""


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
    streams = all(stat.S_ISFIFO(s.st_mode) or stat.S_ISSOCK(s.st_mode) for s in modes)
    # One socket on both (inetd style) cannot be split into a read and a write transport.
    return streams and not os.path.samestat(*modes)


class Wire:
    """stdin and stdout, taken over from fds 0 and 1 for the life of the connection."""

    out: asyncio.StreamWriter
    stdin: asyncio.ReadTransport

    def __init__(self) -> None:
        self.reader = asyncio.StreamReader(limit=2 * READ_SIZE)

    @classmethod
    @asynccontextmanager
    async def claim(cls) -> AsyncIterator[Wire]:
        sys.stdout.flush()
        loop, wire = asyncio.get_running_loop(), cls()
        transports = list[asyncio.BaseTransport]()
        with _claimed(0, "rb") as stdin_wire, _claimed(1, "wb") as stdout_wire:
            try:
                # The transports own duplicates of the wire, so closing them leaves the
                # claims to restore fds 0 and 1 with.
                stdout = os.fdopen(os.dup(stdout_wire.fileno()), "wb", buffering=0)
                out, output = await loop.connect_write_pipe(
                    lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), stdout
                )
                transports.append(out)
                out.set_write_buffer_limits(high=0)  # drain() waits until it is all written
                wire.out = asyncio.StreamWriter(out, output, None, loop)
                stdin = os.fdopen(os.dup(stdin_wire.fileno()), "rb", buffering=0)
                wire.stdin, _ = await loop.connect_read_pipe(
                    lambda: asyncio.StreamReaderProtocol(wire.reader), stdin
                )
                transports.append(wire.stdin)
                yield wire
                if not wire.gone():  # the last answer leaves (or the client goes) first
                    wire.out.close()
                    with anyio.move_on_after(5), suppress(OSError):
                        await wire.out.wait_closed()
            finally:
                for transport in transports:
                    transport.close()

    async def send(self, message: SessionMessage) -> None:
        """One message, on its way before the next (waiting while the client does not
        read): clients that parse a read chunk at a time (both TypeScript SDKs) then see a
        progress notification before the result that follows it. ConnectionResetError
        once the client has closed stdout."""
        if not self.gone():
            self.out.write(line_of(message.message))
        await self.out.drain()

    def gone(self) -> bool:
        return self.out.is_closing()  # (before the end: the client closed stdout)

    def hung_up(self) -> bool:
        """Whether the client closed stdin, even with lines still unread in it (closing: the
        transport read EOF)."""
        return self.stdin.is_closing() or _hung_up(self.stdin.get_extra_info("pipe"))


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
