"""The JSON-RPC message loop, more forgiving than pygls' own: a request whose params do not fit its method gets
an error response (pygls' loop only logs it, and the client waits for ever), a body that is not JSON gets a parse
error, and a wrong Content-Length costs one message, not the stream (the next header is found even when stray
bytes precede it on its line). Over TCP the server keeps listening after a connection ends."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sys
import threading
from typing import Any, Awaitable, Callable, Protocol

from lsprotocol.types import ResponseError, ResponseErrorMessage
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcParseError
from pygls.io_ import StdinAsyncReader, StdoutWriter

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
        header = await reader.readline()
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
    try:
        asyncio.run(serve(stop, StdinAsyncReader(sys.stdin.buffer, server.thread_pool), server.protocol))
    except BrokenPipeError:
        logger.error("the client closed the connection")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()


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
