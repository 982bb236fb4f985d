"""Malformed LSP traffic (issue 15, item 10): every request gets a response, a wrong Content-Length costs one
message and not the stream, and the TCP server outlives a bad connection. Raw JSON-RPC over pipes and sockets,
since pytest-lsp's client only sends well-formed messages."""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import time

import pytest

from conftest import ROOT

SERVER = [sys.executable, "-m", "firstfault", "lsp"]


def frame(obj: dict, length_delta: int = 0) -> bytes:
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % (len(body) + length_delta) + body


def request(msg_id: int, method: str, params: object) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}


HOVER = {"textDocument": {"uri": "file:///nothing.log"}, "position": {"line": 0, "character": 0}}


class Responses:
    """Reads framed messages from a file descriptor until the one wanted arrives (a guard timeout, not a check)."""

    def __init__(self, fd: int):
        self.fd, self.buffer = fd, b""

    def until(self, wanted, timeout: float = 60) -> dict:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            while b"\r\n\r\n" in self.buffer:
                head, rest = self.buffer.split(b"\r\n\r\n", 1)
                length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
                if len(rest) < length:
                    break
                message, self.buffer = json.loads(rest[:length]), rest[length:]
                if wanted(message):
                    return message
            if select.select([self.fd], [], [], 0.2)[0]:
                chunk = os.read(self.fd, 65536)
                if not chunk:
                    break
                self.buffer += chunk
        raise AssertionError("no such message from the server")


@pytest.fixture
def server():
    process = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               cwd=ROOT)
    process.stdin.write(frame(request(1, "initialize", {"capabilities": {}})))
    process.stdin.flush()
    responses = Responses(process.stdout.fileno())
    responses.until(lambda m: m.get("id") == 1)
    yield process, responses
    process.kill()
    process.wait()


def send(process, data: bytes) -> None:
    process.stdin.write(data)
    process.stdin.flush()


def test_a_request_with_params_that_do_not_fit_gets_an_error_response(server):
    process, responses = server
    send(process, frame(request(2, "textDocument/hover", {"textDocument": {"uri": "file:///x.log"}, "position": "x"})))
    assert responses.until(lambda m: m.get("id") == 2)["error"]["code"] == -32602
    send(process, frame(request(3, "textDocument/hover", HOVER)))
    assert responses.until(lambda m: m.get("id") == 3) == {"id": 3, "jsonrpc": "2.0", "result": None}


def test_a_short_content_length_costs_one_message_not_the_stream(server):
    process, responses = server
    send(process, frame(request(4, "textDocument/hover", HOVER), length_delta=-10))
    assert responses.until(lambda m: "error" in m)["error"]["code"] == -32700
    send(process, frame(request(5, "textDocument/hover", HOVER)))
    assert responses.until(lambda m: m.get("id") == 5)["result"] is None


def test_a_body_that_is_not_json_gets_a_parse_error_and_the_next_request_an_answer(server):
    process, responses = server
    send(process, b"Content-Length: 9\r\n\r\nnot json!")
    assert responses.until(lambda m: "error" in m)["error"]["code"] == -32700
    send(process, frame(request(6, "textDocument/hover", HOVER)))
    assert responses.until(lambda m: m.get("id") == 6)["result"] is None


def test_a_big_body_is_filled_as_its_chunks_arrive_and_the_next_message_kept():
    import asyncio

    from firstfault.lsp.transport import PipeReader

    async def scenario():
        reader = PipeReader()
        reader.BIG_BODY = 4
        reader.data_received(b"Content-Length: 10\r\n\r\nab")
        got = [await reader.readline(), await reader.readline()]
        body = asyncio.ensure_future(reader.readexactly(10))
        for chunk in [b"cde", b"", b"fghijContent-Length: 12\r\n\r\nxy"]:
            await asyncio.sleep(0)
            reader.data_received(chunk)
        got += [await body, await reader.readline(), await reader.readline()]
        reader.eof_received()
        with pytest.raises(asyncio.IncompleteReadError) as cut:
            await reader.readexactly(12)
        return got, cut.value.partial

    got, partial = asyncio.run(scenario())
    assert got == [b"Content-Length: 10\r\n", b"\r\n", b"abcdefghij", b"Content-Length: 12\r\n", b"\r\n"]
    assert partial == b"xy"


