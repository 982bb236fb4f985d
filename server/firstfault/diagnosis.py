"""The verdict: ranked hypotheses with initiator, collateral, evidence, fix and verification."""

from __future__ import annotations

from typing import Any

import attrs

from firstfault.commands import VerifyCommand
from firstfault.matcher import Event
from firstfault.model import Reference
from firstfault.numbers import MAX_PID, bounded, missing_from, single_gap


BLOCK_LINES = 40  # how far apart two lines of one traceback or one error block may be


def rank_ranges(ranks: list[int]) -> str:
    """[0, 1, 2, 5] -> '0-2, 5'."""
    parts: list[list[int]] = []
    for r in ranks:
        if parts and r == parts[-1][1] + 1:
            parts[-1][1] = r
        else:
            parts.append([r, r])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in parts)


def clip(text: str, limit: int) -> str:
    """`text` stripped and, when longer than `limit`, cut at the last word boundary before it with '…'."""
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[:limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space >= limit // 2 else cut).rstrip(" ,;:") + "…"


@attrs.frozen
class Location:
    """A line in a log and who printed it; rank/host may be known without a line (a silent rank)."""

    rank: int | None
    host: str | None
    path: str | None
    line: int | None
    text: str | None
    col_start: int | None = None
    col_end: int | None = None
    reference_id: str | None = None
    pattern_id: str | None = None
    time: float | None = None  # seconds as the log's clock counts them (see context.parse_time)
    local_rank: int | None = None
    pid: int | None = None
    device: int | None = None  # the CUDA device index NCCL prints ("[3]"), never a rank

    @classmethod
    def of(cls, event: Event) -> "Location":
        s = event.source
        return cls(s.rank, s.host, event.path, event.line, event.text, event.col_start, event.col_end,
                   event.reference_id, event.pattern.id, event.time, s.local_rank, process_id(event), s.device)

    def to_json(self) -> dict[str, Any]:
        json = {"rank": self.rank, "host": self.host, "path": self.path, "line": self.line, "text": self.text,
                "column": self.col_start, "end_column": self.col_end, "reference": self.reference_id,
                "pattern": self.pattern_id, "time": self.time}
        json.update({k: v for k, v in (("local_rank", self.local_rank), ("pid", self.pid), ("device", self.device))
                     if v is not None})
        return json


def process_id(event: Event) -> int | None:
    """The pid of the process a line is about: its prefix's, else the one its text names (a launcher's
    "failed (exitcode: -9) local_rank: 2 (pid: 6957)")."""
    return event.source.pid if event.source.pid is not None else bounded(event.captures.get("pid"), MAX_PID)


TEARDOWN_STATUSES = frozenset({"Killed", "Terminated"})


def lend_rank(place: Location, others: list[Event]) -> tuple[int, int] | None:
    """A rank for a line that names none, from lines of the same failure nearby (same input, within a block's
    reach) when they all name one and the same rank — as the printer's rank, or as the rank a launcher names
    as the failing one (mpirun's "Process name: [[J,1],R]"): (rank, the nearest such line)."""
    if place.line is None:
        return None
    named = [(r, e) for e in others if e.path == place.path and abs(e.line - place.line) <= BLOCK_LINES
             and (r := _named_rank(e)) is not None]
    # Lines of the same process first (Open MPI's "[host:pid]" on the banner under a transport error), then of the
    # same failure (mpirun's "reported by process [J,R]" under its own error banner), so that a launcher's teardown
    # nearby ("srun: error: node2: task 1: Killed") does not make the rank ambiguous.
    own = [(r, e) for r, e in named if place.pid is not None and process_id(e) == place.pid
           and e.source.host == place.host]
    same = [(r, e) for r, e in named if place.reference_id and e.reference_id == place.reference_id]
    # srun reports every task of the step as it ends: the tasks it killed while aborting the step are not the failure,
    # so a task that ended otherwise ("task 0: Aborted" above "task 42: Killed") is the one that failed.
    not_torn_down = [(r, e) for r, e in named
                     if e.captures.get("status") not in TEARDOWN_STATUSES or blamed_rank(e) is not None]
    for candidates in (own, same, not_torn_down, named):
        if len({r for r, _ in candidates}) == 1:
            rank, nearest = min(candidates, key=lambda pair: abs(pair[1].line - place.line))
            return rank, nearest.line
        if candidates:
            return None
    return None


def blamed_rank(event: Event) -> int | None:
    """The rank a line names as the culprit: its `blamed_rank`, the one task an srun 'tasks A-B,C-D: Terminated'
    list leaves out (srun stops the other tasks when one fails; the one it did not have to stop had already ended), or
    the one rank a Horovod stall warning's 'ready ranks' list leaves out (the others wait for it)."""
    if (blamed := bounded(event.captures.get("blamed_rank"))) is not None:
        return blamed
    if ready := event.captures.get("ready_ranks"):
        return missing_from(ready)
    tasks = event.captures.get("task")
    return single_gap(tasks) if tasks and event.captures.get("status") == "Terminated" else None


def _named_rank(event: Event) -> int | None:
    blamed = blamed_rank(event)
    return blamed if blamed is not None else event.source.rank


@attrs.frozen
class Diagnosis:
    reference: Reference
    confidence: float
    initiator: Location | None
    collateral: tuple[Location, ...]
    collateral_total: int
    evidence_for: tuple[str, ...]
    evidence_against: tuple[str, ...]
    verify: tuple[VerifyCommand, ...]
    undetermined: bool = False
    # The evidence is a line healthy runs print too, counted because nothing else in the input failed.
    possible: bool = False
    # Not read from the log: what usually explains lines that do not name their cause (a reference's `suggests`).
    suggested: bool = False
    # Nothing in the input failed; what it shows (hosts set up differently, a benchmark's numbers) points here.
    lead: bool = False
    # What happened between the ranks, in one sentence, when the verdict rests on it (a silent, departed,
    # lagging or odd rank): "rank 3 stopped responding; rank(s) 0-2 timed out waiting for it".
    headline: str = ""
    next_checks: tuple[str, ...] = ()
    events: tuple[Event, ...] = ()
    # (input index, line) of every collateral line, also those beyond the listed `collateral`.
    collateral_keys: frozenset[tuple[int, int]] = frozenset()
    # Error lines (one per template) that no reference explains, listed beside the verdict.
    unexplained: tuple[str, ...] = ()
    # The reference's fix, or its advice for the framework the log shows (fix_framework: vllm, deepspeed).
    fix: tuple[str, ...] = attrs.field(default=attrs.Factory(lambda self: self.reference.fix, takes_self=True))
    fix_framework: str | None = None
    # The rank that stopped responding or left, whose own last line is the place to look (see lastline.py).
    silent_rank: int | None = None

    @property
    def id(self) -> str:
        return self.reference.id

    def to_json(self) -> dict[str, Any]:
        ref = self.reference
        return {
            "id": ref.id,
            "title": ref.title,
            "category": ref.category,
            "severity": ref.severity,
            "confidence": round(self.confidence, 2),
            "undetermined": self.undetermined,
            "possible": self.possible,
            "suggested": self.suggested,
            "headline": self.headline,
            "initiator": self.initiator.to_json() if self.initiator else None,
            "collateral": [loc.to_json() for loc in self.collateral],
            "collateral_total": self.collateral_total,
            "evidence": {"for": list(self.evidence_for), "against": list(self.evidence_against)},
            "summary": ref.summary,
            "mechanism": ref.mechanism,
            "confirm": list(ref.confirm),
            "fix": list(self.fix),
            "fix_framework": self.fix_framework,
            "verify": [cmd.to_json() for cmd in self.verify],
            "next_checks": list(self.next_checks),
            "unexplained": list(self.unexplained),
            "references": list(ref.references),
        }


def lead_without_failure(reference: Reference, lines: list[Event], evidence_for: tuple[str, ...],
                         evidence_against: str, confidence: float) -> Diagnosis:
    """A possible cause when nothing in the input failed but what it shows points at one (hosts set up differently, a
    benchmark's numbers): never more than a lead, placed at the first of its lines."""
    return Diagnosis(
        reference=reference,
        confidence=confidence,
        initiator=Location.of(lines[0]),
        collateral=(),
        collateral_total=0,
        evidence_for=evidence_for,
        evidence_against=(evidence_against,),
        verify=(),
        possible=True,
        lead=True,
        next_checks=reference.next_checks,
        events=tuple(lines),
    )


@attrs.frozen
class Attempt:
    """One launch of the job inside the inputs (torchrun restarts, runs appended to one file)."""

    index: int
    first_line: int
    last_line: int
    events: tuple[Event, ...]
    summary: str = ""


@attrs.frozen
class InputInfo:
    path: str
    lines: int
    bytes: int
    binary: bool = False
    kind: str = "log"  # "log", "error-file" (torchelastic error.json), "flight-recorder" (a dump), "nccl-ras"


@attrs.frozen
class Report:
    version: str
    inputs: tuple[InputInfo, ...]
    diagnoses: tuple[Diagnosis, ...]
    attempts: tuple[Attempt, ...] = ()
    notes: tuple[str, ...] = ()
    events: tuple[Event, ...] = ()
    comparison: Any = None  # baseline.Comparison when a good run was given
    scans: tuple = ()  # each input's matcher.ScanResult, for a later scan of an edited buffer (not in JSON)
    next_checks: tuple[str, ...] = ()  # without a diagnosis: where the failure can be instead, and how to get it

    @property
    def failed(self) -> bool:
        return bool(self.diagnoses)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "inputs": [attrs.asdict(i) for i in self.inputs],
            "diagnoses": [d.to_json() for d in self.diagnoses],
            "attempts": [{"index": a.index, "first_line": a.first_line, "last_line": a.last_line,
                          "events": len(a.events), "summary": a.summary} for a in self.attempts],
            "notes": list(self.notes),
            **({"next_checks": list(self.next_checks)} if self.next_checks else {}),
            **({"baseline": self.comparison.to_json()} if self.comparison is not None else {}),
        }


def possible_because(d: Diagnosis) -> str:
    """Why a possible cause is only possible, in one clause."""
    if d.suggested:
        return "The log does not show the cause; this is what usually explains its lines"
    if d.lead:
        return "Nothing in the input failed; what it shows points here, as a lead"
    return ("This line does not settle it alone (healthy runs print it too, or the line that says why is missing); here "
            "it is the only failure evidence a reference explains")
