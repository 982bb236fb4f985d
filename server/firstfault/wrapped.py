"""Lines a terminal or a web page wrapped: a message cut over two lines is read with both halves joined.

People paste what a terminal showed them, and a narrow terminal, `fold` or a forum cuts long lines: at a fixed
width, mid-word ("ProcessGroupNCCL'" / "s watchdog got stuck"), or at a space ("[Rank 0] Watchdog" / "caught
collective operation timeout"). A literal the cut falls inside is on neither line, and a message whose fields run on
("failed (exitcode: -9) local_rank: " / "0 (pid: 1801442)") loses them. In a paste (an input small enough to be
one), each long line is read joined with the next, both ways; a match that crosses the cut is an event of the first
line, and it replaces that line's own reading of the same pattern, which stopped at the cut, or the second line's,
which began at it (where the first line is as long as two others: a terminal's width).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from itertools import accumulate
from typing import Iterable

import attrs

from firstfault.context import Source
from firstfault.matcher import Event, Matcher, ScanResult
from firstfault.reader import Chunk, ascii_lower

# Inputs up to this size are read for wrapped lines: a paste, a selection, a short log.
PASTE_BYTES = 64 * 1024
# A line shorter than this was not cut by a terminal's or a page's width.
MIN_WRAPPED = 40


def paste_lines(chunks: Iterable[Chunk]) -> tuple[list[str], int]:
    """A small input's lines (escapes removed, as the matcher reads them) and the number of the first."""
    chunks = list(chunks)
    return ("".join(c.text for c in chunks).split("\n"), chunks[0].first_line) if chunks else ([], 1)


def wrapped_events(matcher: Matcher, lines: list[str], first: int, scan: ScanResult, input_index: int,
                   file_source: Source) -> bool:
    """Adds to `scan` the events of messages cut over two lines (`lines` from paste_lines, the first numbered
    `first`); True when it changed anything (the caller then numbers the events again)."""
    by_line: dict[tuple[int, str], int] = {(e.line, e.pattern.id): i for i, e in enumerate(scan.events)}
    # A line with a reading: the fields the cut moved to the next line may complete it.
    read = {e.line for e in scan.events}
    added: list[Event] = []
    replaced = False
    begun = _tails_begun(matcher, lines)
    widths = _cut_widths(lines)
    for n, (a, b) in enumerate(zip(lines, lines[1:])):
        if len(a.rstrip()) < MIN_WRAPPED or not b.strip():
            continue
        # A pattern whose end decides (`tail`) with its literal on the first line and no reading there: the cut may
        # have taken that end, which the join then holds.
        tails = {pid: i for pid, i in begun.get(n, {}).items() if (first + n, pid) not in by_line}
        for joined, left, right in _joins(a, b):
            crossing = _crossing(matcher, joined, left)
            if tails:
                crossing |= {pid for pid, i in tails.items() if matcher.reads(i, joined)}
            if first + n not in read and not crossing:
                continue
            events = matcher.read_line(joined, first + n, scan.path, input_index, file_source)
            across = [_on_first_line(e, len(a)) for e in events if e.col_start < left and e.col_end > right]
            took = False
            for event in across:
                key = (event.line, event.pattern.id)
                at = by_line.get(key)
                below = by_line.get((event.line + 1, event.pattern.id))
                if at is None and event.pattern.id in crossing and below is None:
                    added.append(event)
                elif at is not None and at >= 0 and len(event.captures) > len(scan.events[at].captures):
                    scan.events[at] = attrs.evolve(event, order=scan.events[at].order)
                    replaced = True
                elif (at is None and below is not None and below >= 0 and len(a) in widths
                      and _begins_at_cut(scan.events[below], b)):
                    # The second line's own reading began where a terminal's cut did: it read the message's tail
                    # alone (a library path's last part as the library). The message begins on the first line.
                    scan.recount([event], [scan.events[below]])
                    scan.events[below] = attrs.evolve(event, order=scan.events[below].order)
                    by_line[(event.line + 1, event.pattern.id)] = -1
                    replaced = True
                else:
                    continue
                by_line[key] = -1  # one reading per pattern and line
                took = True
            if took:  # else the other join may read what this one did not (a match that runs on across the cut)
                break
    if not added and not replaced:
        return False
    scan.recount(added)
    scan.events[:] = sorted([*scan.events, *added], key=lambda e: e.line)  # stable: a line's own readings first
    return True


def _joins(a: str, b: str) -> list[tuple[str, int, int]]:
    """The two ways a cut line reads joined: (text, end of the first line's part, start of the second's)."""
    cut_at_width = (a + b, len(a), len(a))
    kept = a.rstrip()
    at_space = (f"{kept} {b.lstrip()}", len(kept), len(kept) + 1)
    return [cut_at_width] if cut_at_width[0] == at_space[0] else [cut_at_width, at_space]


def _crossing(matcher: Matcher, joined: str, left: int) -> set[str]:
    """The patterns with a literal across the cut or near the second line's start: a new reading must need the
    second line for it (a regex's free tail running on into the next line is not evidence)."""
    start = max(0, left - matcher.longest_literal)
    found: set[str] = set()
    for end, indices in matcher.automaton.iter(ascii_lower(joined[start:left + matcher.longest_literal])):
        if start + end >= left:
            found.update(matcher.patterns[i].id for i in indices if i >= 0)
    return found


def _tails_begun(matcher: Matcher, lines: list[str]) -> dict[int, dict[str, int]]:
    """For each line (its index in `lines`) with a literal of a pattern whose end decides (Pattern.tail_decides),
    those patterns, id to index: what the regex needs after the literal is on the next line when a terminal cut the
    line there. One pass of the tail patterns' automaton over the whole paste."""
    automaton = matcher.tail_automaton
    if automaton is None:
        return {}
    starts = list(accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
    begun: dict[int, dict[str, int]] = {}
    for end, indices in automaton.iter(ascii_lower("\n".join(lines))):
        on = begun.setdefault(bisect_right(starts, end) - 1, {})
        on.update((matcher.patterns[i].id, i) for i in indices)
    return begun


def _cut_widths(lines: list[str]) -> set[int]:
    """The lengths at which a terminal cut this paste: one that three or more long lines share exactly."""
    counts = Counter(len(line) for line in lines if len(line) >= MIN_WRAPPED)
    return {length for length, n in counts.items() if n >= 3}


def _begins_at_cut(event: Event, line: str) -> bool:
    """The reading starts at the line's first character (past its indentation): where a terminal's cut left it."""
    return event.col_start <= len(line) - len(line.lstrip())


def _on_first_line(event: Event, length: int) -> Event:
    """The event points at its first line, from where the match starts to that line's end."""
    return attrs.evolve(event, col_end=min(event.col_end, length))