def test_stdin_that_is_a_socket_is_read_by_the_event_loop(monkeypatch):
    """VS Code (Node) gives a server its stdin and stdout as two Unix sockets, not pipes. The event loop reads such
    a stdin too; one socket that is both stdin and stdout is left to pygls' reader (the loop makes stdin
    non-blocking, and with it a shared stdout)."""
    import asyncio

    from firstfault.lsp import transport

    pairs = [socket.socketpair(), socket.socketpair()]
    try:
        def reader_for(stdin: socket.socket, stdout: socket.socket):
            monkeypatch.setattr(sys, "stdin", open(stdin.fileno(), closefd=False))
            monkeypatch.setattr(sys, "stdout", open(stdout.fileno(), "w", closefd=False))
            return asyncio.run(transport._pipe_reader())

        assert isinstance(reader_for(pairs[0][0], pairs[1][0]), transport.PipeReader)
        assert reader_for(pairs[1][1], pairs[1][1]) is None
    finally:
        for pair in pairs:
            for end in pair:
                end.close()


def test_a_server_whose_stdio_are_sockets_answers_and_publishes():
    """The way VS Code starts it: stdin and stdout are each one end of a socket pair."""
    ours_in, theirs_in = socket.socketpair()
    ours_out, theirs_out = socket.socketpair()
    process = subprocess.Popen(SERVER, stdin=theirs_in, stdout=theirs_out, stderr=subprocess.DEVNULL, cwd=ROOT)
    theirs_in.close()
    theirs_out.close()
    try:
        responses = Responses(ours_out.fileno())
        ours_in.sendall(frame(request(1, "initialize", {"capabilities": {}})))
        assert "capabilities" in responses.until(lambda m: m.get("id") == 1)["result"]
        text = (ROOT / "examples" / "oom-cascade" / "train.log").read_text()
        ours_in.sendall(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}) + frame(
            {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": "file:///sockets/train.log", "languageId": "log", "version": 1, "text": text}}}))
        published = responses.until(lambda m: m.get("method") == "textDocument/publishDiagnostics")
        assert published["params"]["uri"] == "file:///sockets/train.log" and published["params"]["diagnostics"]
    finally:
        process.kill()
        process.wait()
        ours_in.close()
        ours_out.close()


def test_tcp_rejects_a_bad_address_with_one_line():
    run = subprocess.run([*SERVER, "--tcp", "abc"], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert run.returncode == 2 and run.stderr.count("\n") == 1 and "Traceback" not in run.stderr


def test_tcp_serves_the_next_client_after_a_garbage_connection():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([*SERVER, "--tcp", f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, cwd=ROOT)
    try:
        assert b"listening on" in process.stderr.readline()
        with socket.create_connection(("127.0.0.1", port), timeout=30) as garbage:
            garbage.sendall(b"\x00\xffGET / HTTP/1.1\r\n\r\nContent-Length: 3\r\n\r\n{{{")
        with socket.create_connection(("127.0.0.1", port), timeout=30) as client:
            client.sendall(frame(request(1, "initialize", {"capabilities": {}})))
            assert "capabilities" in Responses(client.fileno()).until(lambda m: m.get("id") == 1)["result"]
        assert process.poll() is None
    finally:
        process.kill()
        process.wait()


def test_a_request_written_a_byte_at_a_time_is_read_whole(server):
    process, responses = server
    for byte in frame(request(7, "textDocument/hover", HOVER)):
        send(process, bytes([byte]))
    assert responses.until(lambda m: m.get("id") == 7)["id"] == 7


def test_the_pipe_reader_joins_lines_and_bodies_across_chunks_and_ends_cleanly():
    """The stdin reader the event loop feeds: headers and bodies split anywhere, several messages in one chunk, a
    body cut by the end of the stream."""
    import asyncio

    from firstfault.lsp.transport import PipeReader

    async def scenario():
        reader = PipeReader()
        for chunk in [b"Content-Len", b"gth: 5\r", b"\n\r\nhel", b"lo", b"Content-Length: 3\r\n\r\nab"]:
            reader.data_received(chunk)
        got = [await reader.readline(), await reader.readline(), await reader.readexactly(5),
               await reader.readline(), await reader.readline()]
        reader.eof_received()
        with pytest.raises(asyncio.IncompleteReadError) as cut:
            await reader.readexactly(3)
        return got, cut.value.partial, await reader.readline()

    got, partial, after = asyncio.run(scenario())
    assert got == [b"Content-Length: 5\r\n", b"\r\n", b"hello", b"Content-Length: 3\r\n", b"\r\n"]
    assert partial == b"ab" and after == b""
