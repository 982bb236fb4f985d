"""Documents as the editor counts their lines. pygls splits lines with str.splitlines, which also breaks at
U+2028, U+2029, U+0085, form feeds and other separators; VS Code (and the LSP spec) end a line only at \\n, \\r\\n
or \\r. A log that holds one of those characters would drift out of step with the editor after the first
incremental edit, and every position after it would be wrong."""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from itertools import accumulate, islice
from typing import Any, Sequence

from lsprotocol import types
from pygls.workspace import TextDocument, Workspace

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_BREAK = re.compile(r"\r\n|\r|\n")
_PIECE = 1 << 20  # split a piece at a time: a whole 50 MB log would make half a million strings at once


def editor_lines(source: str) -> tuple[str, ...]:
    """Lines with their endings, split where the editor splits them."""
    return tuple(_LINE.findall(source))


def line_starts(source: str, base: int = 0) -> array:
    """The offset where each line after a break begins (base + the break's end). Without a \r, from the lengths of
    the lines str.split gives, a piece at a time (a 50 MB log: 0.45 s by regex, 0.10 s so)."""
    if "\r" in source:
        return array("q", (base + m.end() for m in _BREAK.finditer(source)))
    starts = array("q")
    for at in range(0, len(source), _PIECE):
        lines = source[at:at + _PIECE].split("\n")
        starts.extend(islice(accumulate((len(line) + 1 for line in lines[:-1]), initial=base + at), 1, None))
    return starts


def count_breaks(text: str) -> int:
    return text.count("\n") if "\r" not in text else sum(1 for _ in _BREAK.finditer(text))


