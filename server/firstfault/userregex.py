"""Regexes from users' signature packs run in bounded time. A pack comes from another team or a download; a
pattern such as `(a|aa)+$` can take seconds or hours on one line with Python's `re`, and would stall the scan (and
the language server). The `regex` module takes a time budget per search; a pattern that runs out is switched off,
with a message naming its file and line. The built-in library stays on `re`: it is reviewed and tested."""

from __future__ import annotations

import re
from typing import Any

# A log line is matched in microseconds; a user pattern that needs more than this on one line is pathological.
SECONDS_PER_SEARCH = 0.05


class SlowPattern(Exception):
    """A user pattern ran out of its time on one line."""

    def __init__(self, origin: str):
        super().__init__(origin)
        self.origin = origin


class BoundedRegex:
    """What the matcher and loader use of a compiled pattern (`search`, `pattern`, `groupindex`), time-bounded."""

    def __init__(self, source: str, origin: str):
        import regex  # only when a user's pack is loaded: it costs every start otherwise

        try:
            self._compiled = regex.compile(source)
        except regex.error as exc:
            raise re.error(str(exc)) from None
        self.pattern = source
        self.groupindex = self._compiled.groupindex
        self.origin = origin

    def search(self, text: str) -> Any:
        try:
            return self._compiled.search(text, timeout=SECONDS_PER_SEARCH)
        except TimeoutError:
            raise SlowPattern(self.origin) from None
