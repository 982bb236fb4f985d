"""The JSON-RPC message loop, more forgiving than pygls' own: a request whose params do not fit its method gets
an error response (pygls' loop only logs it, and the client waits for ever), a body that is not JSON gets a parse
error, and a wrong Content-Length costs one message, not the stream (the next header is found even when stray
bytes precede it on its line). Over TCP the server keeps listening after a connection ends."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import stat
import sys
import threading
from collections import deque
from itertools import islice
from typing import Any, Awaitable, Callable, Protocol

from lsprotocol.types import ResponseError, ResponseErrorMessage
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcParseError
from pygls.io_ import StdinAsyncReader, StdoutWriter

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

logger = logging.getLogger(__name__)

# "Content-Length: N" ending a header line, wherever the line starts (left-overs of a short body come first).
_CONTENT_LENGTH = re.compile(rb"Content-Length: *(\d{1,10})\r?\n$")
MAX_BODY = 512 * 2**20  # a larger body is a broken header, not a message (VS Code sends logs of up to 50 MB)


class Reader(Protocol):
    def readline(self) -> Awaitable[bytes]: ...

    def readexactly(self, n: int) -> Awaitable[bytes]: ...


async def serve(stop: threading.Event, reader: Reader, protocol: Any) -> None:
    """Read messages until the stream ends or `stop` is set; every request gets a response."""
    length = 0
    while not stop.is_set():
        try:
            header = await reader.readline()
        except ValueError:  # a "line" longer than an asyncio reader's limit (TCP): junk, dropped with its bytes
            continue
        if not header:
            return
        if found := _CONTENT_LENGTH.search(header):
            length = int(found.group(1))
            continue
        if header.strip():
            continue  # another header (Content-Type) or bytes left over from a body of the wrong length
        if not length:
            continue
        if length > MAX_BODY:
            logger.error("a Content-Length of %d bytes was skipped", length)
            length = 0
            continue
        try:
            body = await reader.readexactly(length)
        except asyncio.IncompleteReadError:
            return
        length = 0
        if not body:
            return
        dispatch(protocol, body)


def dispatch(protocol: Any, body: bytes) -> None:
    try:
        raw = json.loads(body)
    except (ValueError, RecursionError) as exc:
        _reply_error(protocol, None, JsonRpcParseError(f"the message is not JSON ({str(exc)[:120]})"))
        return
    is_request = isinstance(raw, dict) and "id" in raw and "method" in raw
    try:
        message = protocol.structure_message(raw) if isinstance(raw, dict) else raw
        protocol.handle_message(message)
    except JsonRpcException as exc:
        if is_request:
            _reply_error(protocol, raw["id"], exc)
        logger.error("message %s: %s", raw.get("method") if isinstance(raw, dict) else "?", exc)
    except Exception as exc:  # noqa: BLE001 - one message never ends the loop
        logger.exception("message could not be handled")
        if is_request:
            _reply_error(protocol, raw["id"], JsonRpcInternalError(str(exc)[:200]))


def _reply_error(protocol: Any, msg_id: Any, exc: JsonRpcException) -> None:
    if not isinstance(msg_id, (int, str)) and msg_id is not None:
        msg_id = None
    error = ResponseError(code=exc.code, message=exc.message or type(exc).__name__, data=exc.data)
    protocol._send_data(ResponseErrorMessage(id=msg_id, error=error))


def start_io(server: Any) -> None:
    """pygls' start_io with the loop above."""
    stop = threading.Event()
    server._stop_event = stop
    server.protocol.set_writer(StdoutWriter(sys.stdout.buffer))

    async def main() -> None:
        reader = await _pipe_reader() or StdinAsyncReader(sys.stdin.buffer, server.thread_pool)
        await serve(stop, reader, server.protocol)

    try:
        asyncio.run(main())
    except BrokenPipeError:
        logger.error("the client closed the connection")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()


