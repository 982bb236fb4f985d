"""One Aho-Corasick automaton over every pattern literal; a hit runs only that pattern's regex."""

from __future__ import annotations

import re
from collections import Counter
from functools import cached_property
from typing import Callable, Iterable, Iterator

import ahocorasick
import attrs

from firstfault.context import (EMPTY_SOURCE, Source, after_prefixes, flattened_entry_source, is_summary_field,
                                message_end, message_start, parse_line, parse_time, summary_entry_source)
from firstfault.guards import guard
from firstfault.model import UNRECOGNISED, Pattern
from firstfault.numbers import bounded
from firstfault.prefilter import Prefilter
from firstfault.reader import Chunk, ascii_lower, original_column
from firstfault.userregex import SECONDS_PER_SEARCH, SlowPattern

MAX_TEXT = 2000
MAX_CONTINUATION = 300
# Evidence kept per (pattern, source) in one input; every line is still scanned and counted.
KEEP_PER_KEY = 25
LOOKBACK_LINES = 60

# Lines that start or end a torchrun attempt; structural, so not part of any reference.
ATTEMPT_START = ("setting omp_num_threads environment variable for each process",)
# The agent's "Worker group FAILED. 3/3 attempts left; will restart worker group": the attempt it reports on ends
# with it, the next begins on the line after.
ATTEMPT_NEXT = ("will restart worker group",)
ATTEMPT_END = ("of binary:",)
# torchelastic's closing report after the last attempt: "torch.distributed.elastic.multiprocessing.errors.
# ChildFailedError:" (run.py raises it; the summary of failures follows).
FINAL_REPORT = ("childfailederror:",)


@attrs.frozen
class Event:
    pattern: Pattern
    input_index: int
    path: str
    line: int
    col_start: int
    col_end: int
    text: str
    source: Source
    time: float | None
    clock: str
    time_inferred: bool
    captures: dict[str, str]
    order: int
    # Inside the entry torchelastic's summary calls "Root Cause (first observed failure)".
    in_root_cause_entry: bool = False
    # Set by roles.py: the role this line's pattern has when the attempt turned it into context, and why a
    # line that is usually harmless counts as a possible cause here.
    demoted_from: str | None = None
    possible: str | None = None
    # A collateral line taken as the failure because nothing in the input shows what caused it.
    cause_absent: bool = False
    # The good run given as a baseline printed this line too (same pattern, same message bar numbers).
    in_baseline: bool = False
    # No time of its own: the wall time of the next line of its input that has one, which it came before.
    before: float | None = None
    # Where the match starts in `text` when that is not col_start: col_start counts in the line the file holds,
    # `text` is the line without its colour escapes.
    text_start: int | None = None

    @property
    def match_column(self) -> int:
        """Where the match starts in `text` (0 when that is past the text kept)."""
        start = self.col_start if self.text_start is None else self.text_start
        return start if start < len(self.text) else 0

    @property
    def matched_text(self) -> str:
        """The line from where its pattern matched."""
        return self.text[self.match_column:]

    @property
    def role(self) -> str:
        return self.pattern.role

    @property
    def reference_id(self) -> str:
        return self.pattern.reference_id


@attrs.frozen
class Checkpoint:
    """The scan's state where a clean chunk began: a later scan of the same input, changed only after this chunk's
    first line, starts again from here and ends as a whole scan would (the chunks from here on are the same)."""

    offset: int  # bytes of the input before the chunk
    first_line: int
    order_start: int  # the order the scan started from (other inputs before it)
    events: int
    counts: Counter
    attempt_starts: int
    attempt_ends: int
    report_lines: int
    order: int
    awaiting: tuple[tuple[int, str], ...]


# Lines of a paste that add nothing a reader looks at: blank ones, and a C++ exception's backtrace (c10's "Exception
# raised from <function> at <file> (most recent call first):" and its "frame #N: ..." lines, which PyTorch appends to
# the message of an error or a warning it logs, TCPStore's retry warning among them), behind a launcher's prefix.
_SAYS_NOTHING = re.compile(r"^\s*(?:\[[^\]]{1,40}\]:?\s*)?"
                           r"(?:frame #\d+: |Exception raised from \S.* \(most recent call first\):\s*$|$)")
# A Python traceback that the paste cuts before its exception line says only that something was raised there: its
# header, then frames, code and carets, all indented deeper than the header (behind a launcher's label), to the end.
_TRACEBACK_HEADER = re.compile(r"\s*Traceback \(most recent call last\):?\s*$")


