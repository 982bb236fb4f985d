"""The whole pipeline behind the CLI and the language server: inputs in, a Report out."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable

import attrs

from firstfault import __version__
from firstfault.baseline import PhaseTracker, RunSummary, compare, shared_with, summarise, template
from firstfault.clocks import estimate, qualify
from firstfault.context import Source, source_from_path
from firstfault.correlator import diagnose_attempt, split_attempts
from firstfault.diagnosis import Attempt, Diagnosis, InputInfo, Report, clip
from firstfault.lastline import Seen, last_seen
from firstfault.loader import Library, load_library
from firstfault.matcher import Event, Extent, Matcher, ScanResult
from firstfault.nothingfound import next_checks
from firstfault.parallel import numbered_from, scan_files, scan_in_pieces
from firstfault.reader import Chunk
from firstfault.inputs import TextInput, collect, text_input
from firstfault.p2pmatrix import matrix_medians
from firstfault.pasteonly import paste_only_events
from firstfault.raised import raised_events
from firstfault.stackdumps import read_dumps
from firstfault.wrapped import PASTE_BYTES, paste_lines, wrapped_events

Progress = Callable[[int, int], None]  # (bytes done, bytes total)


@attrs.frozen
class Baseline:
    """A run that worked: the paths given (as the report names them) and the inputs found in them."""

    names: tuple[str, ...]
    inputs: list[TextInput]


class Engine:
    """Holds the library and its one automaton; analyses any number of inputs with them."""

    def __init__(self, library: Library | None = None, jobs: int = 1):
        """`jobs`: processes a large plain file may be scanned in (pieces are forked: the CLI's choice, not a
        long-lived server's, which has threads)."""
        self.library = library if library is not None else load_library()
        patterns = self.library.patterns()
        self.matcher = Matcher(p for p in patterns if not p.paste_only)
        self.paste_matcher = Matcher(p for p in patterns if p.paste_only)
        self.jobs = jobs

    def slow_patterns(self) -> list[str]:
        """User patterns switched off for running out of time, in either matcher."""
        return [*self.matcher.slow_patterns(), *self.paste_matcher.slow_patterns()]

    def analyze_paths(self, paths: Iterable[str | Path], progress: Progress | None = None,
                      on_entry: Callable[[int, bool], None] | None = None,
                      baseline: Iterable[str | Path] = ()) -> Report:
        """Read files ('-' for stdin, .gz transparently) and job folders; raises reader.InputError for a path
        that cannot be read at all. on_entry(seen, finished) reports a folder walk's progress. `baseline`: the
        files or folders of a run that worked, to compare with."""
        collected = collect(paths, on_entry)
        baseline = [str(b) for b in baseline]
        good = Baseline(tuple(baseline), collect(baseline, on_entry).inputs) if baseline else None
        return self.analyze(collected.inputs, progress, collected.notes, good)

    def analyze_text(self, text: str, name: str = "<text>") -> Report:
        return self.analyze([text_input(text, name)])

    def analyze(self, inputs: list[TextInput], progress: Progress | None = None,
                input_notes: Iterable[str] = (), baseline: Baseline | None = None) -> Report:
        total = sum(i.size for i in inputs) + (sum(i.size for i in baseline.inputs) if baseline else 0)
        done = 0
        # With a baseline, how far each run got is read from its chunks as they are scanned.
        tracker = PhaseTracker() if baseline else None

        def advanced(count: int) -> None:
            nonlocal done
            done += count
            if progress:
                progress(min(done, total), total)

        def advance(chunk: Chunk) -> None:
            if tracker is not None:
                tracker.feed(chunk)
            advanced(len(chunk.text))

        # How far each run got is read from every chunk: with a baseline, nothing is scanned elsewhere.
        scans, file_sources = self._scan(inputs, advance, advanced if tracker is None else None)
        bad_phase = tracker.phase() if tracker is not None else None
        good = discounted = None
        if baseline:
            tracker = PhaseTracker()
            good_scans, _ = self._scan(baseline.inputs, advance)
            good = summarise((e for s in good_scans for e in s.events), tracker.phase())
            discounted = _discount(scans, good)
        clocks = estimate([e for scan in scans for e in scan.events])
        for scan in scans:
            if clocks.offsets:
                scan.events[:] = [clocks.corrected(e) for e in scan.events]
            scan.events[:] = _bounded_by_later_times(scan.events)
        attempts = split_attempts(scans)
        diagnoses, notes = ([], [])
        if attempts:
            diagnoses, notes = diagnose_attempt(attempts[-1], self.library.references, file_sources)
            if diagnoses:
                diagnoses[0] = qualify(diagnoses[0], list(attempts[-1].events), clocks)
            notes = [*notes, *clocks.notes()]
        if diagnoses and (rank := diagnoses[0].silent_rank) is not None:
            seen = last_seen(rank, [(i.chunks, i.size) for i in inputs], file_sources)
            if seen is not None:
                diagnoses[0] = _last_seen_at(diagnoses[0], seen, inputs[seen.input_index].name)
        history = [self._summarise(a, file_sources) for a in attempts[:-1]]
        current = [attrs.evolve(a, summary=_headline(diagnoses)) for a in attempts[-1:]]
        if history:
            notes = [f"{len(attempts)} attempts found; this verdict is for the last one "
                     f"(lines {attempts[-1].first_line}-{attempts[-1].last_line})", *notes]
        comparison = None
        if baseline:
            current_events = list(attempts[-1].events) if attempts else []
            bad = summarise(current_events, bad_phase)
            comparison = compare(current_events, bad, good, baseline.names, discounted)
            if diagnoses and (new := _new_in_failed_run(diagnoses[0], current_events, good)):
                diagnoses[0] = attrs.evolve(diagnoses[0], evidence_for=diagnoses[0].evidence_for + (new,))
        infos = tuple(InputInfo(i.name, s.lines, i.size, i.binary, i.kind) for i, s in zip(inputs, scans))
        notes = [*notes, *input_notes, *self.slow_patterns()]
        events = tuple(e for a in attempts for e in a.events)
        return Report(__version__, infos, tuple(diagnoses), tuple(history + current), tuple(notes), events, comparison,
                      tuple(scans), () if diagnoses else next_checks(infos, events))

    def _scan(self, inputs: list[TextInput], advance: Callable[[Chunk], None],
              advanced: Callable[[int], None] | None = None) -> tuple[list[ScanResult], list[Source]]:
        """`advanced`: given, a large plain file may be scanned in pieces, and it hears of those read elsewhere."""
        scans: list[ScanResult] = []
        file_sources = [item.source if item.source is not None else (
            source_from_path(item.name)[0] if len(inputs) > 1 else Source()) for item in inputs]
        # Several plain files (one per rank): spread over the cores, whole, then numbered in input order below.
        elsewhere = scan_files(self.matcher, [(i, item.file_path, item.name, item.size, file_sources[i])
                                              for i, item in enumerate(inputs) if item.file_path],
                               self.jobs, advanced) if advanced else {}
        order = 0
        for index, item in enumerate(inputs):
            source = file_sources[index]
            earlier, changed = item.earlier if item.earlier is not None else (None, 0)
            # A paste's scan holds what only a paste's reading adds (wrapped lines, paste-only patterns): a whole
            # scan of a small input is cheap, and one grown past a paste's size must lose those readings.
            at = earlier.resumable(changed, order) if (earlier is not None and not earlier.pasted
                                                       and item.chunks_from) else None
            if index in elsewhere:
                scan = numbered_from(elsewhere[index], order)
            elif at is not None:  # an edited buffer: from the last checkpoint before the first changed line
                scan = self.matcher.scan(item.chunks_from(at.offset, at.first_line), item.name, index, source,
                                         order, advance, resume=(earlier, at))
            else:
                pieces = scan_in_pieces(self.matcher, item.size, item.pieces, item.name, self.jobs, index, source,
                                        order, advance, advanced) if advanced and item.pieces else None
                scan = pieces or self.matcher.scan(item.chunks(), item.name, index, source, order, advance)
            if item.size <= PASTE_BYTES:  # a paste: lines a terminal wrapped, a traceback cut before its exception
                chunks = list(item.chunks())  # read once for the three readings below
                lines, first = paste_lines(chunks)
                joined = wrapped_events(self.matcher, lines, first, scan, index, source)
                raised = raised_events(self.matcher, lines, first, scan, index, source)
                matrix_medians(lines, first, scan)
                read_dumps(lines, first, scan)
                if paste_only_events(self.paste_matcher, chunks, scan, index, source) or raised or joined:
                    scan = numbered_from(scan, order)
                scan.pasted = True
                scan.extent = Extent.of_paste(lines, first, scan.lines)
            scan = _placed(scan, item)
            order += len(scan.events)
            scans.append(scan)
        return scans, file_sources

    def _summarise(self, attempt: Attempt, file_sources: list[Source]) -> Attempt:
        diagnoses, _ = diagnose_attempt(attempt, self.library.references, file_sources)
        return attrs.evolve(attempt, summary=_headline(diagnoses))


def _bounded_by_later_times(events: list[Event]) -> list[Event]:
    """A line without a time came before the next line of its input that has one: an error printed before the first
    timestamped line is not ordered after every timestamped one."""
    bounded, later = [], None
    for e in reversed(events):
        if e.time is not None and e.clock == "wall":
            later = e.time
        elif e.before != later:  # set afresh: a rescanned buffer's events keep what an earlier analysis gave them
            e = attrs.evolve(e, before=later)
        bounded.append(e)
    return bounded[::-1]


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


def _placed(scan: ScanResult, item: TextInput) -> ScanResult:
    """Events of text rendered from a structured file point to the file's line, at the file's time."""
    if item.line_map is not None:
        scan.events[:] = [attrs.evolve(e, line=item.line_map[min(e.line, len(item.line_map)) - 1])
                          for e in scan.events]
        scan.lines = max(scan.lines, *item.line_map, 0)  # the lines are the file's now
    if item.line is None:
        return scan
    scan.events[:] = [attrs.evolve(e, line=item.line, time=e.time if e.time is not None else item.time,
                                   time_inferred=e.time is None and item.time is not None)
                      for e in scan.events]
    return scan


def _discount(scans: list[ScanResult], good: RunSummary) -> int:
    """Mark the lines the good run printed too (roles.weigh takes them as context); how many there were."""
    discounted = 0
    for scan in scans:
        scan.events[:] = [attrs.evolve(e, in_baseline=True) if shared_with(good, e) else e for e in scan.events]
        discounted += sum(e.in_baseline for e in scan.events)
    return discounted


def _new_in_failed_run(diagnosis: Diagnosis, events: list[Event], good: RunSummary) -> str | None:
    init = diagnosis.initiator
    if init is None:
        return None
    at = [e for e in events if e.path == init.path and e.line == init.line]
    if at and all(template(e) not in good.templates for e in at):
        return "the good run never printed this line"
    return None
