"""Text that every match of a regex contains, read from the regex itself: a line without it is passed over before
the regex runs. Python's re tries a regex that begins with a lookbehind or a character class at every position of
the line (about 10 us on a long NCCL line); `str.__contains__` rejects the line in a fraction of that.

Only what a match cannot do without is taken: a run of literal characters in the regex's sequence or in a group the
sequence requires, or, for a required alternation, one such text per alternative (a line must hold one of them).
Anything under a case-insensitive flag, a repetition, an optional group or a lookaround gives nothing, and a regex
this cannot read gets no guard.
"""

from __future__ import annotations

import re

try:
    import re._parser as _sre_parse  # Python 3.11+
    from re._constants import BRANCH, LITERAL, SRE_FLAG_IGNORECASE, SUBPATTERN
except ImportError:  # pragma: no cover - a Python whose re is laid out otherwise: no guards, same results
    _sre_parse = None

# Shorter runs reject too few lines to pay for the check.
MIN_GUARD = 3


def guard(regex: re.Pattern[str]) -> tuple[str, ...]:
    """Strings of which every match holds at least one; () when nothing is known."""
    if _sre_parse is None or regex.flags & re.IGNORECASE:
        return ()
    try:
        parsed = _sre_parse.parse(regex.pattern, regex.flags)
    except Exception:  # the regex compiled already; a parser that disagrees only costs the guard
        return ()
    return _sequence_guard(list(parsed))


def _sequence_guard(items: list) -> tuple[str, ...]:
    """The best of what a sequence must contain: its longest literal run, or what one of its groups or alternations
    must contain (any of the alternatives' guards); one string beats several, a longer one a shorter."""
    found = []
    if len(run := _longest_run(items)) >= MIN_GUARD:
        found.append((run,))
    for op, av in items:
        if op is SUBPATTERN and not av[1] & SRE_FLAG_IGNORECASE:
            found.append(_sequence_guard(list(av[3])))
        elif op is BRANCH:
            alternatives = [_sequence_guard(list(alternative)) for alternative in av[1]]
            if alternatives and all(alternatives):
                found.append(tuple(dict.fromkeys(text for a in alternatives for text in a)))
    return min((g for g in found if g), key=lambda g: (len(g), -min(map(len, g))), default=())


def _longest_run(items: list) -> str:
    best, current = "", []
    for op, av in items:
        if op is LITERAL:
            current.append(chr(av))
            continue
        best = max(best, "".join(current), key=len)
        current = []
    return max(best, "".join(current), key=len)
