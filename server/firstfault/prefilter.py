"""A cheap first pass in front of the full automaton: most log lines hold no literal, and the full automaton pays
for every character. pyahocorasick's cost per character grows with the fan-out of the node it stands on, and the
root of an automaton of several hundred literals has one child per distinct first character. The prefilter maps a
few characters that are rare in logs ("anchors") to one marker character and holds, for each literal, its suffix
from an anchor on: every word starts with the marker, its root has one child, and it runs near pyahocorasick's
floor. A line it flags is then read by the full automaton exactly as before; a line holding a literal is always
flagged, because the mapping is the same for a literal and for the text that contains it.

Where a Hyperscan wheel exists (Linux and Windows on x86-64, macOS), Hyperscan scans each window's bytes (UTF-8 where
it is not ASCII) for the literals themselves instead: on the 100 MiB synthetic log 0.05 s against 0.65 s for the
anchored automaton, and it flags only lines that hold a literal, saying which, so that the full automaton need not
read those lines again (a fifth of a hit-dense scan). The anchored automaton remains the path where it does not
(Linux on ARM)."""

from __future__ import annotations

import threading
from collections import Counter
from functools import cached_property
from typing import Iterable, Iterator

import ahocorasick

try:
    import hyperscan
except ImportError:  # no wheel for this platform: the anchored automaton does the job alone
    hyperscan = None

from firstfault.reader import ascii_lower

MARKER = "\x01"
# Printable ASCII from the most to the least frequent, lower-cased, in this project's real logs (the clean corpus,
# the realrun fixtures and the examples: 110 K characters); anything absent is rarer still.
_BY_FREQUENCY = " et0r1ani:cospdl.2u/f3-]4m[g6k5b_h7y8=9v,*w()^|'\"xz>+q<#j%{}!?`;&\\@~$"
# A shorter suffix flags lines by the thousand (5: 36 K of a 20 MB synthetic log, 6: none); literals shorter than it
# anchor at their first character.
MIN_SUFFIX = 6
# Windows this long keep pyahocorasick's working copy of the text in cache (a whole 50 MB text runs 2x slower).
WINDOW = 1 << 18
# Past a flagged line longer than this the scan starts again after it (a restart copies the window once more).
LONG_LINE = 1 << 12
# The characters other than ASCII whose lower case (reader.ascii_lower) is ASCII: a window holding one is read by the
# full automaton, lower-cased.
_LOWERS_TO_ASCII = ("\u0130", "\u212a")


def _rarity_cost(char: str) -> float:
    """Roughly a character's share of log text, after Zipf: the n-th most frequent is about 1/n of the first."""
    rank = _BY_FREQUENCY.find(char)
    return 1.0 / (rank + 1 if rank >= 0 else len(_BY_FREQUENCY) + 1)


def _anchorable(literal: str) -> str:
    """The literal's characters that can start its suffix: those with at least MIN_SUFFIX characters from them on."""
    return literal[:len(literal) - min(MIN_SUFFIX, len(literal)) + 1]


def choose_anchors(literals: Iterable[str]) -> frozenset[str]:
    """A set of characters that every literal holds at a position with a long enough suffix after it: chosen
    greedily for the least marker traffic per literal covered, pruned (an anchor whose literals the others cover
    goes, the most frequent first), then improved (an anchor whose remaining literals rarer characters can cover for
    less is swapped for them). Every anchor turns that character into the marker in every word, so one too many (a
    common letter the greedy took early, before the short literals forced others) made most lines of a log look
    like a hit."""
    anchorable = {lit: set(_anchorable(lit)) for lit in literals}
    anchors = _without_redundant(_greedy_cover(list(anchorable.values())) or set(), anchorable)
    improved = True
    while improved:
        improved = False
        for char in sorted(anchors, key=_rarity_cost, reverse=True):
            rest = anchors - {char}
            replacement = _greedy_cover([chars - {char} for chars in anchorable.values() if not chars & rest])
            if replacement is not None and sum(map(_rarity_cost, replacement)) < _rarity_cost(char):
                anchors = _without_redundant(rest | replacement, anchorable)
                improved = True  # each swap lowers the total cost, so this ends
                break
    return frozenset(anchors)


