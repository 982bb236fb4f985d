"""What each matched line of a log is, given a report: the first failure, its collateral, context,
an earlier attempt. Repeated lines collapse into one note per reference and pattern. LSP-free: the
language server turns notes into diagnostics, hovers, lenses and symbols."""

from __future__ import annotations

from collections import defaultdict

import attrs

from firstfault.diagnosis import Diagnosis, Location, Report, rank_ranges
from firstfault.matcher import Event
from firstfault.model import Reference

# Strongest first; also the order in which a per-file cap drops notes (the last kinds go first).
KINDS = ("initiator", "failure", "collateral", "context", "earlier")
MAX_COLLAPSED = 20


@attrs.frozen
class LineNote:
    kind: str
    event: Event
    title: str  # the title of the reference this line's pattern belongs to
    message: str
    ranks: tuple[int, ...] = ()
    similar: tuple[Event, ...] = ()  # the other lines collapsed into this note
    initiator: Location | None = None
    # The verdict this line starts is only possible: a line healthy runs print too, or the usual explanation of
    # lines that do not name their cause.
    tentative: bool = False

    @property
    def input_index(self) -> int:
        return self.event.input_index

    @property
    def line(self) -> int:
        return self.event.line


def current_events(report: Report) -> set[int]:
    return {id(e) for e in report.attempts[-1].events} if report.attempts else set()


def classify(report: Report, event: Event, current: set[int] | None = None) -> tuple[str, Diagnosis | None]:
    """The kind of a matched line and the diagnosis it belongs to."""
    current = current_events(report) if current is None else current
    if id(event) not in current:
        return "earlier", None
    top = report.diagnoses[0] if report.diagnoses else None
    if top is None:
        return ("context" if event.role == "context" else "failure"), None
    init = top.initiator
    if init is not None and init.path == event.path and init.line == event.line:
        return "initiator", top
    if (event.input_index, event.line) in top.collateral_keys:
        return "collateral", top
    if event.role == "context":
        return "context", top
    if event.role in ("collateral", "teardown") and not top.undetermined:
        return "collateral", top
    for d in report.diagnoses:
        if d.reference.id == event.reference_id:
            return "failure", d
    return "failure", top


def annotate(report: Report, references: dict[str, Reference], cap: int = 500) -> dict[int, list[LineNote]]:
    """Notes per input index, strongest first, at most `cap` per input."""
    current = current_events(report)
    groups: dict[tuple, list[Event]] = defaultdict(list)
    kinds: dict[tuple, tuple[str, Diagnosis | None]] = {}
    for event in sorted(report.events, key=lambda e: (e.input_index, e.line)):
        kind, diagnosis = classify(report, event, current)
        key = (event.input_index, kind, event.reference_id, event.pattern.id)
        if kind == "initiator":
            key += (event.line,)
        groups[key].append(event)
        kinds[key] = (kind, diagnosis)
    notes: dict[int, list[LineNote]] = defaultdict(list)
    for key, events in groups.items():
        kind, diagnosis = kinds[key]
        first = events[0]
        ranks = tuple(sorted({e.source.rank for e in events if e.source.rank is not None}))
        ref = references.get(first.reference_id)
        title = ref.title if ref else first.reference_id
        note = LineNote(kind, first, title, "", ranks, tuple(events[1:1 + MAX_COLLAPSED]),
                        diagnosis.initiator if diagnosis else None,
                        kind == "initiator" and diagnosis is not None and diagnosis.possible)
        notes[first.input_index].append(attrs.evolve(note, message=_message(note, diagnosis, len(events), report)))
    for index in notes:
        notes[index].sort(key=lambda n: (KINDS.index(n.kind), n.line))
        del notes[index][cap:]
        notes[index].sort(key=lambda n: n.line)
    return dict(notes)


def who(rank: int | None, host: str | None) -> str:
    parts = ([f"rank {rank}"] if rank is not None else []) + ([f"on {host}"] if host else [])
    return " ".join(parts)


def _message(note: LineNote, diagnosis: Diagnosis | None, count: int, report: Report) -> str:
    spread = ""
    if count > 1:
        spread = f" — {count} similar lines" + (f" on ranks {rank_ranges(list(note.ranks))}" if note.ranks else "")
    init = note.initiator
    if note.kind == "initiator" and diagnosis is not None:
        tail = f"; {diagnosis.collateral_total} collateral line(s) follow" if diagnosis.collateral_total else ""
        place = who(init.rank, init.host) if init else ""
        head = "Possible cause" if diagnosis.possible else "First failure"
        return f"{head}: {diagnosis.reference.title}{' — ' + place if place else ''}{tail}"
    if note.kind == "collateral" and diagnosis is not None:
        origin = diagnosis.reference.title
        if init is not None:
            at = ", ".join(x for x in (who(init.rank, init.host), f"line {init.line}" if init.line else "") if x)
            origin += f" ({at})" if at else ""
        return f"Collateral of {origin}: {note.title}{spread}"
    if note.kind == "failure" and diagnosis is not None and diagnosis.undetermined:
        return (f"{note.title}{spread} — undetermined: the log does not say which rank started it; "
                "hover for what to check next")
    if note.kind == "failure" and diagnosis is not None:
        return f"{note.title}{spread} — competing hypothesis, confidence {diagnosis.confidence:.2f}"
    if note.kind == "earlier":
        attempt = next((a for a in report.attempts if any(e is note.event for e in a.events)), None)
        label = f"attempt {attempt.index + 1}: {attempt.summary}" if attempt else "an earlier attempt"
        return f"{note.title}{spread} (in {label}; the verdict is for the last attempt)"
    if note.kind == "context":
        return f"Context, not a failure in this log: {note.title}{spread}"
    return f"{note.title}{spread}"
