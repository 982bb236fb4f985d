"""Flight Recorder dumps: every rank's last collectives, lined up across ranks to name the one that diverged.

PyTorch records each process group's collectives in a ring buffer (TORCH_FR_BUFFER_SIZE, formerly
TORCH_NCCL_TRACE_BUFFER_SIZE) and writes it per rank when the watchdog fires (TORCH_NCCL_DUMP_ON_TIMEOUT, to
TORCH_NCCL_DEBUG_INFO_TEMP_FILE<rank>, default /tmp/nccl_trace_rank_<rank>) or when asked
(torch._C._distributed_c10d._dump_fr_trace / _dump_fr_trace_json). A dump is a pickle (or JSON) of plain
containers: {"version", "pg_config", "pg_status", "entries": [{"collective_seq_id", "profiling_name",
"process_group", "input_sizes", "output_sizes", "input_dtypes", "output_dtypes", "state", "is_p2p", ...}]};
NCCL dumps also carry "rank". PyTorch's analyser (torch/distributed/flight_recorder, `fr_trace`) lines the
entries up per process group and sequence number; `analyse` does the same for the two findings that name a
rank, and words them as fr_trace's log does (components/utils.py error_analysis, types.py EntryState.log),
so the library's fr_trace patterns read them exactly as they read fr_trace's own output.

The pickle is read by an unpickler that refuses every global: no class is looked up and no callable is ever
run, so a dump can build only dicts, lists, tuples, strings, numbers, booleans and None.
"""

from __future__ import annotations

import io
import json
import pickle
import re
from collections import Counter
from pathlib import Path

import attrs

from firstfault.numbers import bounded
from firstfault.reader import InputError, read_whole

MAX_DUMP_BYTES = 256 * 1024 * 1024
# What a dump file starts with: a pickle's PROTO opcode (protocol 2 to 5), or a JSON object.
PICKLE_MAGIC = tuple(bytes([0x80, p]) for p in range(2, 6))
_RANK_SUFFIX = re.compile(r"(\d+)(?:\.json|\.pkl|\.pickle)?$")


class _PlainUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        raise pickle.UnpicklingError(f"it asks for {module}.{name}; a Flight Recorder dump holds only plain data")

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("it refers to persistent objects; a Flight Recorder dump holds only plain data")


@attrs.frozen
class Entry:
    seq: int
    name: str  # profiling_name, e.g. "nccl:all_reduce"
    group: str  # the process group's name
    group_desc: str
    input_sizes: str
    output_sizes: str
    dtypes: str
    state: str


@attrs.frozen
class Dump:
    path: str
    rank: int
    version: str
    entries: tuple[Entry, ...]  # collectives only (point-to-point entries have no collective_seq_id to match)
    group_ranks: dict[str, tuple[int, ...]]


def looks_like_dump(head: bytes) -> bool:
    """A pickle, or a JSON dump: its keys come sorted, so "entries" and the first entry's "collective_seq_id" are
    near the start while "pg_config" can lie past any head (a 200-entry gloo dump puts it at byte 93,130)."""
    return head.startswith(PICKLE_MAGIC) or (head.lstrip().startswith(b"{") and b'"entries"' in head
                                             and b'"collective_seq_id"' in head)


def dump_prefix(path: str | Path) -> str:
    """The file name without the rank at its end (nccl_trace_rank_3 -> nccl_trace_rank_), as fr_trace's --prefix."""
    name = Path(path).name
    m = _RANK_SUFFIX.search(name)
    return name[:m.start()] if m else name


def load_dump(path: str | Path) -> Dump:
    """Raises InputError for a file that is not a readable dump; nothing in it is ever executed."""
    raw = read_whole(path, MAX_DUMP_BYTES, "a Flight Recorder dump")
    if not raw:
        raise InputError(f"{path}: empty (the rank was killed while writing its dump?)")
    try:
        if raw.startswith(PICKLE_MAGIC):
            data = _PlainUnpickler(io.BytesIO(raw)).load()
        else:
            data = json.loads(raw.decode("utf-8", "replace"))
    except Exception as exc:  # noqa: BLE001 - hostile bytes can fail in any way the parsers know
        raise InputError(f"{path}: not a readable Flight Recorder dump ({type(exc).__name__}: {str(exc)[:200]})") \
            from None
    return _dump(data, str(path))


def _dump(data: object, path: str) -> Dump:
    if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
        raise InputError(f"{path}: no \"entries\" list; not a Flight Recorder dump")
    rank = _int(data.get("rank"))
    if rank is None and (m := _RANK_SUFFIX.search(Path(path).name)):
        rank = bounded(m.group(1))
    if rank is None:
        raise InputError(f"{path}: the dump names no rank, and its file name does not end in one")
    entries = tuple(e for raw in data["entries"] if (e := _entry(raw)) is not None)
    config = data.get("pg_config")
    groups = {}
    if isinstance(config, dict):
        for key, value in config.items():
            if isinstance(value, dict) and (ranks := _ranks(value.get("ranks"))):
                groups[str(value.get("name") or key)] = ranks
    return Dump(path, rank, str(data.get("version", "")), entries, groups)


def _entry(raw: object) -> Entry | None:
    if not isinstance(raw, dict) or raw.get("is_p2p") or (seq := _int(raw.get("collective_seq_id"))) is None:
        return None
    group = raw.get("process_group")
    name, desc = (str(group[0]), str(group[1])) if isinstance(group, (list, tuple)) and len(group) == 2 else ("", "")
    return Entry(seq, str(raw.get("profiling_name", "")), name, desc, _plain(raw.get("input_sizes")),
                 _plain(raw.get("output_sizes")),
                 f"{_plain(raw.get('input_dtypes'))}/{_plain(raw.get('output_dtypes'))}", str(raw.get("state", "")))