@attrs.frozen
class Extent:
    """How much of an input says something: its line count, how many of its lines say something (not blank, not a C++
    backtrace), and the number of the last such line. Only a paste is read for it; a log's extent is its line count."""

    lines: int
    said: int
    last: int
    cut_traceback: int | None = None  # where a traceback the paste cuts before its exception line begins

    @classmethod
    def whole(cls, lines: int) -> "Extent":
        return cls(lines, lines, lines)

    @classmethod
    def of_paste(cls, lines: list[str], first: int, count: int) -> "Extent":
        """`lines` as wrapped.paste_lines gives them, the first numbered `first`; `count`: the input's line count.
        A traceback that runs to the end without its exception line is left out of what the paste says."""
        cut = _cut_traceback(lines)
        kept = lines if cut is None else lines[:cut]
        said = [first + i for i, line in enumerate(kept) if not _SAYS_NOTHING.match(line)]
        return cls(count, len(said), said[-1] if said else count, None if cut is None else first + cut)


def _cut_traceback(lines: list[str]) -> int | None:
    """The index of the last traceback header when only its frames follow it to the end of the paste: lines indented
    deeper than the header (an exception line is as deep as its header), or blank."""
    shallowest = None  # of the lines after the one being looked at
    for i in range(len(lines) - 1, -1, -1):
        said = after_prefixes(lines[i])
        if not said.strip():
            continue
        depth = len(said) - len(said.lstrip())
        if _TRACEBACK_HEADER.match(said):
            return i if shallowest is None or depth < shallowest else None
        if depth == 0:
            return None  # no header above can be shallower than this line
        shallowest = depth if shallowest is None else min(shallowest, depth)
    return None


@attrs.define
class ScanResult:
    path: str
    input_index: int
    events: list[Event] = attrs.field(factory=list)
    counts: Counter = attrs.field(factory=Counter)  # (pattern id, source) -> lines seen
    lines: int = 0
    attempt_starts: list[int] = attrs.field(factory=list)  # line numbers where an attempt begins
    attempt_ends: list[int] = attrs.field(factory=list)
    report_lines: list[int] = attrs.field(factory=list)  # where torchelastic's closing ChildFailedError report is
    checkpoints: list[Checkpoint] = attrs.field(factory=list)
    # At the end: events whose continuation is the next line, not read yet (event index, prefix the lines share);
    # and the first line read, the continuation of an earlier piece's awaiting events (a scan split in pieces).
    awaiting: list[tuple[int, str]] = attrs.field(factory=list)
    lead: str | None = None
    pasted: bool = False  # read as a paste too (engine.py): not a scan to resume from
    extent: Extent | None = None  # a paste's (engine.py); None: the input is as long as its line count

    def continue_into(self, first_line: str) -> None:
        """Give the awaiting events their continuation: the first line of what follows."""
        for index, prefix in self.awaiting:
            if following := _next_line("\n" + first_line, 0, prefix):
                event = self.events[index]
                self.events[index] = attrs.evolve(event, captures={**event.captures, "continuation": following})
        self.awaiting = []

    def add_captures(self, pattern_id: str, read: Callable[[Event], dict[str, str] | None]) -> None:
        """Adds to each event of `pattern_id` the captures `read` finds for it (a paste's lines below the header:
        p2pmatrix's figures, stackdumps' frames); an event it returns None for stays as it is."""
        for i, event in enumerate(self.events):
            if event.pattern.id == pattern_id and (found := read(event)):
                self.events[i] = attrs.evolve(event, captures={**event.captures, **found})

    def recount(self, added: Iterable[Event] = (), dropped: Iterable[Event] = ()) -> None:
        """Keeps `counts` in step with the events a paste's second reading added to `events` or took from them."""
        for event in added:
            self.counts[(event.pattern.id, event.source)] += 1
        for event in dropped:
            key = (event.pattern.id, event.source)
            self.counts[key] -= 1
            if self.counts[key] <= 0:
                del self.counts[key]

    def resumable(self, line: int, order_start: int) -> Checkpoint | None:
        """The last checkpoint before `line` (the first line that changed since), if the scan started alike."""
        usable = [c for c in self.checkpoints if c.first_line < line and c.order_start == order_start]
        return usable[-1] if usable else None


def _next_line(text: str, stop: int, prefix: str) -> str:
    """The line after the one ending at `stop`, without the prefix both lines carry ("[rank1]: "); '' at the
    end of the chunk."""
    if stop < 0:
        return ""
    end = text.find("\n", stop + 1)
    following = text[stop + 1:end if end >= 0 else len(text)]
    if prefix.strip() and following.startswith(prefix):
        following = following[len(prefix):]
    return following.strip()[:MAX_CONTINUATION]


