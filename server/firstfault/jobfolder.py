"""A job's folder: which files are logs, torchelastic error files or Flight Recorder dumps, and whose they are.

Layouts recognised from the paths:
- torchrun --log-dir: <run id>/attempt_<n>/<local rank>/{stdout.log, stderr.log, error.json}; only the newest
  attempt is read (the earlier ones are listed as skipped);
- per-rank and per-host files (rank3.log, slurm-123-3.out with a `rank` in the name, node007.log, NCCL_DEBUG_FILE's
  %h.%p), and a host name in a parent folder's name;
- Flight Recorder dumps (pickle or JSON, the rank at the end of the name) and saved `ncclras` reports (text or
  JSON), anywhere in the tree.

Walking is bounded: symbolic links to folders are not followed (no loops), at most MAX_ENTRIES entries are
looked at and MAX_FILES files read; what was left out is counted by reason.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path
from typing import Callable

import attrs

from firstfault.context import Source, host_like, source_from_path
from firstfault.errorfile import looks_like_error_file
from firstfault.flightrecorder import looks_like_dump
from firstfault.ncclras import looks_like_ras
from firstfault.reader import InputError

MAX_ENTRIES = 200_000
MAX_FILES = 20_000
MAX_DEPTH = 24
HEAD_BYTES = 8192

LOG, ERROR_FILE, DUMP, RAS = "log", "error-file", "flight-recorder", "nccl-ras"
_KIND_NAMES = {LOG: ("log", "logs"), ERROR_FILE: ("torchelastic error file", "torchelastic error files"),
               DUMP: ("Flight Recorder dump", "Flight Recorder dumps"), RAS: ("NCCL RAS report", "NCCL RAS reports")}
_ATTEMPT = re.compile(r"^attempt_(\d+)$")
_NOT_LOGS = frozenset(
    ".py .pyc .so .o .a .pt .pth .bin .safetensors .ckpt .npy .npz .h5 .onnx .engine .png .jpg .jpeg .gif .svg "
    ".pdf .zip .tar .whl .parquet .arrow .tfrecord .db .sqlite .lock .pid .sock .nsys-rep .qdrep .sqsh".split())
_SKIP_DIRS = frozenset({".git", "__pycache__", "node_modules", ".venv", "venv", ".ipynb_checkpoints", "wandb"})


@attrs.frozen
class FolderFile:
    path: str
    kind: str
    source: Source
    attempt: int | None = None


@attrs.frozen
class Folder:
    root: str
    files: tuple[FolderFile, ...]
    skipped: tuple[tuple[str, str], ...]  # (reason, example path), one per reason
    skipped_counts: dict[str, int]

    def notes(self) -> list[str]:
        kinds = Counter(f.kind for f in self.files)
        read = ", ".join(f"{n:,} {_KIND_NAMES[k][n > 1]}" for k, n in sorted(kinds.items()))
        out = [f"{self.root}: read {read or 'nothing'}"]
        for reason, example in self.skipped:
            n = self.skipped_counts[reason]
            out.append(f"{self.root}: skipped {n:,} {'entry' if n == 1 else 'entries'}: {reason} (e.g. {example})")
        return out


def walk(root: str | Path, on_entry: Callable[[int, bool], None] | None = None) -> Folder:
    """Classify every file under root; raises InputError when root cannot be listed. on_entry(seen, finished)
    is called every 1,000 entries, and once at the end of a walk that long."""
    root = Path(root)
    try:
        os.scandir(root).close()
    except OSError as exc:
        raise InputError(f"{root}: cannot list this folder ({exc.strerror or exc})") from None
    found: list[FolderFile] = []
    skipped: dict[str, str] = {}
    counts: Counter[str] = Counter()
    seen = 0

    def skip(reason: str, path: str) -> None:
        skipped.setdefault(reason, path)
        counts[reason] += 1

    stack = [(root, 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            skip(f"cannot be listed ({exc.strerror or exc})", str(folder))
            continue
        subfolders = []
        for entry in entries:
            seen += 1
            if on_entry and seen % 1000 == 0:
                on_entry(seen, False)
            if seen > MAX_ENTRIES:
                skip(f"beyond the first {MAX_ENTRIES:,} entries", entry.path)
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name in _SKIP_DIRS or entry.name.startswith("."):
                        skip("hidden, cache or environment folders", entry.path)
                    elif depth + 1 > MAX_DEPTH:
                        skip(f"deeper than {MAX_DEPTH} folders", entry.path)
                    else:
                        subfolders.append((Path(entry.path), depth + 1))
                    continue
                if entry.is_symlink() and entry.is_dir():
                    skip("links to folders (not followed, so no loops)", entry.path)
                    continue
                if not entry.is_file():
                    skip("not regular files (sockets, pipes, devices, broken links)", entry.path)
                    continue
            except OSError as exc:
                skip(f"cannot be read ({exc.strerror or exc})", entry.path)
                continue
            if len(found) >= MAX_FILES:  # past the cap nothing is opened: the walk only counts
                skip(f"beyond the first {MAX_FILES:,} files read", entry.path)
                continue
            kind, why = _classify(Path(entry.path))
            if kind is None:
                skip(why, entry.path)
            else:
                relative = os.path.relpath(entry.path, root).replace(os.sep, "/")
                found.append(FolderFile(entry.path, kind, *_source_and_attempt(relative)))
        stack.extend(reversed(subfolders))  # depth first, in name order
    if on_entry and seen >= 1000:
        on_entry(seen, True)
    files, older = _newest_attempt(_numbered_ranks(found))
    for f in older:
        skip("from earlier torchrun attempts (the verdict is for the newest)", f.path)
    return Folder(str(root), tuple(sorted(files, key=lambda f: f.path)), tuple(skipped.items()), dict(counts))


def classify_file(path: str | Path) -> str:
    """The kind of a file named on the command line: an error file or a dump when its content says so."""
    kind, _ = _classify(Path(path), explicit=True)
    return kind or LOG


def _classify(path: Path, explicit: bool = False) -> tuple[str | None, str]:
    suffix = path.suffix.lower()
    if not explicit and suffix in _NOT_LOGS:
        return None, "not logs by their extension (code, checkpoints, images, archives)"
    try:
        with open(path, "rb") as f:
            head = f.read(HEAD_BYTES)
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror or exc})"
    if looks_like_dump(head):
        return DUMP, ""
    if looks_like_ras(head):
        return RAS, ""
    if suffix == ".json":
        if looks_like_error_file(head):
            return ERROR_FILE, ""
        return (LOG, "") if explicit else (None, "JSON files that are neither error files, dumps nor RAS reports")
    if not head and not explicit:
        return None, "empty files"
    if b"\x00" in head and not head.startswith(b"\x1f\x8b") and not explicit:
        return None, "binary files"
    return LOG, ""


def _source_and_attempt(relative: str) -> tuple[Source, int | None]:
    source, attempt = source_from_path(relative)
    if source.host is None:
        for part in reversed(relative.split("/")[:-1]):
            if host_like(part):
                source = attrs.evolve(source, host=part)
                break
    return source, attempt


_NUMBERED = re.compile(r"^(.*?)(\d+)((?:\.[A-Za-z]+)*)$")


def _numbered_ranks(files: list[FolderFile]) -> list[FolderFile]:
    """Logs named alike but for a number that runs 0, 1, ... N-1 in one folder (Slurm's %t in `-o %x-%j-%t.out`,
    worker-0.log, ...) are one per rank: the number is the rank, where nothing else gives one. A pid (%p) or a
    date never runs from 0 without a gap, so it is not taken for one."""
    groups: dict[tuple[str, str, str], list[tuple[int, int]]] = {}
    for i, f in enumerate(files):
        path = Path(f.path)
        unranked = f.source.rank is None and f.source.local_rank is None
        if f.kind == LOG and unranked and (m := _NUMBERED.match(path.name)):
            groups.setdefault((str(path.parent), m.group(1), m.group(3)), []).append((i, int(m.group(2))))
    out = list(files)
    for members in groups.values():
        numbers = sorted(n for _, n in members)
        if len(members) >= 2 and numbers == list(range(len(members))):
            for i, n in members:
                # A "host" read from the same name ("train-4242-1") was the task's name, not a machine's.
                host = out[i].source.host
                host = None if host and host in Path(out[i].path).name else host
                out[i] = attrs.evolve(out[i], source=attrs.evolve(out[i].source, rank=n, host=host))
    return out


def _newest_attempt(files: list[FolderFile]) -> tuple[list[FolderFile], list[FolderFile]]:
    """Files of older torchrun attempts, per run folder (the folder above attempt_<n>), set apart."""
    newest: dict[str, int] = {}
    for f in files:
        if f.attempt is not None:
            run = _run_folder(f.path)
            newest[run] = max(newest.get(run, -1), f.attempt)
    keep, older = [], []
    for f in files:
        (older if f.attempt is not None and f.attempt < newest[_run_folder(f.path)] else keep).append(f)
    return keep, older


def _run_folder(path: str) -> str:
    parts = Path(path).parts
    for i in range(len(parts) - 1, -1, -1):
        if _ATTEMPT.match(parts[i]):
            return str(Path(*parts[:i]))
    return ""
