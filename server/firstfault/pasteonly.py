"""Patterns read only in pastes (Pattern.paste_only): their literal is too common for a large log's scan to pay for
(".cpp:" is on every c10 warning line), but in a small input the line they read may be the only evidence.

A paste is read once more by a matcher of these patterns alone, and its events join the scan's as if one matcher
had read every line: a catch-all (generic) reading of a line goes where another reading of it says more, whichever
matcher made it (matcher.outranked, Matcher.scan's rule for one line)."""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

from firstfault.context import Source
from firstfault.matcher import Matcher, ScanResult, outranked
from firstfault.reader import Chunk


def paste_only_events(matcher: Matcher, chunks: Iterable[Chunk], scan: ScanResult, input_index: int,
                      file_source: Source) -> bool:
    """Adds to `scan` what `matcher` (the paste-only patterns) reads in `chunks`; True when it changed anything
    (the caller then numbers the events again)."""
    if not matcher.patterns:
        return False
    read = {(e.line, e.pattern.id) for e in scan.events}
    found = [e for e in matcher.scan(chunks, scan.path, input_index, file_source).events
             if (e.line, e.pattern.id) not in read]
    if not found:
        return False
    readings = defaultdict(list)
    for e in [*scan.events, *found]:
        readings[e.line].append((e.pattern, (e.col_start, e.col_end)))
    kept, dropped = [], []
    for e in scan.events:
        (dropped if outranked(e.pattern, (e.col_start, e.col_end), readings[e.line]) else kept).append(e)
    added = [e for e in found if not outranked(e.pattern, (e.col_start, e.col_end), readings[e.line])]
    if not dropped and not added:
        return False
    scan.recount(added, dropped)
    scan.events[:] = sorted([*kept, *added], key=lambda e: e.line)  # stable: the line's own readings first
    return True
