"""Knowledge tables (environment variables, NCCL result codes, CUDA errors, exit codes, Xids) and
finding their terms in a line of a log or a launch script."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Iterator

import attrs

KNOWLEDGE_DIR = "knowledge"


@attrs.frozen
class Entry:
    table: str
    name: str
    meaning: str
    code: int | None = None
    message: str = ""
    default: str = ""
    when: str = ""
    distinguish: str = ""
    action: str = ""
    references: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()


@attrs.frozen
class Term:
    """A term found in a line: the columns it spans and the entry that explains it."""

    start: int
    end: int
    entry: Entry


_FIELDS = ("code", "message", "default", "when", "distinguish", "action")


class Knowledge:
    def __init__(self, entries: list[Entry], titles: dict[str, str]):
        self.entries = entries
        self.titles = titles
        self._by_name = {e.name.lower(): e for e in entries}
        self._by_code = {(e.table, e.code): e for e in entries if e.code is not None}
        self._messages = [(e.message.lower(), e) for e in entries
                          if e.message and e.table in ("nccl-result", "cuda-error") and e.code]

    @classmethod
    def load(cls, directory: Path) -> "Knowledge":
        entries, titles = [], {}
        for path in sorted(directory.glob("*.toml")):
            data = tomllib.loads(path.read_text(encoding="utf-8"))
            table = data["table"]
            titles[table] = data.get("title", table)
            sources = tuple(data.get("sources", ()))
            for raw in data.get("entry", ()):
                entries.append(Entry(table=table, name=raw["name"], meaning=raw["meaning"],
                                     references=tuple(raw.get("references", ())), sources=sources,
                                     **{k: raw[k] for k in _FIELDS if k in raw}))
        return cls(entries, titles)

    def get(self, name: str) -> Entry | None:
        return self._by_name.get(name.lower())

    def signal(self, number: int) -> Entry | None:
        entry = self._by_code.get(("exit", number))
        return entry if entry is not None and entry.name.startswith("SIG") else None

    def exit_status(self, status: int) -> Entry | None:
        """torchelastic's exitcode: negative is a signal; a shell's 128+N is signal N."""
        if status < 0:
            return self.signal(-status)
        return self.get(f"exit {status}") or (self.signal(status - 128) if status > 128 else None)

    def lookup(self, query: str) -> Entry | None:
        """The entry for what a person types: a name (NCCL_DEBUG, ncclSystemError, SIGKILL, kill), a signal by
        number (`signal 9`, `sig 11`), an exit status (`137`, `-9`, `exit code 139`), an Xid (`xid79`,
        `Xid 79`), or a line that contains one of those."""
        text = " ".join(query.split())
        low = text.lower()
        if entry := self.get(text):
            return entry
        if m := re.fullmatch(r"xid\s*:?\s*(\d+)", low):
            return self._by_code.get(("xid", int(m.group(1))))
        if m := re.fullmatch(r"sig(?:nal)?\s*(\d+)", low):
            return self.signal(int(m.group(1)))
        if m := re.fullmatch(r"(?:(?:exit\s*code|exitcode|exit\s*status|exit|status|return\s*code|rc)\s*:?\s*)?"
                             r"(-?\d{1,4})", low):
            return self.exit_status(int(m.group(1)))
        if re.fullmatch(r"[a-z]{3,6}", low) and (entry := self.get(f"SIG{low}")):
            return entry
        return next((t.entry for t in self.terms(text)), None)

    def names(self) -> list[str]:
        return [e.name for e in self.entries]

    def terms(self, line: str) -> Iterator[Term]:
        for m in _NAME.finditer(line):
            if entry := self.get(m.group(0)):
                yield Term(m.start(), m.end(), entry)
        for m in _XID.finditer(line):
            if entry := self._by_code.get(("xid", int(m.group(1)))):
                yield Term(m.start(), m.end(), entry)
        for m in _STATUS.finditer(line):
            if entry := self.exit_status(int(m.group("status"))):
                yield Term(m.start(), m.end(), entry)
        for m in _SIGNAL_NUMBER.finditer(line):
            if entry := self.signal(int(m.group(1))):
                yield Term(m.start(), m.end(), entry)
        lowered = line.lower()
        for message, entry in self._messages:
            start = lowered.find(message)
            if start >= 0:
                yield Term(start, start + len(message), entry)

    def terms_at(self, line: str, column: int) -> list[Term]:
        return [t for t in self.terms(line) if t.start <= column <= t.end]


_NAME = re.compile(r"\b(?:(?:NCCL|TORCH|TORCHELASTIC|GLOO|CUDA|PYTORCH|MASTER|FI)_[A-Z0-9_]+|RANK|WORLD_SIZE|LOCAL_RANK"
                   r"|nccl[A-Z]\w+|cudaError\w+|SIG[A-Z]{2,6})\b")
_XID = re.compile(r"\bXid\b(?: \([^)]*\))?:\s*(\d+)")
_STATUS = re.compile(r"\b(?:exitcode|exit code|exit status|exited with code)\s*:?\s*(?P<status>-?\d+)", re.IGNORECASE)
_SIGNAL_NUMBER = re.compile(r"\bSignal (\d+)\b")


def entry_parts(entry: Entry, titles: dict[str, str]) -> tuple[str, str, list[tuple[str, str]]]:
    """(name with its code, the table's title, [(label, text)]) in reading order; presenters add the markup."""
    name = entry.name + (f" ({entry.code})" if entry.code is not None and str(entry.code) not in entry.name else "")
    parts = [("", entry.meaning)]
    if entry.message:
        parts.append(("Printed as", entry.message))
    parts += [(label, value) for label, value in (("Default", entry.default), ("When to set it", entry.when),
                                                  ("What tells it apart", entry.distinguish), ("Action", entry.action))
              if value]
    if entry.references:
        parts.append(("Related failures", ", ".join(entry.references)))
    if entry.sources:
        parts.append(("Source", " · ".join(entry.sources)))
    return name, titles.get(entry.table, entry.table), parts


def render_entry(entry: Entry, titles: dict[str, str]) -> str:
    """Markdown, for a hover."""
    name, table, parts = entry_parts(entry, titles)
    out = [f"**{name}** — {table}"]
    for label, text in parts:
        if label == "Printed as":
            text = f"`{text}`"
        elif label == "Related failures":
            text = ", ".join(f"`{r}`" for r in entry.references)
        # The entry's own fields are emphasised; what it is printed as, relates to and comes from is not.
        out += ["", text if not label else f"{label}: {text}" if label in _PLAIN_LABELS else f"*{label}:* {text}"]
    return "\n".join(out)


_PLAIN_LABELS = ("Printed as", "Related failures", "Source")
