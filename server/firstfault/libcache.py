"""The built-in library, parsed and checked once per content rather than at every start.

Parsing the signature files (~170 ms), compiling every regex (~110 ms) and running every example against its regex
(~50 ms) cost each start of the CLI and of the language server, yet the files change only on upgrade or while
someone edits them. A JSON file in the user's cache keeps, for each file whose checks all passed, its parsed tables
keyed by a hash of its bytes (salted with the loader's own source and Python's version, which decide what
passes). A file whose bytes differ is parsed and checked again; a regex from the cache is compiled the first time
a line needs it. JSON holds data only: nothing read from the cache is executed. The cache is optional: a missing,
unreadable, unwritable or damaged one only costs the time it saves. `firstfault signatures check` never uses it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

FORMAT = 1


def cache_path() -> Path:
    """$FIRSTFAULT_CACHE_DIR, else $XDG_CACHE_HOME/firstfault, else ~/.cache/firstfault; the file in it."""
    folder = os.environ.get("FIRSTFAULT_CACHE_DIR")
    if not folder:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        folder = os.path.join(base, "firstfault")
    return Path(folder) / "library.json"


def _salt() -> bytes:
    here = Path(__file__).resolve().parent
    digest = hashlib.sha256(f"{FORMAT}|{sys.version_info[:2]}".encode())
    for name in ("loader.py", "model.py", "frameworks.py"):
        digest.update((here / name).read_bytes())
    return digest.digest()


class ParsedCache:
    """Parsed tables of signature files that loaded without an error, keyed by the hash of their text."""

    def __init__(self, path: Path | None, entries: dict[str, Any]):
        self.path = path
        self._salt = _salt()
        self._stored = entries
        self._used: dict[str, Any] = {}
        self._changed = False

    @classmethod
    def open(cls) -> ParsedCache:
        try:
            path = cache_path()
        except RuntimeError:  # no home directory to find
            return cls(None, {})
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            stored = None
        entries = stored.get("entries") if isinstance(stored, dict) and stored.get("format") == FORMAT else None
        return cls(path, entries if isinstance(entries, dict) else {})

    def _key(self, text: str) -> str:
        return hashlib.sha256(self._salt + text.encode("utf-8", "surrogatepass")).hexdigest()

    def get(self, text: str) -> dict[str, Any] | None:
        key = self._key(text)
        data = self._stored.get(key)
        if not isinstance(data, dict):
            return None
        self._used[key] = data
        return data

    def put(self, text: str, data: dict[str, Any]) -> None:
        try:
            json.dumps(data)
        except (TypeError, ValueError):  # a TOML date or time: not worth caching
            return
        self._used[self._key(text)] = data
        self._changed = True

    def save(self) -> None:
        """Keep exactly the entries this load used (an upgrade's old entries go); a failed write is ignored."""
        if self.path is None or not (self._changed or self._used.keys() != self._stored.keys()):
            return
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps({"format": FORMAT, "entries": self._used}), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError:
            try:
                tmp.unlink(missing_ok=True)
            except OSError:  # the folder itself could not be made
                pass


class LazyRegex:
    """A regex that passed the loader's checks before: compiled on first use (most never meet a line)."""

    __slots__ = ("pattern", "_compiled")

    def __init__(self, source: str):
        self.pattern = source
        self._compiled: re.Pattern[str] | None = None

    def _get(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern)
        return self._compiled

    @property
    def compiled(self) -> re.Pattern[str]:
        return self._get()

    @property
    def groupindex(self) -> Any:
        return self._get().groupindex

    def search(self, text: str) -> re.Match[str] | None:
        return self._get().search(text)
