"""Turn any input (file, .gz, stdin, text) into clean text chunks in bounded memory.

Bad bytes are replaced, ANSI/OSC escapes stripped, and \\r\\n or a lone \\r (progress bars) end a line,
as in VS Code, so line numbers agree with the editor's.
"""

from __future__ import annotations

import bisect
import codecs
import errno
import gzip
import io
import itertools
import os
import re
import stat
import sys
import zlib
from pathlib import Path
from typing import BinaryIO, Callable, Iterator, Sequence

import attrs

CHUNK_BYTES = 4 * 1024 * 1024
# An edited buffer is scanned again from the last chunk before its first change: smaller chunks make an append to a
# live log cost less (1 MiB appended to 50 MiB: 62 -> 25 ms of scanning).
TEXT_CHUNK_BYTES = 1024 * 1024
# CSI sequences, OSC sequences ended by BEL or ST (VS Code's 633 shell integration), and 2-byte escapes.
_ESCAPE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")
# What is left of colour codes whose ESC a log pipeline rewrote or dropped: rsyslog's octal "#033[31m", `cat -v`'s
# "^[[31m", and the bare "[31m ... [0m" of a paste that lost the ESC character (glued to the text they colour, they hide
# it from the patterns: "[31mERROR[0m" has no word boundary before ERROR). Bare codes are removed only from a line that
# holds a reset, so that a "[3m" elsewhere stays text. A chunk is looked at for them only where its first
# RESIDUE_SAMPLE characters hold one (a log's lines are coloured alike): three substring searches over every chunk
# cost a third of a plain log's scan.
RESIDUE_SAMPLE = 64 * 1024
_RESIDUE = re.compile(r"(?:#033|\^\[)\[[0-?]*[ -/]*[@-~]|\[[0-9;]{0,15}m(?!\])")
_RESIDUE_MARKS = ("#033[", "^[[", "[0m")
_ASCII_LOWER = str.maketrans({chr(c): chr(c + 32) for c in range(ord("A"), ord("Z") + 1)})


class InputError(Exception):
    """An input that cannot be read at all: the message says which and why."""


@attrs.frozen
class Chunk:
    """Consecutive whole lines (a forced cut only inside a line longer than CHUNK_BYTES)."""

    text: str
    first_line: int
    original: str  # before escape stripping; `text` itself when there were none
    offset: int = 0  # bytes of the input before this chunk
    clean: bool = True  # the bytes before it end a line: a scan can start again here and read what it read
    # Where each line of `original` starts, indexed on first use: one pass per chunk, not one per event.
    _original_starts: list = attrs.field(factory=list, eq=False, repr=False)
    _breaks: list = attrs.field(factory=list, eq=False, repr=False)  # the count of line breaks, once known

    def line_breaks(self, known: Sequence[int] = (0, 0)) -> int:
        """The line breaks in `text`, counted once whoever asks first (the scan counts them on its way to its hits);
        `known`: the breaks already counted and the offset they were counted up to."""
        if not self._breaks:
            self._breaks.append(known[0] + self.text.count("\n", known[1]))
        return self._breaks[0]

    def original_line(self, index: int) -> str:
        """The index-th line of this chunk (0-based) as it was before escapes were removed."""
        if self.original is self.text:
            return _nth_line(self.text, index)
        starts = self._original_starts
        if not starts:
            starts.append(0)
            starts.extend(m.end() for m in _NEWLINE.finditer(self.original))
        if index >= len(starts):
            return ""
        stop = self.original.find("\n", starts[index])
        return self.original[starts[index]:stop if stop >= 0 else len(self.original)]


_NEWLINE = re.compile("\n")


def _nth_line(text: str, index: int) -> str:
    start = 0
    for _ in range(index):
        start = text.find("\n", start) + 1
        if start == 0:
            return ""
    stop = text.find("\n", start)
    return text[start:stop if stop >= 0 else len(text)]


def without_escapes(text: str) -> str:
    """Text without escapes, and without the residues of colour codes where the first RESIDUE_SAMPLE characters show
    some; `text` itself where nothing was removed."""
    if "\x1b" in text:
        text = _ESCAPE.sub("", text)
    if not _has_residue(text[:RESIDUE_SAMPLE]):
        return text
    return "\n".join(_RESIDUE.sub("", line) if _has_residue(line) else line for line in text.split("\n"))


