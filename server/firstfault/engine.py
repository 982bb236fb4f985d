"""The whole pipeline behind the CLI and the language server: inputs in, a Report out."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable, Iterator

import attrs

from firstfault import __version__
from firstfault.context import Source, source_from_path
from firstfault.correlator import diagnose_attempt, split_attempts
from firstfault.diagnosis import Attempt, Diagnosis, InputInfo, Report, clip
from firstfault.lastline import Seen, last_seen
from firstfault.loader import Library, load_library
from firstfault.matcher import Matcher, ScanResult
from firstfault.reader import Chunk, file_size, is_stream, iter_chunks, iter_text_chunks, looks_binary, open_input

Progress = Callable[[int, int], None]  # (bytes done, bytes total)


@attrs.frozen
class TextInput:
    name: str
    chunks: Callable[[], Iterator[Chunk]]
    size: int
    binary: bool = False


class Engine:
    """Holds the library and its one automaton; analyses any number of inputs with them."""

    def __init__(self, library: Library | None = None):
        self.library = library if library is not None else load_library()
        self.matcher = Matcher(self.library.patterns())

    def analyze_paths(self, paths: Iterable[str | Path], progress: Progress | None = None) -> Report:
        """Read files ('-' for stdin, .gz transparently); raises reader.InputError for unreadable ones."""
        inputs = []
        for path in paths:
            stream, name = open_input(path)  # fail now, before any work, on a missing or unreadable input
            if is_stream(path):
                # stdin or a pipe: it can be read once only, so this stream is the one the scan reads
                inputs.append(TextInput(name, _once(stream), 0))
            else:
                stream.close()
                inputs.append(attrs.evolve(path_input(path), name=name))
        return self.analyze(inputs, progress)

    def analyze_text(self, text: str, name: str = "<text>") -> Report:
        return self.analyze([text_input(text, name)])

    def analyze(self, inputs: list[TextInput], progress: Progress | None = None) -> Report:
        total = sum(i.size for i in inputs)
        done = 0

        def advance(n: int) -> None:
            nonlocal done
            done += n
            if progress:
                progress(min(done, total), total)

        scans: list[ScanResult] = []
        file_sources: list[Source] = []
        order = 0
        for index, item in enumerate(inputs):
            source, _ = source_from_path(item.name) if len(inputs) > 1 else (Source(), None)
            file_sources.append(source)
            scan = self.matcher.scan(item.chunks(), item.name, index, source, order, advance)
            order += len(scan.events)
            scans.append(scan)
        attempts = split_attempts(scans)
        diagnoses, notes = ([], [])
        if attempts:
            diagnoses, notes = diagnose_attempt(attempts[-1], self.library.references, file_sources)
        if diagnoses and (rank := diagnoses[0].silent_rank) is not None:
            seen = last_seen(rank, [(i.chunks, i.size) for i in inputs], file_sources)
            if seen is not None:
                diagnoses[0] = _last_seen_at(diagnoses[0], seen, inputs[seen.input_index].name)
        history = [self._summarise(a, file_sources) for a in attempts[:-1]]
        current = [attrs.evolve(a, summary=_headline(diagnoses)) for a in attempts[-1:]]
        if history:
            notes = [f"{len(attempts)} attempts found; this verdict is for the last one "
                     f"(lines {attempts[-1].first_line}-{attempts[-1].last_line})", *notes]
        infos = tuple(InputInfo(i.name, s.lines, i.size, i.binary) for i, s in zip(inputs, scans))
        notes = [*notes, *self.matcher.slow_patterns()]
        return Report(__version__, infos, tuple(diagnoses), tuple(history + current), tuple(notes),
                      tuple(e for a in attempts for e in a.events))

    def _summarise(self, attempt: Attempt, file_sources: list[Source]) -> Attempt:
        diagnoses, _ = diagnose_attempt(attempt, self.library.references, file_sources)
        return attrs.evolve(attempt, summary=_headline(diagnoses))


def _last_seen_at(diagnosis: Diagnosis, seen: Seen, path: str) -> Diagnosis:
    """The silent rank's own last line becomes the place the verdict points to."""
    init = diagnosis.initiator
    if init is None or (init.path, init.line) == (path, seen.line):
        return diagnosis
    located = attrs.evolve(init, path=path, line=seen.line, text=seen.text, col_start=0, col_end=len(seen.text),
                           time=None)
    return attrs.evolve(diagnosis, initiator=located, evidence_for=diagnosis.evidence_for + (
        f"rank {diagnosis.silent_rank} was last seen on line {seen.line}: {clip(seen.text, 160)}",))


def _headline(diagnoses: list) -> str:
    if not diagnoses:
        return "no failure found"
    top = diagnoses[0]
    if top.undetermined:
        return f"undetermined: {top.reference.title}"
    where = f" on rank {top.initiator.rank}" if top.initiator and top.initiator.rank is not None else ""
    return f"{top.reference.title}{where}"


def path_input(path: str | Path) -> TextInput:
    return TextInput(str(path), _path_chunks(path), file_size(path), not is_stream(path) and looks_binary(path))


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


def text_input(text: str, name: str) -> TextInput:
    return TextInput(name, lambda: iter_text_chunks(text), len(text))


def _path_chunks(path: str | Path) -> Callable[[], Iterator[Chunk]]:
    def chunks() -> Iterator[Chunk]:
        stream, _ = open_input(path)
        try:
            yield from iter_chunks(stream)
        finally:
            if str(path) != "-":
                stream.close()
    return chunks