def _plain(value: object) -> str:
    """Sizes as fr_trace prints them: [[1024]]."""
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_plain(v) for v in value) + "]"
    return repr(value) if isinstance(value, str) else str(value)


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 <= value < 2**63 else None
    if isinstance(value, str) and value.isdigit() and len(value) < 19:
        return int(value)
    return None


def _ranks(value: object) -> tuple[int, ...]:
    """pg_config's "ranks": a string like "[0, 1, 2]" (or a list)."""
    items = re.findall(r"\d+", value) if isinstance(value, str) else value if isinstance(value, list) else []
    return tuple(r for x in items if (r := _int(x)) is not None)


@attrs.frozen
class Finding:
    """One divergence, worded as fr_trace words it, and the rank it names (None when it cannot name one)."""

    lines: tuple[str, ...]
    rank: int | None
    dump: str  # the path of the dump that shows it best: the named rank's, else the first


def analyse(dumps: list[Dump]) -> list[Finding]:
    """The first collective, per process group, that not every rank entered, or that ranks entered differently."""
    findings = []
    for group, by_rank in _by_group(dumps).items():
        if len(by_rank) < 2:
            continue
        paths = {d.rank: d.path for d in dumps}
        seqs = sorted({seq for entries in by_rank.values() for seq in entries})
        for seq in seqs:
            if finding := _compare(seq, by_rank, paths):
                findings.append(finding)
                break
    return findings


def _by_group(dumps: list[Dump]) -> dict[str, dict[int, dict[int, Entry]]]:
    groups: dict[str, dict[int, dict[int, Entry]]] = {}
    for dump in sorted(dumps, key=lambda d: d.rank):
        per_rank = {}
        for entry in dump.entries:
            per_rank.setdefault(entry.group, {})[entry.seq] = entry
        for group, entries in per_rank.items():
            groups.setdefault(group, {})[dump.rank] = entries
        # A rank of a group whose dump holds no entry of it at all still counts: it entered none of them.
        for name, ranks in dump.group_ranks.items():
            if dump.rank in ranks and name in groups:
                groups[name].setdefault(dump.rank, {})
    return groups


def _compare(seq: int, by_rank: dict[int, dict[int, Entry]], paths: dict[int, str]) -> Finding | None:
    present = {r: e[seq] for r, e in by_rank.items() if seq in e}
    # A ring buffer forgets old entries: only a rank whose newest entry is older than seq never reached it.
    missing = sorted(r for r, e in by_rank.items() if seq not in e and (not e or max(e) < seq))
    sample = present[min(present)]
    if missing:
        return Finding((f"Not all ranks joining collective, sequence number: {seq}",
                        *_entry_lines(sample, by_rank, missing=missing)),
                       missing[0] if len(missing) == 1 else None, paths[missing[0]])
    for field, wording in (("name", "collective type"), ("input_sizes", "input sizes"),
                           ("output_sizes", "output sizes"), ("dtypes", "dtypes"), ("state", "state")):
        values = Counter(getattr(e, field) for e in present.values())
        if len(values) < 2:
            continue
        (expected, count), (_, runner_up) = values.most_common(2)
        kind = {"name": "COLLECTIVE_TYPE_MISMATCH", "dtypes": "COLLECTIVE_DTYPE_MISMATCH",
                "state": "COLLECTIVE_STATE_MISMATCH"}.get(field, "SIZE_OR_SYNTAX_MISMATCH")
        if count == runner_up:
            # A tie (two ranks): nothing says which side is wrong. fr_trace blames whichever it compared second;
            # here each side is named from the other's point of view, so no single rank is taken as the culprit.
            first = min(present)
            expected = getattr(present[first], field)
            odd = sorted(r for r, e in present.items() if getattr(e, field) != expected)
            errors = (_culprits(odd, present, field, kind, wording, expected),
                      _culprits([first], present, field, kind, wording, getattr(present[odd[0]], field)))
            return Finding((f"Collective sequence number: {seq} has errors",
                            *_entry_lines(present[first], by_rank, errors=errors)), None, paths[first])
        odd = sorted(r for r, e in present.items() if getattr(e, field) != expected)
        reference = present[next(r for r in sorted(present) if r not in odd)]
        errors = (_culprits(odd, present, field, kind, wording, expected),)
        return Finding((f"Collective sequence number: {seq} has errors",
                        *_entry_lines(reference, by_rank, errors=errors)),
                       odd[0] if len(odd) == 1 else None, paths[odd[0]])
    return None


def _entry_lines(entry: Entry, by_rank: dict, missing: list[int] = (), errors: tuple[str, ...] = ()) -> list[str]:
    """The lines fr_trace's EntryState.log prints about the entry compared (internal record ids and stack
    frames left out)."""
    lines = [f"group info: {entry.group}:{entry.group_desc}", f"collective: {entry.name}"]
    if missing:
        lines.append(f"missing ranks: {{{', '.join(map(str, missing))}}}")
    lines += [f"input sizes: {entry.input_sizes}", f"output sizes: {entry.output_sizes}",
              f"world size: {len(by_rank)}", f"expected ranks: {{{', '.join(map(str, sorted(by_rank)))}}}",
              f"collective state: {entry.state}"]
    return lines + list(errors)


def _culprits(ranks: list[int], present: dict[int, Entry], field: str, kind: str, wording: str, expected: str) -> str:
    def shown(value: str) -> str:  # fr_trace names collective types without the backend: 'all_reduce'
        return value.rsplit(":", 1)[-1] if field == "name" else value

    return "error msg: " + ", ".join(
        f"Culprit rank {r}; Error type: {kind}, Expected {wording}: '{shown(expected)}' does not match found "
        f"{wording}: '{shown(getattr(present[r], field))}'" for r in ranks)
