"""What the engine reads: logs, and the evidence that is not a log (error files, Flight Recorder dumps), found
in the paths given or in the folders they name. Every input becomes text the matcher reads the same way."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

import attrs

from firstfault.context import Source, wall_seconds
from firstfault.errorfile import read_error_file
from firstfault.flightrecorder import Dump, analyse, load_dump
from firstfault.ncclras import read_report
from firstfault.jobfolder import DUMP, ERROR_FILE, LOG, RAS, classify_file, walk
from firstfault.reader import Chunk, InputError, file_size, grid_split, is_gzip, is_stream, iter_chunks, \
    iter_text_chunks, looks_binary, open_input, range_chunks, TextBytes, text_grid_split, text_range_chunks


@attrs.frozen
class TextInput:
    name: str
    chunks: Callable[[], Iterator[Chunk]]
    size: int
    binary: bool = False
    kind: str = LOG
    # Known from where the input lies (a job folder, a dump's name): used even when it is the only input.
    source: Source | None = None
    # Text rendered from a structured file: every event points to this line of the file, at this time, or, with
    # line_map, the rendered text's line N comes from the file's line line_map[N - 1].
    line: int | None = None
    time: float | None = None
    line_map: tuple[int, ...] | None = None
    # An editor buffer analysed before: the chunks from a byte offset and line on, the earlier scan, and the first
    # line changed since it (the scan starts again from its last checkpoint before that line).
    chunks_from: Callable[[int, int], Iterator[Chunk]] | None = None
    earlier: tuple[Any, int] | None = None
    # A file on disk (not a stream): parallel.py may read several such files in several processes.
    file_path: str | None = None
    # An input that a scan may cut in pieces, read in several processes (parallel.py); None when it cannot be cut.
    pieces: Callable[[], Pieces | None] | None = None


@attrs.frozen
class Pieces:
    """Where a whole read of an input starts a clean chunk and how a piece is read alone, from those offsets: the
    chunks a piece yields are the ones the whole read yields there."""

    size: int  # bytes
    cuts: Callable[[int], list[int]]  # parts -> offsets, one near each 1/parts of the input (fewer where none is)
    read: Callable[[int, int], Iterator[Chunk]]  # start, end -> the chunks between them


@attrs.frozen
class Collected:
    inputs: list[TextInput]
    notes: list[str]


def collect(paths: Iterable[str | Path], on_entry: Callable[[int, bool], None] | None = None) -> Collected:
    """The inputs behind the paths; raises InputError for a path that cannot be read at all."""
    collector = _Collector(on_entry)
    for path in paths:
        collector.add(path)
    return collector.finish()


class _Collector:
    """Gathers inputs path by path; the Flight Recorder dumps are lined up together at the end."""

    def __init__(self, on_entry: Callable[[int, bool], None] | None) -> None:
        self.on_entry = on_entry
        self.inputs: list[TextInput] = []
        self.notes: list[str] = []
        self.dumps: list[Dump] = []

    def add(self, path: str | Path) -> None:
        if str(path) != "-" and os.path.isdir(path):
            self._folder(path)
            return
        stream, name = open_input(path)  # fail now, before any work, on a missing or unreadable input
        if is_stream(path):
            # stdin or a pipe: it can be read once only, so this stream is the one the scan reads
            self.inputs.append(TextInput(name, _once(stream), 0))
            return
        stream.close()
        self._file(str(path), classify_file(path), None, name)

    def finish(self) -> Collected:
        return Collected(self.inputs + _dump_inputs(self.dumps, self.notes), self.notes)

    def _folder(self, path: str | Path) -> None:
        folder = walk(path, self.on_entry)
        if not folder.files:
            left = "; ".join(f"{n} {why}" for why, n in folder.skipped_counts.items())
            raise InputError(f"{path}: no logs, error files or Flight Recorder dumps in this folder"
                             + (f" (skipped: {left})" if left else " (it is empty)"))
        self.notes.extend(folder.notes())
        for f in folder.files:
            self._file(f.path, f.kind, f.source)

    def _file(self, path: str, kind: str, source: Source | None, name: str | None = None) -> None:
        """A file by its kind; a structured file that cannot be read as one is read as text, with a note."""
        try:
            if kind == DUMP:
                self.dumps.append(load_dump(path))
                return
            if kind == RAS:
                report = read_report(path)
                self._rendered(path, kind, source, report.lines, file_size(path), line_map=report.source_lines)
                return
            if kind == ERROR_FILE:
                error = read_error_file(path)
                tm = error.wall_time()
                text = error.text()
                self._rendered(path, kind, source, text.rstrip("\n").split("\n"), len(text), line=error.line,
                               time=wall_seconds(tm) if tm else None)
                return
        except InputError as exc:
            self.notes.append(f"{exc}; {'skipped' if kind == DUMP else 'read as text'}")
            if kind == DUMP:
                return
        self.inputs.append(attrs.evolve(path_input(path), name=name or path, source=source))

    def _rendered(self, path: str, kind: str, source: Source | None, lines: Iterable[str], size: int,
                  **placement: Any) -> None:
        text = "".join(line + "\n" for line in lines)
        self.inputs.append(TextInput(path, lambda: iter_text_chunks(text), size, kind=kind, source=source,
                                     **placement))


def _dump_inputs(dumps: list[Dump], notes: list[str]) -> list[TextInput]:
    """One input per dump: the findings it shows best, as fr_trace words them (most dumps show none)."""
    if not dumps:
        return []
    findings = analyse(dumps)
    ranks = sorted(d.rank for d in dumps)
    if not findings:
        notes.append(f"Flight Recorder: {len(dumps)} dump(s) (ranks {_span(ranks)}) agree on every collective "
                     "they recorded")
    out = []
    for dump in sorted(dumps, key=lambda d: d.rank):
        mine = [f for f in findings if f.dump == dump.path]
        text = "".join(line + "\n" for f in mine for line in f.lines)
        rank = next((f.rank for f in mine), dump.rank) if mine else dump.rank
        out.append(TextInput(dump.path, lambda text=text: iter_text_chunks(text), file_size(dump.path), kind=DUMP,
                             source=Source(rank=rank) if rank is not None else Source(), line=1))
    return out


def _span(ranks: list[int]) -> str:
    return ", ".join(map(str, ranks)) if len(ranks) <= 8 else f"{ranks[0]}-{ranks[-1]}"


def path_input(path: str | Path) -> TextInput:
    stream = is_stream(path)
    size = file_size(path)
    return TextInput(str(path), _path_chunks(path), size, not stream and looks_binary(path),
                     file_path=None if stream else str(path), pieces=None if stream else _file_pieces(str(path), size))


def text_input(text: str | Sequence[str], name: str, earlier: tuple[Any, int] | None = None) -> TextInput:
    """`text`: the text, or its parts in order (an editor buffer and what was appended to it since it was joined):
    a rescan from a checkpoint copies only the parts it reads, a whole read joins them. `earlier`: (the ScanResult
    of an earlier version of this text, the first line that changed since)."""
    parts = (text,) if isinstance(text, str) else tuple(text)
    return TextInput(name, lambda: iter_text_chunks(parts), sum(map(len, parts)),
                     chunks_from=lambda offset, line: iter_text_chunks(parts, offset, line), earlier=earlier,
                     pieces=lambda: _text_pieces(parts))


def _file_pieces(path: str, size: int) -> Callable[[], Pieces | None]:
    def pieces() -> Pieces | None:  # a .gz is read through its decompressor, in order
        return None if is_gzip(path) else Pieces(size, lambda parts: grid_split(path, size, parts),
                                                 lambda start, end: range_chunks(path, start, end))
    return pieces


def _text_pieces(parts: Sequence[str]) -> Pieces:
    data = TextBytes(parts)
    return Pieces(data.size, lambda count: text_grid_split(data, count),
                  lambda start, end: text_range_chunks(data, start, end))


def _once(stream) -> Callable[[], Iterator[Chunk]]:
    """Chunks of a stream that can be read once: a second call (the silent rank's last line) yields nothing."""
    used = False

    def chunks() -> Iterator[Chunk]:
        nonlocal used
        if used:
            return
        used = True
        yield from iter_chunks(stream)
    return chunks


def _path_chunks(path: str | Path) -> Callable[[], Iterator[Chunk]]:
    def chunks() -> Iterator[Chunk]:
        stream, _ = open_input(path)
        try:
            yield from iter_chunks(stream)
        finally:
            if str(path) != "-":
                stream.close()
    return chunks
