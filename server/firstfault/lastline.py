"""Where a rank was last seen: the last line it printed, found after the verdict by reading the inputs again
(only for a rank the verdict says stopped responding or left, and only while that stays cheap)."""

from __future__ import annotations

from typing import Callable, Iterator, Sequence

import attrs

from firstfault.context import Source
from firstfault.reader import Chunk

# Reading a log again costs what reading it cost; past this size the summary line stays the location.
MAX_REREAD_BYTES = 256 * 2**20


@attrs.frozen
class Seen:
    input_index: int
    line: int
    text: str


def _prefixes(rank: int) -> tuple[str, ...]:
    """The per-line prefixes launchers put in front of a rank's output (see context._PREFIXES)."""
    return (f"[rank{rank}]", f"[default{rank}]:", f",{rank}]<stdout>:", f",{rank}]<stderr>:", f"[{rank}]<stdout>:",
            f"[{rank}]<stderr>:", f" rank={rank} pid=", f" TP{rank} pid=", f"_TP{rank} pid=", f"_TP{rank}_EP",
            f"[rank: {rank}]")


def last_seen(rank: int, inputs: Sequence[tuple[Callable[[], Iterator[Chunk]], int]],
              file_sources: Sequence[Source]) -> Seen | None:
    """The rank's last line: the last non-empty line of its own file (rank3.log), else the last line that carries
    its prefix in any input. `inputs` are (chunks, size) per input, in input order."""
    if sum(size for _, size in inputs) > MAX_REREAD_BYTES:
        return None
    own = [i for i, s in enumerate(file_sources) if s.rank == rank]
    if own:
        return _last(inputs[own[0]][0](), own[0], None)
    found = None
    for index, (chunks, _) in enumerate(inputs):
        found = _last(chunks(), index, _prefixes(rank)) or found
    return found


def _last(chunks: Iterator[Chunk], index: int, prefixes: tuple[str, ...] | None) -> Seen | None:
    found = None
    for chunk in chunks:
        text = chunk.text
        at = len(text.rstrip()) - 1 if prefixes is None else max(text.rfind(p) for p in prefixes)
        if at < 0:
            continue
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", start)
        found = Seen(index, chunk.first_line + text.count("\n", 0, start), text[start:end if end >= 0 else len(text)])
    return found