def _greedy_cover(needs: list[set[str]]) -> set[str] | None:
    """Characters that hit every set, the cheapest per set covered first; None when a set has none."""
    chosen: set[str] = set()
    while needs:
        if not all(needs):
            return None
        covers = Counter(c for chars in needs for c in chars)
        best = min(sorted(covers), key=lambda c: _rarity_cost(c) / covers[c])
        chosen.add(best)
        needs = [chars for chars in needs if best not in chars]
    return chosen


def _without_redundant(anchors: set[str], anchorable: dict[str, set[str]]) -> set[str]:
    """An anchor whose literals the others cover goes, the most frequent first."""
    for char in sorted(anchors, key=_rarity_cost, reverse=True):
        rest = anchors - {char}
        if all(chars & rest for chars in anchorable.values()):
            anchors = rest
    return anchors


def _table(anchors: frozenset[str]) -> dict[int, str]:
    """ASCII lower-cased as the matcher lower-cases it (reader.ascii_lower), then every anchor made the marker. Only
    ASCII windows are translated: the two non-ASCII characters whose lower case is ASCII (U+0130, U+212A) are in
    windows the full automaton reads."""
    lower = {c: c for c in map(chr, range(128))}
    lower.update({chr(c): chr(c + 32) for c in range(ord("A"), ord("Z") + 1)})
    return {ord(c): MARKER if low in anchors else low for c, low in lower.items() if c != low or low in anchors}


