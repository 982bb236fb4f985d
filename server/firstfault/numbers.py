"""Numbers read from a log are untrusted: a value past what is plausible is unknown, and no work is ever
proportional to a value (a 4,300-digit rank, or 'nranks 100000000', must not cost memory or raise)."""

from __future__ import annotations

MAX_RANK = 1_000_000  # ranks and world sizes: far above the largest jobs (~100k GPUs)
# World sizes expand into a set of every rank (who is silent?): the largest jobs have ~100k ranks.
MAX_WORLD = 100_000
MAX_PID = 2**32
MAX_COUNTER = 10**15  # sequence numbers, exit codes, sizes


_DIGITS: dict[int, int] = {}  # limit -> its number of digits: a longer number exceeds it, and is not parsed


def bounded(text: str | None, limit: int = MAX_RANK) -> int | None:
    """The value of a decimal (optionally negative) number, or None when it is not one or exceeds `limit`."""
    if not text:
        return None
    digits = text[1:] if text[0] == "-" else text
    if (width := _DIGITS.get(limit)) is None:
        width = _DIGITS[limit] = len(str(limit))
    if len(digits) > width or not digits.isdigit() or not digits.isascii():
        return None
    value = int(text)
    return value if abs(value) <= limit else None


def single_gap(task_list: str) -> int | None:
    """The one task missing between the lowest and highest of a list of ranges ('0-57,59-63' -> 58), or None when
    none or several are missing, the list has no range (cyclic task layouts print bare lists with gaps everywhere),
    or a value is implausible."""
    spans = []
    for part in task_list.strip("[]").split(","):
        low, _, high = part.partition("-")
        a, b = bounded(low), bounded(high or low)
        if a is None or b is None or a > b:
            return None
        spans.append((a, b))
    if len(spans) < 2 or not any(a < b for a, b in spans):
        return None
    spans.sort()
    pairs = [(end, start) for (_, end), (start, _) in zip(spans, spans[1:])]
    if any(start <= end for end, start in pairs):
        return None
    holes = [(end + 1, start - end - 1) for end, start in pairs if start > end + 1]
    return holes[0][0] if len(holes) == 1 and holes[0][1] == 1 else None


def missing_from(ready: str) -> int | None:
    """The one rank a comma-separated list of ready ranks leaves out below its highest ('0, 1, 3, 2, 5, 4, 7' -> 6,
    '1' -> 0; ranks are numbered densely from 0, so it exists and is missing); None when none or several are missing
    or a value is implausible. Ranks above the highest listed cannot be told from the list."""
    ranks = [bounded(part.strip()) for part in ready.split(",")]
    if any(r is None for r in ranks) or len(set(ranks)) != len(ranks):
        return None
    holes = set(range(max(ranks) + 1)) - set(ranks)
    return holes.pop() if len(holes) == 1 else None
