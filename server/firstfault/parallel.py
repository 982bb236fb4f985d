"""A large input (a file, or an editor's buffer) scanned in pieces at once: the first piece here, the others in
forked processes, merged into the ScanResult a whole scan gives.

A piece's result travels as a partial scan, plain data (JSON-able) that names patterns by their index in the
matcher both sides built from the same library:

    {"patterns": int,                      # how many patterns the scanning matcher had (a sanity check)
     "lines": int,                         # lines in the piece
     "lead": str | None,                   # the piece's first line: the continuation of the previous piece's
                                           #   awaiting events
     "events": [[pattern index, line, col_start, col_end, text, [rank, local_rank, host, pid, device],
                 time, clock, time_inferred, captures, in_root_cause_entry], ...],   # in scan order
     "counts": [[pattern id, [rank, local_rank, host, pid, device], lines seen], ...],
     "attempt_starts": [line, ...], "attempt_ends": [line, ...], "report_lines": [line, ...],
     "awaiting": [[event index, prefix], ...],
     "slow": [[pattern index, where it is defined], ...],   # user patterns switched off for running out of time
     "checkpoints": [[byte offset in the input, line, events before it, counts then (as "counts"),
                      attempt starts, attempt ends and report lines before it, awaiting then], ...]}

Line numbers count from 1 at the piece's start; the merge moves them after the pieces before it, keeps the first
KEEP_PER_KEY events per (pattern, source) over all pieces, numbers the events' order again, gives awaiting
events the next piece's first line and makes each checkpoint the one a whole scan makes there (an edited buffer
is scanned again from its last checkpoint before the edit).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sys
from bisect import bisect_left
from collections import Counter
from typing import TYPE_CHECKING, Any, Callable, Iterator

import attrs

from firstfault.context import Source
from firstfault.matcher import KEEP_PER_KEY, Checkpoint, Event, Matcher, ScanResult
from firstfault.reader import Chunk, is_gzip, range_chunks

if TYPE_CHECKING:
    from firstfault.inputs import Pieces

# Below this an input is read in one piece: forking and merging cost more than the second core gives back (measured
# on 2 cores: a 20 MB log took 0.61 s in two pieces against 0.55 s whole; a 50 MB log 0.86 s against 0.91-0.98 s).
MIN_SPLIT_BYTES = 32 * 1024 * 1024

# The matcher the forked workers use: set before the pool forks, so each child has it in its copy of the parent's
# memory and only file names and offsets are sent to it (a pickled automaton would cost more than the scan).
_FORKED: Matcher | None = None
_FORKED_PIECES: Pieces | None = None  # the input cut in pieces, likewise (an editor's buffer is in memory only)


def default_jobs() -> int:
    """The cores this process may use: one piece each."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def scan_in_pieces(matcher: Matcher, size: int, make_pieces: Callable[[], Pieces | None], name: str, jobs: int,
                   input_index: int, file_source: Source, order_start: int, advance: Callable[[Chunk], None],
                   advanced: Callable[[int], None]) -> ScanResult | None:
    """The scan of an input (a plain file, or an editor's buffer: see inputs.Pieces) in up to `jobs` pieces; None
    when it is not worth splitting (small, one core, no fork, or no clean place to cut), and the caller scans it
    whole. `advance` sees the chunks read here; `advanced` the byte count of each piece read elsewhere, once done."""
    if jobs < 2 or size < MIN_SPLIT_BYTES or not can_fork():
        return None
    pieces = make_pieces()
    cuts = pieces.cuts(jobs) if pieces is not None else []
    if not cuts:
        return None
    bounds = [0, *cuts, pieces.size]
    with _forked_pool(matcher, len(bounds) - 2, pieces) as pool:
        pending = [pool.apply_async(_scan_piece, (name, start, end, input_index, file_source))
                   for start, end in zip(bounds[1:-1], bounds[2:])]
        result = matcher.scan(pieces.read(0, bounds[1]), name, input_index, file_source, order_start, advance)
        for (start, end), job in zip(zip(bounds[1:-1], bounds[2:]), pending):
            result = merge(result, from_partial(job.get(), matcher, name, input_index))
            advanced(end - start)
    return numbered_from(result, order_start)