def _has_residue(text: str) -> bool:
    return any(mark in text for mark in _RESIDUE_MARKS)


def strip_escapes(line: str) -> tuple[str, list[int]]:
    """Remove escapes and their residues; also return, for each kept character, its column in the original line."""
    text, columns = _strip(_ESCAPE, line, list(range(len(line) + 1))) if "\x1b" in line else (line, None)
    if _has_residue(text):
        text, columns = _strip(_RESIDUE, text, columns if columns is not None else list(range(len(text) + 1)))
    return text, columns if columns is not None else list(range(len(line) + 1))


def _strip(escape: re.Pattern[str], line: str, columns: list[int]) -> tuple[str, list[int]]:
    kept: list[str] = []
    kept_columns: list[int] = []
    pos = 0
    for m in escape.finditer(line):
        kept.append(line[pos:m.start()])
        kept_columns.extend(columns[pos:m.start()])
        pos = m.end()
    kept.append(line[pos:])
    kept_columns.extend(columns[pos:])
    return "".join(kept), kept_columns


def original_column(original: str, column: int, line: str) -> int:
    """The column in `original` (a line with escapes) of the character at `column` of `line`, the same line as the
    chunk holds it (whether its residues were removed is the chunk's choice); the cost is the number of escapes, not
    the length of the line (a 4 MiB coloured line built a 4 M-entry map)."""
    escapes_removed = _ESCAPE.sub("", original) if "\x1b" in original else original
    if len(escapes_removed) != len(line):
        column = _column_before(_RESIDUE, escapes_removed, column)
    return _column_before(_ESCAPE, original, column) if escapes_removed is not original else column


def _column_before(escape: re.Pattern[str], text: str, column: int) -> int:
    removed = 0
    for m in escape.finditer(text):
        if m.start() - removed > column:
            break
        removed += m.end() - m.start()
    return column + removed


def ascii_lower(text: str) -> str:
    """Lower-case text keeping every position, so offsets in the result index the input."""
    if text.isascii():
        return text.lower()
    # U+0130 is the one character whose lower case is two characters; mapped first, lengths stay equal.
    lowered = text.replace("\u0130", "i").lower()
    return lowered if len(lowered) == len(text) else text.translate(_ASCII_LOWER)


def open_input(spec: str | Path) -> tuple[BinaryIO, str]:
    """Open a path, a .gz path or '-' (stdin) for binary reading; returns the stream and a display name."""
    if str(spec) == "-":
        if sys.stdin is None:
            raise InputError("standard input is closed; give a file, or pipe the log in")
        return sys.stdin.buffer, "<stdin>"
    path = Path(spec)
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError(f"{path}: a loop of symbolic links") from None
        if path.is_symlink():
            raise InputError(f"{path}: a symbolic link to nothing ({os.readlink(path)})") from None
        raise InputError(f"{path}: {'no such file' if exc.errno == errno.ENOENT else exc.strerror or exc}") from None
    if stat.S_ISDIR(mode):
        raise InputError(f"{path}: is a directory; give the log files in it (for example {path}/*.log)")
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISSOCK(mode):
        # /dev/zero would be read forever; a pipe (<(zcat x.gz), a FIFO) is read like stdin.
        raise InputError(f"{path}: a device or socket, not a log file")
    try:
        raw = path.open("rb")
    except OSError as exc:
        raise InputError(f"{path}: cannot open ({exc.strerror or exc})") from None
    if _is_gzip(raw):
        return _BombGuard(gzip.GzipFile(fileobj=raw), path), str(path)  # type: ignore[return-value]
    return raw, str(path)


# Logs compress 10-100x; past this ratio (and this size) a .gz is a decompression bomb, not a log.
MAX_GZIP_RATIO = 1000
MIN_GZIP_LIMIT = 2**30


class _BombGuard(io.RawIOBase):
    """A .gz stream that stops with an input error once it has expanded past MAX_GZIP_RATIO x its size."""

    def __init__(self, stream: gzip.GzipFile, path: Path):
        self.stream, self.path = stream, path
        self.limit = max(MIN_GZIP_LIMIT, MAX_GZIP_RATIO * max(path.stat().st_size, 1))
        self.done = 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        data = self.stream.read(size)
        self.done += len(data)
        if self.done > self.limit:
            raise InputError(f"{self.path}: expands past {self.limit // 2**20:,} MiB ({MAX_GZIP_RATIO}x its size); "
                             "a decompression bomb, not a log")
        return data

    def peek(self, size: int = 0) -> bytes:
        return self.stream.peek(size)

    def close(self) -> None:
        self.stream.close()
        super().close()


