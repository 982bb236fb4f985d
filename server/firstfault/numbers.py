"""Numbers read from a log are untrusted: a value past what is plausible is unknown, and no work is ever
proportional to a value (a 4,300-digit rank, or 'nranks 100000000', must not cost memory or raise)."""

from __future__ import annotations

MAX_RANK = 1_000_000  # ranks and world sizes: far above the largest jobs (~100k GPUs)
# World sizes expand into a set of every rank (who is silent?): the largest jobs have ~100k ranks.
MAX_WORLD = 100_000
MAX_PID = 2**32
MAX_COUNTER = 10**15  # sequence numbers, exit codes, sizes


def bounded(text: str | None, limit: int = MAX_RANK) -> int | None:
    """The value of a decimal (optionally negative) number, or None when it is not one or exceeds `limit`."""
    if not text:
        return None
    digits = text[1:] if text[0] == "-" else text
    if not digits.isdigit() or not digits.isascii() or len(digits) > len(str(limit)):
        return None
    value = int(text)
    return value if abs(value) <= limit else None
