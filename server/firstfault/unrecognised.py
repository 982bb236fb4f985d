"""Error lines that no reference explains: collapsed per template, as a verdict of their own when nothing else
failed, or as a note beside the verdict when something else did."""

from __future__ import annotations

import re
from collections import defaultdict

import attrs

from firstfault.commands import fill, own_inputs
from firstfault.diagnosis import Diagnosis, Location, clip, lend_rank, rank_ranges
from firstfault.hypothesis import event_key
from firstfault.matcher import Event
from firstfault.model import UNRECOGNISED, Reference
from firstfault.roles import HEADER_ONLY, TRACEBACK, TRACEBACK_FRAME, TRACEBACK_HEADER, TRACEBACK_WRAPPERS

SHOWN_TEMPLATES = 5
UNEXPLAINED = "no reference in the library explains these"
# An NCCL WARN says why NCCL failed; the error trace printed under it ("init.cc:950 -> 2") does not explain it.
NOT_WRAPPERS = frozenset({"nccl-warn"})
_VARIABLE = re.compile(r"0x[0-9a-fA-F]+|\d+(?:\.\d+)?")


@attrs.frozen
class Template:
    text: str
    events: tuple[Event, ...]

    @property
    def ranks(self) -> list[int]:
        return sorted({e.source.rank for e in self.events if e.source.rank is not None})

    def describe(self) -> str:
        first = self.events[0]
        where = f"line {first.line}" + (f", rank(s) {rank_ranges(self.ranks)}" if self.ranks else "")
        count = f" ×{len(self.events)}" if len(self.events) > 1 else ""
        return f"{clip(self.text, 160)}{count} ({where})"


def templates(events: list[Event]) -> list[Template]:
    """Lines collapsed by their text with numbers and addresses masked, earliest template first."""
    groups: dict[tuple[str, str], list[Event]] = defaultdict(list)
    for event in sorted(events, key=event_key):
        shown = _shown_text(event)
        groups[(event.pattern.id, _VARIABLE.sub("N", shown))].append(event)
    return [Template(_shown_text(evs[0]), tuple(evs)) for evs in groups.values()]


def _shown_text(event: Event) -> str:
    """The message from where the pattern matched: prefixes (rank, host, timestamps) stay out of the template."""
    return event.matched_text.strip()


def unrecognised_verdict(reference: Reference, failures: list[Event], events: list[Event]) -> Diagnosis:
    """The earliest error line is the first-failure candidate; the cause stays unnamed. `events` are all the attempt's
    lines (`failures` among them), which may name the rank the first line does not (a launcher's report of the worker
    beside it)."""
    found = templates(failures)
    # What says something first; else a traceback's header, which begins the block, before its frames.
    meaningful = ([t for t in found if t.events[0].pattern.id not in HEADER_ONLY]
                  or [t for t in found if t.events[0].pattern.id == TRACEBACK_HEADER] or found)
    first = meaningful[0].events[0]
    evidence = [f"{UNEXPLAINED} {len(failures)} error line(s); the earliest "
                f"that says something is line {first.line}"
                + first.source.on()
                + f": {clip(_shown_text(first), 160)}"]
    evidence += [t.describe() for t in meaningful[:SHOWN_TEMPLATES]]
    if len(meaningful) > SHOWN_TEMPLATES:
        evidence.append(f"... and {len(meaningful) - SHOWN_TEMPLATES} more kind(s) of error line")
    possible = all(e.possible for e in failures)
    if possible:
        evidence.insert(0, failures[0].possible)
    initiator = Location.of(first)
    if initiator.rank is None and (lent := lend_rank(initiator, events)) is not None:
        initiator = attrs.evolve(initiator, rank=lent[0])
        evidence.append(f"line {first.line} names no rank; line {lent[1]} of the same block names rank {lent[0]}")
    return Diagnosis(
        reference=reference,
        confidence=0.3,
        initiator=initiator,
        collateral=(),
        collateral_total=0,
        evidence_for=tuple(evidence),
        evidence_against=("the message is not one firstfault knows: the cause is not named, only where it "
                          "shows first",),
        verify=(),
        possible=possible,
        next_checks=reference.next_checks,
        events=tuple(failures),
    )


