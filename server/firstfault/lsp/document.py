"""Documents as the editor counts their lines. pygls splits lines with str.splitlines, which also breaks at
U+2028, U+2029, U+0085, form feeds and other separators; VS Code (and the LSP spec) end a line only at \\n, \\r\\n
or \\r. A log that holds one of those characters would drift out of step with the editor after the first
incremental edit, and every position after it would be wrong."""

from __future__ import annotations

import re
from itertools import accumulate
from typing import Any, Sequence

from lsprotocol import types
from pygls.workspace import TextDocument, Workspace

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def editor_lines(source: str) -> tuple[str, ...]:
    """Lines with their endings, split where the editor splits them."""
    return tuple(_LINE.findall(source))


class LogDocument(TextDocument):
    @property
    def lines(self) -> Sequence[str]:
        return editor_lines(self.source)

    def _apply_incremental_change(self, change: types.TextDocumentContentChangePartial) -> None:
        """The edit applied by offsets: one slice of the source, not a rewrite line by line."""
        lines = self.lines
        starts = [0, *accumulate(map(len, lines))]

        def offset(position: types.Position) -> int:
            if position.line >= len(lines):  # the empty line after a final newline, or past the end
                return len(self.source)
            column = self._position_codec.position_from_client_units(lines, position).character
            return starts[position.line] + min(column, len(lines[position.line].rstrip("\r\n")))

        begin, end = offset(change.range.start), offset(change.range.end)
        self._source = self.source[:begin] + change.text + self.source[max(begin, end):]


class LogWorkspace(Workspace):
    def _create_text_document(self, doc_uri: str, source: str | None = None, version: int | None = None,
                              language_id: str | None = None) -> TextDocument:
        return LogDocument(doc_uri, source=source, version=version, language_id=language_id,
                           sync_kind=self._sync_kind, position_codec=self._position_codec)


def use_editor_lines(workspace: Any) -> None:
    """Make the workspace pygls created at `initialize` create LogDocuments (it has no factory to pass)."""
    if isinstance(workspace, Workspace) and not isinstance(workspace, LogWorkspace):
        workspace.__class__ = LogWorkspace
