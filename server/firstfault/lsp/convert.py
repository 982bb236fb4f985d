"""LSP shapes for the engine's results: diagnostics, code lens, document symbols, positions."""

from __future__ import annotations

from typing import Callable

from lsprotocol import types

from firstfault.annotations import LineNote, who
from firstfault.diagnosis import Report
from firstfault.matcher import Event
from firstfault.model import UNRECOGNISED

SOURCE = "firstfault"
SEVERITY = {
    "initiator": types.DiagnosticSeverity.Error,
    "failure": types.DiagnosticSeverity.Warning,
    "collateral": types.DiagnosticSeverity.Information,
    "earlier": types.DiagnosticSeverity.Information,
    "context": types.DiagnosticSeverity.Hint,
}
MINIMUM = {"error": 1, "warning": 2, "information": 3, "hint": 4}

UriOf = Callable[[int], str | None]  # input index -> document URI


def event_range(event: Event) -> types.Range:
    line = event.line - 1
    end = event.col_end if event.col_end > event.col_start else event.col_start + len(event.text)
    return types.Range(types.Position(line, event.col_start), types.Position(line, end))


def line_range(line: int) -> types.Range:
    return types.Range(types.Position(line - 1, 0), types.Position(line - 1, 0))


def diagnostic(note: LineNote, uri_of: UriOf, path_uri: Callable[[str], str | None],
               reference_url: str | None) -> types.Diagnostic:
    related = []
    init = note.initiator
    if note.kind != "initiator" and init is not None and init.line and init.path:
        target = path_uri(init.path)
        if target:
            related.append(types.DiagnosticRelatedInformation(
                types.Location(target, line_range(init.line)),
                f"first failure{' on ' + who(init.rank, init.host) if who(init.rank, init.host) else ''}"))
    for other in note.similar:
        target = uri_of(other.input_index)
        if target:
            related.append(types.DiagnosticRelatedInformation(
                types.Location(target, event_range(other)), f"same line{other.source.on()}"))
    return types.Diagnostic(
        range=event_range(note.event),
        message=note.message,
        severity=_severity(note),
        code=note.event.reference_id,
        code_description=types.CodeDescription(href=reference_url) if reference_url else None,
        source=SOURCE,
        related_information=related or None,
        data={"kind": note.kind, "pattern": note.event.pattern.id, "line": note.line},
    )


def _severity(note: LineNote) -> types.DiagnosticSeverity:
    """A first failure no reference explains, or a possible cause (a line healthy runs print too, or the usual
    explanation of lines that do not name their cause), is a Warning: the log shows where, but the cause is unnamed
    or tentative."""
    if note.kind == "initiator" and (note.event.reference_id == UNRECOGNISED or note.tentative):
        return types.DiagnosticSeverity.Warning
    return SEVERITY[note.kind]


def keep(severity: types.DiagnosticSeverity, minimum: str) -> bool:
    return int(severity) <= MINIMUM[minimum]


def lens_title(report: Report) -> str | None:
    if not report.diagnoses:
        n = len(report.events)
        return f"no failure found · {n} line{'' if n == 1 else 's'} of context" if n else None
    top = report.diagnoses[0]
    others = len(report.diagnoses) - 1
    if top.undetermined:
        head = f"undetermined: {top.reference.title} (the log does not say which rank started it)"
    else:
        init = top.initiator
        place = []
        if init is not None and init.rank is not None:
            place.append(f"rank {init.rank}")
        if init is not None and init.line:
            place.append(f"line {init.line}")
        head = f"first failure: {top.reference.title}" + (f" · {', '.join(place)}" if place else "")
    return f"{head} · {top.collateral_total} collateral · {others} other hypothes{'is' if others == 1 else 'es'}"


def symbols(report: Report, input_index: int, notes: list[LineNote]) -> list[types.DocumentSymbol]:
    """Attempts → ranks/hosts → key events: the outline reads as a timeline."""
    out = []
    for attempt in report.attempts:
        ids = {id(e) for e in attempt.events}
        mine = [n for n in notes if id(n.event) in ids]
        if not mine and len(report.attempts) > 1:
            continue
        by_who: dict[str, list[LineNote]] = {}
        for n in mine:
            by_who.setdefault(n.event.source.label() or "unattributed", []).append(n)
        children = []
        for label, group in by_who.items():
            events = [types.DocumentSymbol(
                name=f"{n.title}", detail=f"{n.kind} · line {n.line}", kind=types.SymbolKind.Event,
                range=event_range(n.event), selection_range=event_range(n.event)) for n in group]
            first, last = group[0].line, group[-1].line
            children.append(types.DocumentSymbol(
                name=label, detail=f"{len(group)} event(s)", kind=types.SymbolKind.Object,
                range=_span(first, last), selection_range=line_range(first), children=events))
        first_line = min([attempt.first_line] + [n.line for n in mine])
        last_line = max([attempt.last_line] + [n.line for n in mine])
        out.append(types.DocumentSymbol(
            name=f"attempt {attempt.index + 1}", detail=attempt.summary, kind=types.SymbolKind.Namespace,
            range=_span(first_line, last_line), selection_range=line_range(first_line), children=children))
    return out


def _span(first: int, last: int) -> types.Range:
    return types.Range(types.Position(first - 1, 0), types.Position(last, 0))