def _is_gzip(raw: BinaryIO) -> bool:
    try:
        magic = raw.peek(2)[:2] if hasattr(raw, "peek") else b""
    except OSError:
        return False
    return magic == b"\x1f\x8b"


def is_gzip(spec: str | Path) -> bool:
    try:
        with open(spec, "rb") as f:
            return _is_gzip(f)
    except OSError:
        return False


def is_stream(spec: str | Path) -> bool:
    """stdin, or a path that is a pipe (a FIFO, <(zcat x.gz)): readable once, from the start only."""
    if str(spec) == "-":
        return True
    try:
        return stat.S_ISFIFO(os.stat(spec).st_mode)
    except OSError:
        return False


def read_whole(path: str | Path, limit: int, what: str) -> bytes:
    """A small structured file (an error file, a dump, a report) read whole, refusing one past `limit` bytes; `what`
    names what it would have been read as, for the message."""
    try:
        with open(path, "rb") as f:
            raw = f.read(limit + 1)
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if len(raw) > limit:
        raise InputError(f"{path}: larger than {limit // 2**20} MiB; not read as {what}")
    return raw


def file_size(spec: str | Path) -> int:
    try:
        return os.stat(spec).st_size if str(spec) != "-" else 0
    except OSError:
        return 0


def iter_chunks(stream: BinaryIO, chunk_bytes: int | None = None, offset: int = 0,
                first_line: int = 1) -> Iterator[Chunk]:
    """Yield clean chunks of whole lines; memory stays a small multiple of chunk_bytes. A stream that starts at
    `offset` bytes into the input, on line `first_line`, yields the chunks a whole read yields from there on, when
    a chunk started there (Chunk.clean)."""
    chunk_bytes = chunk_bytes or CHUNK_BYTES
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    carry = b""
    line = first_line
    first = offset == 0
    consumed, clean = offset, True
    # Reads fall on the whole input's grid of chunk_bytes: a chunk that began at `offset` ran to the last line end
    # before the grid line after the one it crossed (chunks start where the previous one cut, before its grid line).
    size = chunk_bytes + (chunk_bytes - offset % chunk_bytes if offset % chunk_bytes else 0)
    while True:
        try:
            block = stream.read(size)
            size = chunk_bytes
        except (OSError, EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise InputError(f"read failed ({exc})") from None
        final = not block
        data = carry + block
        carry = b""
        if not final:
            data, carry = _split_at_line_end(data)
        # Line ends are mended in the bytes (a \r is never part of a UTF-8 sequence): decoded text can take four
        # bytes a character, and mending it made two more copies of it (4 MiB of random bytes: 32 MB).
        original = decoder.decode(data.replace(b"\r\n", b"\n").replace(b"\r", b"\n") if b"\r" in data else data,
                                  final=final)
        if first:
            original = original.removeprefix("\ufeff")
            first = False
        cleaned = without_escapes(original)
        if cleaned:
            chunk = Chunk(cleaned, line, original, consumed, clean)
            yield chunk
            line += chunk.line_breaks()
        consumed += len(data)
        if data:
            clean = data.endswith(b"\n")
        if final:
            return


def _split_at_line_end(data: bytes) -> tuple[bytes, bytes]:
    """Cut after the last \n; else before the last \r (keeping a \r\n together); else anywhere."""
    cut = data.rfind(b"\n") + 1
    if cut == 0:
        cut = data.rfind(b"\r")
    if cut <= 0:
        cut = len(data)
    return data[:cut], data[cut:]


def grid_split(path: str | Path, size: int, parts: int) -> list[int]:
    """Byte offsets where a whole read of a plain file starts a clean chunk, one near each 1/parts of it: a scan
    can be split there and each piece read alone yields the chunks the whole read yields."""
    with open(path, "rb") as f:
        return _grid_cuts(lambda offset, count: os.pread(f.fileno(), count, offset), size, parts, CHUNK_BYTES)


def text_grid_split(data: TextBytes, parts: int) -> list[int]:
    """grid_split for the UTF-8 form of in-memory text, read in TEXT_CHUNK_BYTES chunks (iter_text_chunks)."""
    return _grid_cuts(data.read, data.size, parts, TEXT_CHUNK_BYTES)


def _grid_cuts(read: Callable[[int, int], bytes], size: int, parts: int, chunk_bytes: int) -> list[int]:
    """A chunk ends after the last newline before a grid line, so the offset is found in the chunk_bytes before
    that line; a grid line with no newline in the bytes before it (one very long line) is not a place to split."""
    offsets = []
    for part in range(1, parts):
        grid = round(size * part / parts / chunk_bytes) * chunk_bytes
        if grid <= (offsets[-1] if offsets else 0) or grid >= size:
            continue
        cut = read(grid - chunk_bytes, chunk_bytes).rfind(b"\n")
        if cut >= 0:
            offsets.append(grid - chunk_bytes + cut + 1)
    return offsets


class _Span:
    """Bytes start..end of an input, read as a stream through `read(offset, count)`: pread on a file (no shared
    file position), a slice of an in-memory buffer (nothing copied before it is read)."""

    def __init__(self, read: Callable[[int, int], bytes], start: int, end: int):
        self._read, self.pos, self.end = read, start, end

    def read(self, size: int = -1) -> bytes:
        want = self.end - self.pos if size < 0 else min(size, self.end - self.pos)
        data = self._read(self.pos, want) if want > 0 else b""
        self.pos += len(data)
        return data


def range_chunks(path: str | Path, start: int, end: int, first_line: int = 1) -> Iterator[Chunk]:
    """The chunks a whole read of a plain (not compressed) file yields between two offsets from grid_split (or
    0 and its size); line numbers counted from first_line."""
    fd = os.open(path, os.O_RDONLY)
    try:
        yield from iter_chunks(_Span(lambda offset, count: os.pread(fd, count, offset), start, end), None, start,
                               first_line)
    finally:
        os.close(fd)


def iter_text_chunks(text: str | Sequence[str], offset: int = 0, first_line: int = 1) -> Iterator[Chunk]:
    """Chunks for in-memory text (an editor buffer, a selection, terminal output), from `offset` bytes of its
    UTF-8 form on. `text` may come in parts (a buffer and what was appended to it): only those read are copied."""
    data = TextBytes((text,) if isinstance(text, str) else tuple(text))
    yield from iter_chunks(_Span(data.read, offset, data.size), TEXT_CHUNK_BYTES, offset, first_line)


def text_bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


class TextBytes:
    """The UTF-8 form of in-memory text given in parts, read a range at a time. ASCII text (nearly every log) is
    encoded only where it is read, a chunk at a time: encoding a 50 MB buffer whole cost 40 ms, most of it the
    page faults of the copy. Other text is encoded once, whole."""

    def __init__(self, parts: Sequence[str]):
        self._parts = parts
        self._view: memoryview | None = None
        if all(part.isascii() for part in parts):
            self._starts = list(itertools.accumulate(map(len, parts), initial=0))
            self.size = self._starts[-1]
        else:
            self._view = memoryview(text_bytes("".join(parts)))
            self.size = len(self._view)

    def read(self, offset: int, count: int) -> bytes:
        if self._view is not None:
            return self._view[offset:offset + count].tobytes()
        end, pieces = min(offset + count, self.size), []
        index = bisect.bisect_right(self._starts, offset) - 1
        while offset < end:
            start = self._starts[index]
            piece = self._parts[index][offset - start:end - start]
            pieces.append(piece.encode("ascii"))
            offset += len(piece)
            index += 1
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)


def text_range_chunks(data: TextBytes, start: int, end: int) -> Iterator[Chunk]:
    """range_chunks for the UTF-8 form of in-memory text, between offsets from text_grid_split."""
    yield from iter_chunks(_Span(data.read, start, end), TEXT_CHUNK_BYTES, start)


def looks_binary(spec: str | Path) -> bool:
    """A NUL byte in the first 8 KiB, as git and ripgrep decide."""
    try:
        stream, _ = open_input(spec)
        with stream:
            return b"\x00" in stream.read(8192)
    except (InputError, OSError, EOFError, gzip.BadGzipFile, zlib.error):
        return False