def numbered_from(result: ScanResult, order_start: int) -> ScanResult:
    """The events' order numbers as one scan of this input would give them after `order_start`."""
    result.events[:] = [attrs.evolve(e, order=order_start + i) for i, e in enumerate(result.events, 1)]
    result.checkpoints[:] = [attrs.evolve(c, order_start=order_start, order=order_start + c.events)
                             for c in result.checkpoints]
    return result


def scan_files(matcher: Matcher, files: list[tuple[int, str, str, int, Source]], jobs: int,
               advanced: Callable[[int], None]) -> dict[int, ScanResult]:
    """Several files on disk (input index, path, name, size, source) scanned whole, spread over `jobs` forked
    processes; each result's events are numbered from 0, for the caller to place after the inputs before it. Empty
    when it is not worth it (one file, little to read, one core, no fork)."""
    if jobs < 2 or len(files) < 2 or sum(f[3] for f in files) < MIN_SPLIT_BYTES or not can_fork():
        return {}
    files = [f for f in files if not is_gzip(f[1])]  # a .gz is read through its decompressor, in order
    results = {}
    with _forked_pool(matcher, jobs) as pool:
        scanned = pool.imap(_scan_file, files, chunksize=max(1, len(files) // (jobs * 16)))
        for (index, _, name, size, _), partial in zip(files, scanned):
            results[index] = from_partial(partial, matcher, name, index)
            advanced(size)
    return results


@contextlib.contextmanager
def _forked_pool(matcher: Matcher, processes: int, pieces: Pieces | None = None) -> Iterator[Any]:
    global _FORKED, _FORKED_PIECES
    _FORKED, _FORKED_PIECES = matcher, pieces
    # A forked worker closes its copy of sys.stdin first; where another thread reads stdin (pygls' reader, when stdin
    # is no pipe of its own), the copy's lock is held and the close would wait forever. The workers never read stdin:
    # they are forked without it.
    stdin, sys.stdin = sys.stdin, None
    try:
        pool = multiprocessing.get_context("fork").Pool(processes)
    finally:
        sys.stdin = stdin
    try:
        with pool:
            yield pool
    finally:
        _FORKED_PIECES = None  # an editor's buffer, encoded: not kept past its scan


def _scan_file(file: tuple[int, str, str, int, Source]) -> dict[str, Any]:
    index, path, name, size, source = file
    return _scanned(range_chunks(path, 0, size), name, index, source)


def _scan_piece(name: str, start: int, end: int, input_index: int, file_source: Source) -> dict[str, Any]:
    assert _FORKED_PIECES is not None, "a piece is scanned only in a process forked by _forked_pool"
    return _scanned(_FORKED_PIECES.read(start, end), name, input_index, file_source)


def _scanned(chunks: Iterator[Chunk], name: str, input_index: int, file_source: Source) -> dict[str, Any]:
    assert _FORKED is not None, "a piece is scanned only in a process forked by _forked_pool"
    return to_partial(_FORKED.scan(chunks, name, input_index, file_source), _FORKED)


def to_partial(result: ScanResult, matcher: Matcher) -> dict[str, Any]:
    index = {id(p): i for i, p in enumerate(matcher.patterns)}
    return {
        "patterns": len(matcher.patterns),
        "lines": result.lines,
        "lead": result.lead,
        "events": [[index[id(e.pattern)], e.line, e.col_start, e.col_end, e.text, list(attrs.astuple(e.source)),
                    e.time, e.clock, e.time_inferred, e.captures, e.in_root_cause_entry, e.text_start]
                   for e in result.events],
        "counts": [[pid, list(attrs.astuple(source)), n] for (pid, source), n in result.counts.items()],
        "attempt_starts": result.attempt_starts,
        "attempt_ends": result.attempt_ends,
        "report_lines": result.report_lines,
        "awaiting": [list(a) for a in result.awaiting],
        "slow": sorted(matcher.slow.items()),
        "checkpoints": [[c.offset, c.first_line, c.events, [[pid, list(attrs.astuple(source)), n]
                                                             for (pid, source), n in c.counts.items()],
                         c.attempt_starts, c.attempt_ends, c.report_lines, [list(a) for a in c.awaiting]]
                        for c in result.checkpoints],
    }


def from_partial(partial: dict[str, Any], matcher: Matcher, path: str, input_index: int) -> ScanResult:
    if partial["patterns"] != len(matcher.patterns):
        raise ValueError(f"a partial scan made with {partial['patterns']} patterns, read with "
                         f"{len(matcher.patterns)}: both sides must load the same library")
    for i, origin in partial["slow"]:
        matcher.slow.setdefault(i, origin)
    events = [Event(matcher.patterns[p], input_index, path, line, start, end, text, Source(*source), time, clock,
                    inferred, captures, 0, root_cause, text_start=text_start)
              for p, line, start, end, text, source, time, clock, inferred, captures, root_cause, text_start
              in partial["events"]]
    checkpoints = [Checkpoint(offset, first_line, 0, events_before, _counts(counts_then), starts, ends, reports,
                              events_before, tuple((i, prefix) for i, prefix in awaiting))
                   for offset, first_line, events_before, counts_then, starts, ends, reports, awaiting
                   in partial.get("checkpoints", [])]
    return ScanResult(path, input_index, events, _counts(partial["counts"]), partial["lines"],
                      partial["attempt_starts"], partial["attempt_ends"], partial["report_lines"], checkpoints,
                      awaiting=[(i, prefix) for i, prefix in partial["awaiting"]], lead=partial["lead"])


def _counts(rows: list) -> Counter:
    return Counter({(pid, Source(*source)): n for pid, source, n in rows})


def merge(before: ScanResult, after: ScanResult) -> ScanResult:
    """`after` scanned the lines that follow `before`'s: one result, as one scan of both would give (bar the
    events' order, numbered by the caller with numbered_from)."""
    awaiting_at_cut = tuple(before.awaiting)
    if before.awaiting and after.lead is not None:
        before.continue_into(after.lead)
    shift = before.lines
    seen: Counter = Counter()
    kept: list[Event] = []
    moved: dict[int, int] = {}  # index in after.events -> index in the merged events
    for index, event in enumerate(after.events):
        key = (event.pattern.id, event.source)
        seen[key] += 1
        if before.counts.get(key, 0) + seen[key] <= KEEP_PER_KEY:
            moved[index] = len(before.events) + len(kept)
            kept.append(attrs.evolve(event, line=event.line + shift))
    kept_from = list(moved)  # ascending
    # A checkpoint of `after` as the whole scan would have made it: a later edit of an editor's buffer scanned in
    # pieces starts again from there (the order is set by numbered_from).
    checkpoints = [attrs.evolve(
        c, first_line=c.first_line + shift, events=len(before.events) + bisect_left(kept_from, c.events),
        counts=before.counts + c.counts, attempt_starts=len(before.attempt_starts) + c.attempt_starts,
        attempt_ends=len(before.attempt_ends) + c.attempt_ends, report_lines=len(before.report_lines) + c.report_lines,
        awaiting=awaiting_at_cut if c.first_line == 1 else tuple((moved[i], p) for i, p in c.awaiting if i in moved))
        for c in after.checkpoints]
    return ScanResult(before.path, before.input_index, before.events + kept, before.counts + after.counts,
                      before.lines + after.lines,
                      before.attempt_starts + [line + shift for line in after.attempt_starts],
                      before.attempt_ends + [line + shift for line in after.attempt_ends],
                      before.report_lines + [line + shift for line in after.report_lines],
                      before.checkpoints + checkpoints, [(moved[i], p) for i, p in after.awaiting if i in moved],
                      before.lead if before.lead is not None else after.lead)