class Prefilter:
    """`full`: the automaton of the literals themselves. Without Hyperscan (or with U+0130 / U+212A in it) a window
    that holds non-ASCII text is read by it directly, lower-cased as the matcher lower-cases: str.translate has a fast
    path only for ASCII text (random bytes decoded to U+FFFD took 60 ns a character), and lower() has one for all
    text. `use_hyperscan`: False keeps to the anchored automaton (the tests run both paths)."""

    def __init__(self, literals: Iterable[str], full: ahocorasick.Automaton, use_hyperscan: bool = True):
        self.full = full
        self.literals = [lit for lit in set(literals) if lit]
        self._empty = not self.literals
        self.database = _database(self.literals) if use_hyperscan and not self._empty else None
        # Hyperscan reports which literal it found by its index in this list (see hits).
        self.hyperscan_literals = sorted(self.literals) if self.database is not None else []
        self._scratch = threading.local()  # Hyperscan's working memory, one per thread that scans

    @cached_property
    def anchors(self) -> frozenset[str]:
        return choose_anchors(self.literals)

    @cached_property
    def table(self) -> dict[int, str]:
        return _table(self.anchors)

    @cached_property
    def automaton(self) -> ahocorasick.Automaton:
        """The anchored automaton: for each literal, its suffix from an anchor on, translated."""
        automaton = ahocorasick.Automaton()
        for literal in self.literals:
            start = next(i for i, c in enumerate(_anchorable(literal)) if c in self.anchors)
            automaton.add_word(literal[start:].translate(self.table), None)
        if self.literals:
            automaton.make_automaton()
        return automaton

    def line_starts(self, text: str) -> Iterator[int]:
        """The offset of each line of `text` that may hold a literal, in order, each once."""
        return (start for start, _ in self.hits(text))

    def hits(self, text: str) -> Iterator[tuple[int, set[int] | None]]:
        """Each line of `text` that may hold a literal, in order, each once: its offset, and where Hyperscan read it,
        the indices (in hyperscan_literals) of every literal it holds; None where the line's literals are still to
        be found (the automaton paths, or a long line Hyperscan left before its end)."""
        if self._empty:
            return
        begin = 0
        while begin < len(text):
            end = text.find("\n", min(begin + WINDOW, len(text)))  # a window ends at a line's end: no literal spans
            end = len(text) if end < 0 else end + 1
            window = text[begin:end]
            if window.isascii():
                flagged = (self._flagged_bytes(window.encode("ascii")) if self.database is not None else
                           ((start, None) for start in self._flagged(self.automaton, window.translate(self.table))))
            elif self.database is not None and not any(char in window for char in _LOWERS_TO_ASCII):
                flagged = self._flagged_utf8(window)
            else:
                flagged = ((start, None) for start in self._flagged(self.full, ascii_lower(window)))
            yield from ((begin + start, found) for start, found in flagged)
            begin = end

    def _flagged_utf8(self, window: str) -> list[tuple[int, set[int] | None]]:
        """Hit lines (starts in characters) in a window with non-ASCII text, found in its UTF-8 bytes: a line start
        follows a line break, so the bytes before it decode to the characters before it."""
        data = window.encode("utf-8", "surrogatepass")
        starts, chars, done = [], 0, 0
        for start, found in self._flagged_bytes(data):
            chars += len(data[done:start].decode("utf-8", "surrogatepass"))
            done = start
            starts.append((chars, found))
        return starts

    def _flagged_bytes(self, data: bytes) -> list[tuple[int, set[int] | None]]:
        """Hit lines in a window's bytes, from the ends of Hyperscan's matches (reported in order of their end), with
        the literals found in each. In a long line the scan stops at its second hit and starts again after it, as in
        _flagged: that line's literals are then left to the automaton (None)."""
        scratch = getattr(self._scratch, "scratch", None)
        if scratch is None:
            scratch = self._scratch.scratch = hyperscan.Scratch(self.database)
        starts: dict[int, set[int] | None] = {}  # line start -> the literals found in it
        line = (-1, -1)  # the last flagged line: its start and the offset of its line break
        base = 0

        def on_match(literal: int, _start: int, end: int, _flags: int, _context: object) -> bool | None:
            nonlocal line
            end += base
            if not line[0] <= end <= line[1]:
                found = data.find(b"\n", end)
                line = (data.rfind(b"\n", 0, end) + 1, len(data) if found < 0 else found)
            elif line[1] - end > LONG_LINE:
                starts[line[0]] = None
                return True  # stops the scan, to start again after this line
            ids = starts.setdefault(line[0], set())
            if ids is not None:
                ids.add(literal)
            return None

        view = memoryview(data)
        while base < len(data):
            try:
                self.database.scan(view[base:], match_event_handler=on_match, scratch=scratch)
                break
            except hyperscan.ScanTerminated:
                base = line[1] + 1
        return sorted(starts.items())

    @staticmethod
    def _flagged(automaton: ahocorasick.Automaton, window: str) -> Iterator[int]:
        """Line starts in a translated (or lower-cased) window. After a line is flagged its other hits are skipped: a
        run of anchor characters (a hostile line of 200 MB of 'x') can hit at every position."""
        position = 0
        while position < len(window):
            line_end = -1
            for stop, _ in automaton.iter(window, position):
                if stop < line_end:
                    continue
                yield window.rfind("\n", 0, stop) + 1
                line_end = window.find("\n", stop)
                if line_end < 0:
                    return  # the rest of the window is this line
                if line_end - stop > LONG_LINE:
                    position = line_end + 1  # start again after it rather than step through its hits
                    break
            else:
                return


def _database(literals: list[str]) -> "hyperscan.Database | None":
    """The literals' UTF-8 bytes compiled for Hyperscan, matched without regard to ASCII case, which is the case the
    matcher folds (reader.ascii_lower): other characters are compared as they are, on both paths. A window with text
    other than ASCII is searched in its UTF-8 bytes: a literal's bytes can only match at a character's boundary,
    since a multi-byte sequence's first byte differs from its continuation bytes. None without Hyperscan."""
    if hyperscan is None or not literals:
        return None
    encoded = [lit.encode("utf-8", "surrogatepass") for lit in sorted(literals)]
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    database.compile(expressions=encoded, ids=list(range(len(encoded))), elements=len(encoded),
                     flags=hyperscan.HS_FLAG_CASELESS, literal=True)
    return database
