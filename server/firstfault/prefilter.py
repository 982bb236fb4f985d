"""A cheap first pass in front of the full automaton: most log lines hold no literal, and the full automaton pays
for every character. pyahocorasick's cost per character grows with the fan-out of the node it stands on, and the
root of an automaton of several hundred literals has one child per distinct first character. The prefilter maps a
few characters that are rare in logs ("anchors") to one marker character and holds, for each literal, its suffix
from an anchor on: every word starts with the marker, its root has one child, and it runs near pyahocorasick's
floor. A line it flags is then read by the full automaton exactly as before; a line holding a literal is always
flagged, because the mapping is the same for a literal and for the text that contains it."""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Iterator

import ahocorasick

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
    """`full`: the automaton of the literals themselves. A window that holds non-ASCII text is read by it directly,
    lower-cased as the matcher lower-cases: str.translate has a fast path only for ASCII text (random bytes decoded
    to U+FFFD took 60 ns a character), and lower() has one for all text."""

    def __init__(self, literals: Iterable[str], full: ahocorasick.Automaton):
        self.full = full
        literals = [lit for lit in set(literals) if lit]
        self.anchors = choose_anchors(literals)
        self.table = _table(self.anchors)
        self.automaton = ahocorasick.Automaton()
        for literal in literals:
            start = next(i for i, c in enumerate(_anchorable(literal)) if c in self.anchors)
            self.automaton.add_word(literal[start:].translate(self.table), None)
        self._empty = not literals
        if literals:
            self.automaton.make_automaton()

    def line_starts(self, text: str) -> Iterator[int]:
        """The offset of each line of `text` that may hold a literal, in order, each once."""
        if self._empty:
            return
        begin = 0
        while begin < len(text):
            end = text.find("\n", min(begin + WINDOW, len(text)))  # a window ends at a line's end: no literal spans
            end = len(text) if end < 0 else end + 1
            window = text[begin:end]
            flagged = (self._flagged(self.automaton, window.translate(self.table)) if window.isascii()
                       else self._flagged(self.full, ascii_lower(window)))
            yield from (begin + start for start in flagged)
            begin = end

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