class LogDocument(TextDocument):
    """Line starts are indexed once, then kept up to date by each edit: an edit costs the text it touches and one
    copy of the source, not a split of the whole document (a 10 MB log split per keystroke took 100 ms)."""

    _starts: array | None = None
    # Text appended at the end since the source was last joined: a live log's appends cost their own length, and the
    # buffer is copied once when something reads it (an analysis, a hover past the joined part), not once per edit.
    _tail: list[str] | None = None
    _tail_length = 0
    # Line breaks in the source while the line index is not built: the first append after opening a log does not
    # build it (0.14 s on 50 MB) but counts the breaks (0.02 s); a hover or an edit before the end builds it.
    _breaks: int | None = None
    # (the version an edit was made on, the first line it touched, 1-based): what changed since an analysis
    _edits: list | None = None
    _edits_known_from: int | None = None  # older edits were let go: nothing is known before this version
    MAX_EDITS = 10_000

    @property
    def source(self) -> str:
        joined = super().source
        if self._tail:
            self._source = joined = "".join([joined, *self._tail])
            self._tail, self._tail_length = None, 0
        return joined

    def parts(self) -> tuple[str, ...]:
        """The source as the text joined so far and what was appended since, unjoined: a rescan that reads only the
        end does not copy the whole buffer (50 ms on 50 MB)."""
        return (super().source, *(self._tail or ()))

    @property
    def lines(self) -> Sequence[str]:
        return editor_lines(self.source)

    def starts(self) -> array:
        """Offsets of every line's first character, line 0 first; a final break starts an empty last line."""
        if self._starts is None:
            self._starts = array("q", [0]) + line_starts(self.source)
        return self._starts

    def line_count(self) -> int:
        """len(starts()), without building the index for it."""
        if self._starts is not None:
            return len(self._starts)
        if self._breaks is None:
            self._breaks = count_breaks(self.source)
        return self._breaks + 1

    def line_text(self, line: int) -> str | None:
        starts = self.starts()
        if not 0 <= line < len(starts):
            return None
        joined = super().source  # a line before the appended tail is read without joining it
        end = starts[line + 1] if line + 1 < len(starts) else len(joined) + self._tail_length
        return (joined if end <= len(joined) else self.source)[starts[line]:end].rstrip("\r\n")

    def first_changed_line(self, since: int) -> int | None:
        """The first line (1-based) edited after version `since`; a line past the end when nothing was; None when
        the edits since then are no longer known."""
        edits = self._edits or []
        if self._edits_known_from is not None and since < self._edits_known_from:
            return None
        touched = [line for version, line in edits if version is not None and version >= since]
        return min(touched) if touched else self.line_count() + 1

    def _record(self, line: int) -> None:
        if self._edits is None:
            self._edits = []
        self._edits.append((self.version, line))
        if len(self._edits) > self.MAX_EDITS:
            dropped = self._edits[: len(self._edits) // 2]
            self._edits = self._edits[len(dropped):]
            self._edits_known_from = max(v for v, _ in dropped if v is not None) + 1 if any(
                v is not None for v, _ in dropped) else None

    def _apply_incremental_change(self, change: types.TextDocumentContentChangePartial) -> None:
        """The edit applied by offsets: one slice of the source, and the line index mended around it."""
        self._record(change.range.start.line + 1)
        if self._appends_at_end(change):
            if self._starts is not None:
                self._starts.extend(line_starts(change.text, len(super().source) + self._tail_length))
            else:
                self._breaks = self.line_count() - 1 + change.text.count("\n")
            self._tail = self._tail or []
            self._tail.append(change.text)
            self._tail_length += len(change.text)
            return
        starts, source = self.starts(), self.source

        def offset(position: types.Position) -> int:
            if position.line >= len(starts):  # past the end
                return len(source)
            text = self.line_text(position.line) or ""
            if position.character >= len(text.encode("utf-16-le")) // 2:
                return starts[position.line] + len(text)  # past the end: the line's end, as the LSP says
            column = self._position_codec.position_from_client_units(
                [text], types.Position(0, position.character)).character
            return starts[position.line] + min(column, len(text))

        begin = offset(change.range.start)
        end = max(begin, offset(change.range.end))
        self._source = source[:begin] + change.text + source[end:]
        new_end = begin + len(change.text)
        # Breaks ending at or before w0 cannot change: the characters before w0 and at w0 are untouched. Breaks
        # ending after end + 1 (old offsets) only move. Those between are found again in the new text.
        w0 = starts[max(0, bisect_right(starts, max(begin - 1, 0)) - 1)]
        kept = bisect_right(starts, w0)
        moved = bisect_right(starts, end + 1)
        window = self._source[w0:min(len(self._source), new_end + 3)]
        middle = [s for s in line_starts(window, w0) if s <= new_end + 1]
        delta = len(change.text) - (end - begin)
        self._starts = starts[:kept] + array("q", middle) + array("q", (s + delta for s in starts[moved:]))

    def _appends_at_end(self, change: types.TextDocumentContentChangePartial) -> bool:
        """Text inserted after the final line break (a \r in it could join a \r\n across the seam: not here)."""
        start, end = change.range.start, change.range.end
        if not change.text or "\r" in change.text or (start.line, start.character) != (end.line, end.character):
            return False
        last = self._tail[-1] if self._tail else super().source
        return last.endswith("\n") and start.line >= self.line_count() - 1

    def _apply_full_change(self, change: types.TextDocumentContentChangeWholeDocument) -> None:
        self._record(1)
        self._tail, self._tail_length = None, 0
        self._starts, self._breaks = None, None
        super()._apply_full_change(change)


class LogWorkspace(Workspace):
    def _create_text_document(self, doc_uri: str, source: str | None = None, version: int | None = None,
                              language_id: str | None = None) -> TextDocument:
        return LogDocument(doc_uri, source=source, version=version, language_id=language_id,
                           sync_kind=self._sync_kind, position_codec=self._position_codec)


def use_editor_lines(workspace: Any) -> None:
    """Make the workspace pygls created at `initialize` create LogDocuments (it has no factory to pass)."""
    if isinstance(workspace, Workspace) and not isinstance(workspace, LogWorkspace):
        workspace.__class__ = LogWorkspace