@attrs.frozen
class _Found:
    """A regex match at a column of the whole line (the regex may have run on the message after its prefix)."""

    match: re.Match
    offset: int = 0

    def start(self) -> int:
        return self.match.start() + self.offset

    def end(self) -> int:
        return self.match.end() + self.offset

    def groupdict(self) -> dict[str, str | None]:
        return self.match.groupdict()


@attrs.frozen
class _Searcher:
    """How the matcher runs one pattern: the text every match holds (guards.py), the search itself (a library regex
    compiled once, unwrapped; a user regex through its time limit, which raises SlowPattern), and whether an
    anchored regex is tried again on the message after the line's prefixes."""

    needed: tuple[str, ...]
    search: Callable[[str], re.Match | None]
    anchored: bool

    @classmethod
    def of(cls, pattern: Pattern) -> "_Searcher":
        compiled = getattr(pattern.regex, "compiled", None) or pattern.regex
        library = isinstance(compiled, re.Pattern)  # user patterns (userregex) keep no guard and their time limit
        return cls(guard(compiled) if library else (), compiled.search if library else pattern.regex.search,
                   starts_a_line(pattern.regex.pattern))


# Escapes and character classes ("[^\\s]") hold carets that are not anchors.
_NOT_AN_ANCHOR = re.compile(r"\\.|\[\^?\]?(?:\\.|[^\]\\])*\]")


def starts_a_line(regex: str) -> bool:
    """Whether the regex anchors at the start of a line anywhere ("^RuntimeError", "(?:Error: |^\\s*)network"): such
    a branch reads the message after a launcher's prefix too, so the regex is tried again there."""
    return "^" in _NOT_AN_ANCHOR.sub("", regex)


def replaces_catch_all(pattern: Pattern) -> bool:
    """A specific reading of a line replaces a catch-all (generic) one of the same line, unless it counts only beside
    another line (needs): where that line is missing the catch-all reading is what remains."""
    return not pattern.generic and not pattern.needs


def outranked(pattern: Pattern, span: tuple[int, int], others: Iterable[tuple[Pattern, tuple[int, int]]]) -> bool:
    """Whether a catch-all reading of a line (its columns `span`) goes because another reading of the same text says
    more: a specific one (replaces_catch_all), or, for the unrecognised error line ("ERROR:torch.distributed.elastic...:
    failed (exitcode: 1) local_rank: 1"), any named reference's, catch-all or not (torchrun's report of a worker's
    exit). Only readings whose columns overlap count: a paste that lost its line breaks holds several messages on one
    line, each read on its own."""
    if not pattern.generic:
        return False
    unnamed = pattern.reference_id == UNRECOGNISED
    return any((replaces_catch_all(o) or (unnamed and o.reference_id != UNRECOGNISED and not o.needs))
               and at[0] < span[1] and span[0] < at[1] for o, at in others)


def _captured_source(m) -> Source:
    """A pattern's own `rank` / `local_rank` group says who reports (e.g. 'Rank 3 is running ...')."""
    groups = m.groupdict()
    rank, local = groups.get("rank"), groups.get("local_rank")
    if rank is None and local is None:
        return EMPTY_SOURCE
    return Source(rank=bounded(rank), local_rank=bounded(local))