def cut_traceback_verdict(verdict: Diagnosis, exception: Reference) -> Diagnosis | None:
    """A traceback whose exception line is not in the input (a selection or an excerpt that stopped inside it): an
    exception was raised there, but which one the input does not say. Named as the Python exception it is, at the
    unrecognised verdict's confidence, with the command that finds its exception line in the whole log. An error line
    right above the traceback's header is its message (logger.exception("WorkerProc hit an exception.") prints it
    first) or a framework's wrapper (Hydra's), part of the same block."""
    headers = {(e.input_index, e.line) for e in verdict.events if e.pattern.id == TRACEBACK_HEADER}

    def logged_above(e: Event) -> bool:
        above = e.pattern.id not in HEADER_ONLY or e.pattern.id in TRACEBACK_WRAPPERS
        return above and (e.input_index, e.line + 1) in headers

    if not verdict.events or not all(e.pattern.id in TRACEBACK or logged_above(e) for e in verdict.events):
        return None
    at = verdict.initiator
    rank = f" (rank {at.rank})" if at.rank is not None else ""
    logged = any(logged_above(e) and e.line == at.line and e.path == at.path for e in verdict.events)
    where = (f"at line {at.line + 1}{rank}, logged under line {at.line}'s message," if logged
             else f"at line {at.line}{rank}")
    cut = f"a Python traceback {where} that the input cuts before its exception line: an exception was raised there"
    # The traceback runs to the end of the input, so the input's last frame is the deepest call it shows: the exception
    # was raised in that call or in one below it that the input cuts off.
    deepest = max((e for e in verdict.events if e.pattern.id == TRACEBACK_FRAME and e.path == at.path
                   and e.line > at.line), key=lambda e: e.line, default=None)
    raised_in = (f"the exception was raised in the deepest call the input shows or below it (line {deepest.line}): "
                 f"{clip(deepest.matched_text, 160)}",) if deepest else ()
    only = " (only what was logged with it)" if logged else ""
    # The unrecognised verdict's "no reference explains these lines" gives way to what the lines are.
    rest = tuple(e for e in verdict.evidence_for if not e.startswith(UNEXPLAINED))
    return attrs.evolve(
        verdict, reference=exception, evidence_for=(cut, *raised_in, *rest),
        evidence_against=(f"the exception's type and message are not in the input{only}, so neither is what raised "
                          "it; the whole log has them after the last frame",),
        verify=tuple(fill(c, {}, own_inputs(at.path)) for c in exception.verify),
        fix=exception.fix, next_checks=exception.next_checks)


def unexplained_lines(events: list[Event], reference: Reference | None) -> tuple[str, ...]:
    """Beside a verdict: the error lines no reference explains, one per template, so nothing the log says is
    hidden. A line that a reference also reads is explained, and so is one right above or below a recognised failure:
    its wrapper ("terminate called ..." over the "what():" line)."""
    if reference is None:
        return ()
    failing = {p.id for p in reference.patterns if p.role in ("cause", "symptom")} - set(HEADER_ONLY)
    recognised = {(e.input_index, e.line) for e in events
                  if e.reference_id != UNRECOGNISED and e.role in ("cause", "symptom")}
    leftover = [e for e in events if e.reference_id == UNRECOGNISED and e.pattern.id in failing
                and (e.pattern.id in NOT_WRAPPERS
                     or not {(e.input_index, e.line + d) for d in (-1, 0, 1)} & recognised)]
    found = templates(leftover)
    shown = tuple(t.describe() for t in found[:SHOWN_TEMPLATES])
    return shown + ((f"... and {len(found) - SHOWN_TEMPLATES} more kind(s)",) if len(found) > SHOWN_TEMPLATES else ())