async def _pipe_reader() -> PipeReader | None:
    """stdin read by the event loop itself, where it is a pipe or a socket of its own (VS Code starts a server with
    its stdin and stdout on two Unix sockets; other clients use pipes). pygls' reader hands every header line and every
    body to a thread and back; behind a burst of edits those hops delayed a hover by several milliseconds. Not for a
    terminal or a socket that is stdout too: the loop makes stdin non-blocking, and with it the shared stdout."""
    try:
        stdin, stdout = os.fstat(sys.stdin.fileno()), os.fstat(sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        return None
    if not (stat.S_ISFIFO(stdin.st_mode) or stat.S_ISSOCK(stdin.st_mode)) or os.path.samestat(stdin, stdout):
        return None
    if fcntl is not None and hasattr(fcntl, "F_SETPIPE_SZ"):
        # Linux pipes: a read then returns up to 256 KiB (asyncio's read size) rather than the 64 KiB a pipe holds.
        with contextlib.suppress(OSError):
            fcntl.fcntl(sys.stdin.fileno(), fcntl.F_SETPIPE_SZ, 1 << 20)
    reader = PipeReader()
    try:
        await asyncio.get_running_loop().connect_read_pipe(lambda: reader, sys.stdin.buffer)
    except (NotImplementedError, ValueError, OSError):
        return None
    return reader


class PipeReader(asyncio.Protocol):
    """readline/readexactly over the chunks a pipe delivers, each chunk kept as it came: a 50 MB body is joined
    once (asyncio.StreamReader grows one buffer and copies the body out of it). Reading pauses while more than
    PAUSE_BYTES wait unread, so a client that writes faster than the server reads is held back by the pipe."""

    PAUSE_BYTES = 64 * 2**20
    BIG_BODY = 2**20

    def __init__(self) -> None:
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self._eof = False
        self._waiter: asyncio.Future | None = None
        self._transport: asyncio.ReadTransport | None = None
        self._paused = False
        self._wanted = 0  # bytes a waiting readexactly needs: a 50 MB body is not woken for each of its chunks

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self._chunks.append(data)
        self._size += len(data)
        if self._size > self.PAUSE_BYTES and not self._paused and self._transport is not None:
            self._paused = True
            self._transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self._eof = True
        self._wake()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._eof = True
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done() and (self._eof or self._size >= self._wanted):
            self._waiter.set_result(None)

    async def _more(self, wanted: int = 0) -> None:
        self._wanted = wanted
        if self._paused and self._transport is not None:  # asked for more than is here: let the pipe deliver it
            self._paused = False
            self._transport.resume_reading()
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None

    async def readline(self) -> bytes:
        """Up to and with the next \\n; what is left at the end of the stream; b"" at its end."""
        scanned = 0
        while True:
            for index, chunk in enumerate(islice(self._chunks, scanned, None), scanned):
                if (found := chunk.find(b"\n")) >= 0:
                    length = sum(len(c) for c in islice(self._chunks, index)) + found + 1
                    return self._take(length)
                scanned = index + 1
            if self._eof:
                return self._take(self._size)
            await self._more()

    async def readexactly(self, n: int) -> bytes | bytearray:
        if n >= self.BIG_BODY and self._size < n:
            return await self._fill(n)
        while self._size < n:
            if self._eof:
                partial = self._take(self._size)
                raise asyncio.IncompleteReadError(partial, n)
            await self._more(n)
        return self._take(n)

    async def _fill(self, n: int) -> bytearray:
        """A big body, copied into one buffer as its chunks arrive: joining 50 MB of chunks once the last one came
        cost 40 ms (the page faults of a new 50 MB buffer), all of it after the client had sent the last byte."""
        body, filled = bytearray(n), 0
        while True:
            while self._chunks and filled < n:
                chunk = self._chunks.popleft()
                take = min(len(chunk), n - filled)
                if take < len(chunk):
                    self._chunks.appendleft(chunk[take:])
                body[filled:filled + take] = memoryview(chunk)[:take]
                self._size -= take
                filled += take
            if filled == n:
                return body
            if self._eof:
                raise asyncio.IncompleteReadError(bytes(body[:filled]), n)
            await self._more(1)

    def _take(self, n: int) -> bytes:
        parts = []
        while n > 0:
            chunk = self._chunks.popleft()
            if len(chunk) > n:
                chunk, rest = chunk[:n], chunk[n:]
                self._chunks.appendleft(rest)
            parts.append(chunk)
            n -= len(chunk)
            self._size -= len(chunk)
        return parts[0] if len(parts) == 1 else b"".join(parts)


def start_tcp(server: Any, host: str, port: int, on_listening: Callable[[str], None] = lambda _: None) -> None:
    """One client at a time; when it goes, the next one can connect (pygls' start_tcp stops after the first)."""
    stop = threading.Event()
    server._stop_event = stop

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        server.protocol.set_writer(writer)
        try:
            await serve(stop, reader, server.protocol)
        finally:
            writer.close()
        if stop.is_set():
            listener.close()

    async def main() -> None:
        nonlocal listener
        listener = await asyncio.start_server(connection, host, port)
        on_listening(", ".join(str(s.getsockname()) for s in listener.sockets))
        async with listener:
            try:
                await listener.serve_forever()
            except asyncio.CancelledError:
                pass

    listener: asyncio.base_events.Server
    try:
        asyncio.run(main())
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()
