"""NCCL RAS reports: what `ncclras` (NCCL 2.24+) prints about a job's communicators, as text or, from 2.28.7,
as JSON (`ncclras -f json`).

The sections that say a rank or process went away are DEAD (a process unreachable for about a minute) and
INCOMPLETE (a process, or a communicator's rank, that sent no data for this report); ERROR lists ranks that
reported an error; MISMATCH says ranks disagree (status, operation counts) without naming who is wrong. A line
like "Rank 21 -- GPU 5 managed by process 3487984 on node 172.16.64.213" means different things in each section,
so a report is read as a whole and its findings written in NCCL's own wordings that say what they mean
(src/ras/client_support.cc): the DEAD and INCOMPLETE headers, their process lines, and for missing ranks the
2.24 form "The missing rank(s): 21" that the library's patterns read. Ranks are communicator ranks: only those
of the job's widest communicator are taken for global ranks.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import attrs

from firstfault.reader import InputError, read_whole

MAX_REPORT_BYTES = 64 * 1024 * 1024
_COMM = re.compile(r"^#(\d+)-(\d+) \(([0-9a-f]+)\) ((?:INCOMPLETE|ERROR|MISMATCH)(?:,\w+)*)\s*$")
_RANK_LINE = re.compile(r"^\s+Rank (\d+)(?: reported [^-]+?| has [^-]+?)? --")
_MISSING_24 = re.compile(r"^\s+The missing ranks?: ([\d, ]+)")
_PROCESS = re.compile(r"^\s+Process (\d+) on node (\S+) managing GPUs? (.+?)\s*$")
_TABLE_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+(?:-\d+)?)\s+(\d+)\s+(\d+)\s+(\w+)\s+([\w,]+)\s*$")


@attrs.frozen
class Report:
    lines: tuple[str, ...]  # the findings, worded as ncclras words them
    source_lines: tuple[int, ...]  # for each, the report's line it comes from (1 for JSON)


def looks_like_ras(head: bytes) -> bool:
    text = head[:65536]
    return ((b"Communicators..." in text and b"Group     Comms" in text)
            or b"(unreachable via the RAS network)" in text
            or (b'"communicators"' in text and b'"missing_ranks_count"' in text))


def read_report(path: str | Path) -> Report:
    text = read_whole(path, MAX_REPORT_BYTES, "an NCCL RAS report").decode("utf-8", "replace")
    return _from_json(text, path) if text.lstrip().startswith("{") else _from_text(text)


def _job_processes(lines: list[str]) -> int | None:
    """The job's process count from the Job summary's totals row (consistent or not), when it is there."""
    for i, line in enumerate(lines[:-1]):
        if line.startswith("(total)"):
            values = [int(v) for v in re.findall(r"\d+", lines[i + 1])]
            if "per node" in line and len(values) == 5:
                return values[3]
            if line.split() == ["(total)", "(total)", "(total)"] and len(values) == 3:
                return values[1]
    return None


def _from_text(text: str) -> Report:
    out: list[tuple[str, int]] = []
    lines = text.splitlines()
    sizes = {}  # group number -> communicator size, from the table
    for line in lines:
        if m := _TABLE_ROW.match(line):
            sizes[int(m.group(1))] = int(m.group(5))
    # Communicator ranks are global ranks only in a communicator of the whole job.
    widest = _job_processes(lines) or max(sizes.values(), default=None)
    section, comm = None, None
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if stripped in ("DEAD", "INCOMPLETE", "TIMEOUT", "Errors", "Warnings"):
            section, comm = stripped, None
            continue
        if m := _COMM.match(line):
            section, comm = m.group(4).split(",")[0], int(m.group(1))
            out.append((stripped, number))
            continue
        if section in ("DEAD", "INCOMPLETE") and comm is None:
            if "considered dead" in line or "Missing communicator data" in line or _PROCESS.match(line):
                out.append((stripped, number))
        elif section == "INCOMPLETE" and comm is not None:
            if "Missing communicator data" in line:
                out.append((stripped, number))
            elif _MISSING_24.match(line):
                if widest is None or sizes.get(comm) == widest:
                    out.append((stripped, number))
            elif m := _RANK_LINE.match(line):
                if widest is None or sizes.get(comm) == widest:
                    out.append((f"The missing rank: {m.group(1)}", number))
                out.append((stripped, number))
        elif section == "ERROR" and comm is not None and stripped:
            out.append((stripped, number))
        elif section == "MISMATCH" and comm is not None and stripped and not _RANK_LINE.match(line):
            out.append((stripped, number))
    return Report(tuple(t for t, _ in out), tuple(n for _, n in out))


def _from_json(text: str, path: str | Path) -> Report:
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        # NCCL 2.28.7-2.28.9 wrote missing_ranks[] without the comma after "nvml_dev" (fixed in 2.29.2).
        try:
            data = json.loads(re.sub(r'("nvml_dev": -?\d+)(\s*\n\s*"status")', r"\1,\2", text))
        except (json.JSONDecodeError, RecursionError) as exc:
            where = f" at line {exc.lineno}" if isinstance(exc, json.JSONDecodeError) else ""
            raise InputError(f"{path}: not valid JSON{where}; not read as an NCCL RAS report") from None
    comms = data.get("communicators") if isinstance(data, dict) else None
    if not isinstance(comms, list):
        raise InputError(f"{path}: no \"communicators\" list; not an NCCL RAS report")
    sizes = [c.get("size") for c in comms if isinstance(c, dict) and isinstance(c.get("size"), int)]
    widest = max(sizes, default=None)
    out: list[str] = []
    for index, comm in enumerate(comms):
        if not isinstance(comm, dict):
            continue
        missing = [m for m in comm.get("missing_ranks") or [] if isinstance(m, dict) and isinstance(m.get("rank"), int)]
        if not missing:
            continue
        dead = [m for m in missing if isinstance(m.get("status"), dict) and m["status"].get("considered_dead") is True]
        if dead:
            out.append(f"{len(dead)} job process{'es are' if len(dead) > 1 else ' is'} considered dead "
                       "(unreachable via the RAS network)")
            out += [_process(m) for m in dead]
        out.append(f"#0-{index} ({str(comm.get('hash', '')).removeprefix('0x')}) INCOMPLETE")
        out.append(f"Missing communicator data from {len(missing)} rank{'s' if len(missing) > 1 else ''}")
        if comm.get("size") == widest:
            ranks = [m["rank"] for m in missing]
            out.append(f"The missing rank{'s' if len(ranks) > 1 else ''}: {', '.join(map(str, ranks))}")
        out += [f"Rank {m['rank']} -- GPU {m.get('cuda_dev')} managed by process {m.get('pid')} on node "
                f"{m.get('host')}" for m in missing]
    return Report(tuple(out), tuple(1 for _ in out))


def _process(missing: dict) -> str:
    return f"Process {missing.get('pid')} on node {missing.get('host')} managing GPU {missing.get('cuda_dev')}"
