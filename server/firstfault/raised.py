"""A traceback cut before its exception line: the `raise` its last frame shows says what was raised.

Python prints each frame's source line, and the frame that raised comes last. When a paste ends inside a
traceback (a selection that stopped early, a terminal that cut it), that source line is often all there is of the
error: `raise RuntimeError("Distributed package doesn't have NCCL built in")`. Read as the line Python would have
printed next, `RuntimeError: Distributed package doesn't have NCCL built in`, it is matched like one. Only where
nothing but Python 3.11's caret markers follows it: a traceback that goes on to its exception line is read there.
"""

from __future__ import annotations

import re

import attrs

from firstfault.context import Source
from firstfault.matcher import Matcher, ScanResult
from firstfault.roles import FAILURE_ROLES

# The source line of a raise with a string literal: "raise RuntimeError("message" ...", behind caret markers a paste
# may have glued on. The message ends at its closing quote, or at the line's end where the call goes on.
_MESSAGE = r"f?(?P<quote>[\"'])(?P<message>.*?)(?:(?P=quote)|$)"
_RAISE = re.compile(r"^[\s^~]*raise (?P<exception>[A-Za-z_][\w.]*)\(\s*" + _MESSAGE)
_FURNITURE = re.compile(r"^[\s^~]*$")  # blank, or Python 3.11's markers under the failing expression
# A raise that spans lines shows the line its message is on (Python 3.7's `"Cannot re-initialize CUDA in forked
# subprocess. " + msg` under the frame that raised it): a bare string literal right under the frame's header.
_LITERAL = re.compile(r"^[\s^~]*" + _MESSAGE)
_FRAME_HEADER = re.compile(r'\bFile "[^"]+", line \d+, in ')


def raised_events(matcher: Matcher, lines: list[str], first: int, scan: ScanResult, input_index: int,
                  file_source: Source) -> bool:
    """Adds to `scan` the failure a cut traceback's last `raise` names (`lines` from wrapped.paste_lines, the first
    numbered `first`); True when it added one (the caller then numbers the events again)."""
    last = len(lines) - 1
    while last >= 0 and _FURNITURE.match(lines[last]):
        last -= 1
    if last < 0:
        return False
    if m := _RAISE.match(lines[last]):
        printed = f"{m['exception']}: {m['message']}"
    elif last > 0 and _FRAME_HEADER.search(lines[last - 1]) and (m := _LITERAL.match(lines[last])):
        printed = m["message"]
    else:
        return False
    if not m["message"].strip():
        return False
    line_no = first + last
    if any(e.line == line_no and e.role in FAILURE_ROLES for e in scan.events):
        return False
    found = [attrs.evolve(e, text=lines[last], col_start=0, col_end=len(lines[last]))
             for e in matcher.read_line(printed, line_no, scan.path, input_index, file_source)
             if e.role in FAILURE_ROLES and not e.pattern.generic]
    if not found:
        return False
    scan.events.extend(found)
    scan.recount(found)
    return True