class Matcher:
    def __init__(self, patterns: Iterable[Pattern]):
        self.patterns = list(patterns)
        self.automaton = ahocorasick.Automaton()
        by_literal: dict[str, list[int]] = {}
        for index, pattern in enumerate(self.patterns):
            for literal in pattern.literals:
                by_literal.setdefault(literal, []).append(index)
        for literal in ATTEMPT_START:
            by_literal.setdefault(literal, []).append(-1)
        for literal in ATTEMPT_END:
            by_literal.setdefault(literal, []).append(-2)
        for literal in ATTEMPT_NEXT:
            by_literal.setdefault(literal, []).append(-4)
        for literal in FINAL_REPORT:
            by_literal.setdefault(literal, []).append(-3)
        for literal, indices in by_literal.items():
            self.automaton.add_word(literal, tuple(indices))
        if by_literal:
            self.automaton.make_automaton()
        self.prefilter = Prefilter(by_literal, self.automaton)
        self._indices_of = by_literal  # literal -> pattern indices, for the literals Hyperscan reports (Prefilter.hits)
        self.longest_literal = max(map(len, by_literal), default=0)
        self.slow: dict[int, str] = {}  # pattern index -> where it is defined, for patterns switched off
        self._searchers: dict[int, _Searcher] = {}  # pattern index -> how to run it, made on first use

    def _search(self, index: int, line: str) -> _Found | None:
        if (searcher := self._searchers.get(index)) is None:
            searcher = self._searchers[index] = _Searcher.of(self.patterns[index])
        needed = searcher.needed
        # One text is the common case: tested directly, without a generator per line.
        if needed and not (needed[0] in line if len(needed) == 1 else any(text in line for text in needed)):
            return None
        try:
            if m := searcher.search(line):
                return _Found(m)
            if searcher.anchored and (start := message_start(line)) and (
                    m := searcher.search(line[start:message_end(line, start)])):
                return _Found(m, start)
            return None
        except SlowPattern as slow:
            self.slow[index] = slow.origin  # switched off for every later line and input
            return None

    def slow_patterns(self) -> list[str]:
        """One message per user pattern switched off for running out of time."""
        return [f"{origin}: the regex of pattern '{self.patterns[i].id}' took longer than {SECONDS_PER_SEARCH} s on "
                "one line and was switched off; simplify it (nested repetition such as (a+)+ backtracks)"
                for i, origin in sorted(self.slow.items())]

    def literals(self) -> list[str]:
        return sorted({lit for p in self.patterns for lit in p.literals})

    @cached_property
    def tail_automaton(self) -> ahocorasick.Automaton | None:
        """The literals of the patterns whose end decides (Pattern.tail_decides), each to those patterns' indices: a
        paste's long lines are looked up in it for wrapped.py, and it holds a few literals where the main automaton
        holds every one (a long line hits the main one many times, each hit a call back into Python)."""
        by_literal: dict[str, tuple[int, ...]] = {}
        for index, pattern in enumerate(self.patterns):
            if pattern.tail_decides:
                for literal in pattern.literals:
                    by_literal[literal] = (*by_literal.get(literal, ()), index)
        if not by_literal:
            return None
        automaton = ahocorasick.Automaton()
        for literal, indices in by_literal.items():
            automaton.add_word(literal, indices)
        automaton.make_automaton()
        return automaton

    def reads(self, index: int, line: str) -> bool:
        """Whether pattern `index` matches `line` as a scan reads it: after a prefix it strips, within a user
        pattern's time bound (one that ran out is switched off, as in a scan)."""
        return index not in self.slow and self._search(index, line) is not None

    def scan(self, chunks: Iterable[Chunk], path: str, input_index: int, file_source: Source,
             order_start: int = 0, on_chunk: Callable[[Chunk], None] | None = None,
             resume: tuple[ScanResult, Checkpoint] | None = None) -> ScanResult:
        """`resume`: an earlier scan of this input and the checkpoint `chunks` start from (see Checkpoint)."""
        result = ScanResult(path, input_index)
        order = order_start
        if resume is not None:
            earlier, at = resume
            result.events = [attrs.evolve(e, input_index=input_index) if e.input_index != input_index else e
                             for e in earlier.events[:at.events]]
            result.counts = Counter(at.counts)
            result.attempt_starts = earlier.attempt_starts[:at.attempt_starts]
            result.attempt_ends = earlier.attempt_ends[:at.attempt_ends]
            result.report_lines = earlier.report_lines[:at.report_lines]
            result.checkpoints = [c for c in earlier.checkpoints if c.first_line < at.first_line]
            order, result.awaiting = at.order, list(at.awaiting)
            result.lines = at.first_line - 1
        for chunk in chunks:
            if chunk.clean:
                result.checkpoints.append(Checkpoint(
                    chunk.offset, chunk.first_line, order_start, len(result.events), Counter(result.counts),
                    len(result.attempt_starts), len(result.attempt_ends), len(result.report_lines), order,
                    tuple(result.awaiting)))
            if result.lead is None:
                result.lead = chunk.text.split("\n", 1)[0]
            if result.awaiting:
                result.continue_into(chunk.text.split("\n", 1)[0])
            counted = [0, 0]  # line breaks counted so far, and the offset counted up to (_hit_lines)
            for line_no, index_in_chunk, start, candidates in self._hit_lines(chunk, counted):
                text = chunk.text
                stop = text.find("\n", start)
                line = text[start:stop if stop >= 0 else len(text)]
                if -1 in candidates:
                    result.attempt_starts.append(line_no)
                if -4 in candidates:
                    result.attempt_starts.append(line_no + 1)
                if -2 in candidates and "failed (exitcode" in line:
                    result.attempt_ends.append(line_no)
                if -3 in candidates:
                    result.report_lines.append(line_no)
                matched = [(self.patterns[i], m) for i in candidates if i >= 0 and i not in self.slow
                           if (m := self._search(i, line))]
                if not matched:
                    continue
                if len(matched) > 1:
                    readings = [(p, (m.start(), m.end())) for p, m in matched]
                    matched = [(p, m) for p, m in matched if not outranked(p, (m.start(), m.end()), readings)]
                    # Two readings of one line: the one that matches further along reads the detail that names the
                    # cause (RMM's "std::bad_alloc: out_of_memory: ..."), and the order must not hang on library order.
                    matched.sort(key=lambda pm: -pm[1].start())
                ctx = parse_line(line)
                block_source, root_cause = self._block_source(text, start, line)
                timing = None  # (time, clock, inferred): read only for a line whose event is kept
                original = None
                for pattern, m in matched:
                    source = (ctx.source_at(m.start()).merged(block_source).merged(_captured_source(m))
                              .merged(file_source))
                    key = (pattern.id, source)
                    result.counts[key] += 1
                    if result.counts[key] > KEEP_PER_KEY:
                        continue
                    if timing is None:
                        time, clock, _ = parse_time(line)
                        timing = ((time, clock, False) if time is not None
                                  else (self._inherited_time(text, start), clock, True))
                    time, clock, inferred = timing
                    if original is None:
                        original = line if chunk.original is chunk.text else chunk.original_line(index_in_chunk)
                    order += 1
                    captures = {k: v for k, v in m.groupdict().items() if v is not None}
                    if pattern.continuation:
                        if following := _next_line(text, stop, line[:m.start()]):
                            captures["continuation"] = following
                        elif stop < 0 or stop == len(text) - 1:
                            result.awaiting.append((len(result.events), line[:m.start()]))
                    result.events.append(Event(
                        pattern, input_index, path, line_no,
                        _column(original, line, m.start()), _column(original, line, m.end()),
                        line[:MAX_TEXT], source, time, clock, inferred and time is not None,
                        captures, order, root_cause, text_start=None if original is line else m.start()))
            breaks = chunk.line_breaks(counted)
            result.lines = chunk.first_line + breaks - (1 if chunk.text.endswith("\n") else 0)
            if on_chunk:
                on_chunk(chunk)
        return result

    def read_line(self, text: str, line_no: int, path: str, input_index: int, file_source: Source) -> list[Event]:
        """The events of a line the input does not hold as such (two halves a terminal cut apart, a raise read as the
        exception it names), numbered as line `line_no`."""
        return self.scan([Chunk(text, line_no, text)], path, input_index, file_source).events

    def _hit_lines(self, chunk: Chunk, counted: list[int] | None = None) -> Iterator[tuple[int, int, int, set[int]]]:
        """(line number, line index in chunk, line start offset, candidate pattern indices) per hit line. `counted`
        holds the line breaks counted and the offset they were counted up to, for the caller to count the rest."""
        counted = [0, 0] if counted is None else counted
        text = chunk.text
        counted_to = 0
        index = 0
        names, indices_of = self.prefilter.hyperscan_literals, self._indices_of
        for start, literals in self.prefilter.hits(text):
            if literals is None:
                stop = text.find("\n", start)
                lowered = ascii_lower(text[start:stop if stop >= 0 else None])
                candidates = {i for _, found in self.automaton.iter(lowered) for i in found}
            else:
                candidates = {i for literal in literals for i in indices_of[names[literal]]}
            if candidates:
                index += text.count("\n", counted_to, start)
                counted_to = counted[1] = start
                counted[0] = index
                yield chunk.first_line + index, index, start, candidates

    @staticmethod
    def _previous_lines(text: str, start: int, limit: int) -> Iterator[str]:
        stop = start - 1
        for _ in range(limit):
            if stop < 0:
                return
            begin = text.rfind("\n", 0, stop) + 1
            yield text[begin:stop]
            stop = begin - 1

    def _block_source(self, text: str, start: int, line: str) -> tuple[Source, bool]:
        if not is_summary_field(line):
            return flattened_entry_source(line), False
        return summary_entry_source([line, *self._previous_lines(text, start, 10)])

    def _inherited_time(self, text: str, start: int) -> float | None:
        for previous in self._previous_lines(text, start, LOOKBACK_LINES):
            time, clock, _ = parse_time(previous)
            if time is not None and clock == "wall":
                return time
        return None


def _column(original: str, line: str, column: int) -> int:
    """A position in the escape-free line, as a column of the line the file holds."""
    return column if original is line else original_column(original, min(column, len(line)), line)
