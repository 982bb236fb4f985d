"""A large file scanned in pieces at once: the first piece here, the others in forked processes, merged into the
ScanResult a whole scan gives.

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
     "slow": [[pattern index, where it is defined], ...]}   # user patterns switched off for running out of time

Line numbers count from 1 at the piece's start; the merge moves them after the pieces before it, keeps the first
KEEP_PER_KEY events per (pattern, source) over all pieces, numbers the events' order again and gives awaiting
events the next piece's first line.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import Counter
from typing import Any, Callable

import attrs

from firstfault.context import Source
from firstfault.matcher import KEEP_PER_KEY, Event, Matcher, ScanResult
from firstfault.reader import Chunk, grid_split, is_gzip, range_chunks

# Below this a file is read in one piece: forking and merging cost more than the second core gives back.
MIN_SPLIT_BYTES = 64 * 1024 * 1024

# The matcher the forked workers use: set before the pool forks, so each child has it in its copy of the parent's
# memory and only file names and offsets are sent to it (a pickled automaton would cost more than the scan).
_FORKED: Matcher | None = None


def default_jobs() -> int:
    """The cores this process may use: one piece each."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def scan_in_pieces(matcher: Matcher, path: str, name: str, size: int, jobs: int, input_index: int,
                   file_source: Source, order_start: int, advance: Callable[[Chunk], None],
                   advanced: Callable[[int], None]) -> ScanResult | None:
    """The scan of a plain file (shown as `name`) in up to `jobs` pieces; None when it is not worth splitting (small,
    one core, no fork, or no clean place to cut), and the caller scans it whole. `advance` sees the chunks read here;
    `advanced` the byte count of each piece read elsewhere, once it is done."""
    if jobs < 2 or size < MIN_SPLIT_BYTES or not can_fork() or is_gzip(path):
        return None
    cuts = grid_split(path, size, jobs)
    if not cuts:
        return None
    bounds = [0, *cuts, size]
    with _forked_pool(matcher, len(bounds) - 2) as pool:
        pending = [pool.apply_async(_scan_piece, (path, name, start, end, input_index, file_source))
                   for start, end in zip(bounds[1:-1], bounds[2:])]
        result = matcher.scan(range_chunks(path, 0, bounds[1]), name, input_index, file_source, order_start,
                              advance)
        for (start, end), job in zip(zip(bounds[1:-1], bounds[2:]), pending):
            result = merge(result, from_partial(job.get(), matcher, name, input_index))
            advanced(end - start)
    return numbered_from(result, order_start)


def numbered_from(result: ScanResult, order_start: int) -> ScanResult:
    """The events' order numbers as one scan of this input would give them after `order_start`."""
    result.events[:] = [attrs.evolve(e, order=order_start + i) for i, e in enumerate(result.events, 1)]
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


def _forked_pool(matcher: Matcher, processes: int):
    global _FORKED
    _FORKED = matcher
    return multiprocessing.get_context("fork").Pool(processes)


def _scan_file(file: tuple[int, str, str, int, Source]) -> dict[str, Any]:
    index, path, name, size, source = file
    return _scan_piece(path, name, 0, size, index, source)


def _scan_piece(path: str, name: str, start: int, end: int, input_index: int, file_source: Source) -> dict[str, Any]:
    assert _FORKED is not None, "a piece is scanned only in a process forked by _forked_pool"
    return to_partial(_FORKED.scan(range_chunks(path, start, end), name, input_index, file_source), _FORKED)


def to_partial(result: ScanResult, matcher: Matcher) -> dict[str, Any]:
    index = {id(p): i for i, p in enumerate(matcher.patterns)}
    return {
        "patterns": len(matcher.patterns),
        "lines": result.lines,
        "lead": result.lead,
        "events": [[index[id(e.pattern)], e.line, e.col_start, e.col_end, e.text, list(attrs.astuple(e.source)),
                    e.time, e.clock, e.time_inferred, e.captures, e.in_root_cause_entry] for e in result.events],
        "counts": [[pid, list(attrs.astuple(source)), n] for (pid, source), n in result.counts.items()],
        "attempt_starts": result.attempt_starts,
        "attempt_ends": result.attempt_ends,
        "report_lines": result.report_lines,
        "awaiting": [list(a) for a in result.awaiting],
        "slow": sorted(matcher.slow.items()),
    }


def from_partial(partial: dict[str, Any], matcher: Matcher, path: str, input_index: int) -> ScanResult:
    if partial["patterns"] != len(matcher.patterns):
        raise ValueError(f"a partial scan made with {partial['patterns']} patterns, read with "
                         f"{len(matcher.patterns)}: both sides must load the same library")
    for i, origin in partial["slow"]:
        matcher.slow.setdefault(i, origin)
    events = [Event(matcher.patterns[p], input_index, path, line, start, end, text, Source(*source), time, clock,
                    inferred, captures, 0, root_cause)
              for p, line, start, end, text, source, time, clock, inferred, captures, root_cause in partial["events"]]
    counts = Counter({(pid, Source(*source)): n for pid, source, n in partial["counts"]})
    return ScanResult(path, input_index, events, counts, partial["lines"], partial["attempt_starts"],
                      partial["attempt_ends"], partial["report_lines"],
                      awaiting=[(i, prefix) for i, prefix in partial["awaiting"]], lead=partial["lead"])


def merge(before: ScanResult, after: ScanResult) -> ScanResult:
    """`after` scanned the lines that follow `before`'s: one result, as one scan of both would give (bar the
    events' order, numbered by the caller, and checkpoints, kept for `before` only)."""
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
    return ScanResult(before.path, before.input_index, before.events + kept, before.counts + after.counts,
                      before.lines + after.lines,
                      before.attempt_starts + [line + shift for line in after.attempt_starts],
                      before.attempt_ends + [line + shift for line in after.attempt_ends],
                      before.report_lines + [line + shift for line in after.report_lines],
                      before.checkpoints, [(moved[i], p) for i, p in after.awaiting if i in moved],
                      before.lead if before.lead is not None else after.lead)
