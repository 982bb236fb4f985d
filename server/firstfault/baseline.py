"""A good run to compare with: what the failed run printed that the good one never did, the setup that differs,
and how far each got.

Both runs go through the same matcher. A line of the failed run whose template (its pattern and its message with
numbers and addresses masked) the good run printed too is noise both share: it is discounted (taken as context).
An error-like template only the failed run printed stays evidence and is listed as new. The setup compared is what
NCCL prints once per process (hosts.FACTS: version, CUDA driver, network plugin, network, IB devices, NCCL_*
settings), the hosts and the ranks; the phase is the highest training step each run printed (read from each chunk as it is
scanned, only when a baseline is given).
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Iterable

import attrs

from firstfault.context import message_start
from firstfault.diagnosis import clip, rank_ranges
from firstfault.hosts import FACTS, REFERENCE as CONFIG_REFERENCE
from firstfault.matcher import Event
from firstfault.reader import Chunk
from firstfault.roles import FAILURE_ROLES, HEADER_ONLY

SHOWN = 8
_VARIABLE = re.compile(r"0x[0-9a-fA-F]+|\d+(?:\.\d+)?")
# "step 1200", "global_step=1200", "iteration 1200/50000", "[Step 1200]", "it 1200": how training loops, Megatron,
# DeepSpeed and the HF Trainer print progress.
_STEP = re.compile(r"(?i)\b(?:global[_ ]step|step|iteration|iter)\b\s*[:=#\[]?\s*(\d{1,9})\b")
_CHECKPOINT = re.compile(r"(?i)\b(?:sav(?:ing|ed)|writ(?:ing|ten))\b[^\n]{0,40}\bcheckpoint")


@attrs.frozen
class Phase:
    step: int | None
    checkpoint: bool

    def describe(self) -> str:
        if self.step is None:
            return "printed no step number (it did not get past set-up, or does not log steps)"
        return f"reached step {self.step:,}" + (" and wrote a checkpoint" if self.checkpoint else "")


@attrs.frozen
class RunSummary:
    templates: frozenset[tuple[str, str]]
    facts: dict[str, frozenset[str]]
    hosts: frozenset[str]
    ranks: frozenset[int]
    phase: Phase


@attrs.frozen
class Comparison:
    baseline: tuple[str, ...]  # the good run's inputs
    new_lines: tuple[str, ...]  # error-like templates only the failed run printed, described
    setup: tuple[str, ...]  # what differs in the set-up
    phase: str
    discounted: int  # failure lines of the failed run that the good run printed too

    def lines(self) -> list[str]:
        out = [self.phase, *self.setup]
        if self.discounted:
            out.append(f"{self.discounted} failure-like line(s) of the failed run were printed by the good run too: "
                       "taken as noise, not evidence")
        return out

    def to_json(self) -> dict:
        return attrs.asdict(self)


def template(event: Event) -> tuple[str, str]:
    return event.pattern.id, _VARIABLE.sub("N", message(event))


def message(event: Event) -> str:
    """The line from where its pattern matched: who printed it and when stay out."""
    return event.text[max(event.match_column, message_start(event.text)):].strip()


class PhaseTracker:
    """How far a run got, fed each chunk as the scan reads it (so nothing is read twice, stdin included)."""

    def __init__(self) -> None:
        self.step: int | None = None
        self.checkpoint = False

    def feed(self, chunk: Chunk) -> None:
        for m in _STEP.finditer(chunk.text):
            value = int(m.group(1))
            self.step = value if self.step is None else max(self.step, value)
        self.checkpoint = self.checkpoint or bool(_CHECKPOINT.search(chunk.text))

    def phase(self) -> Phase:
        return Phase(self.step, self.checkpoint)


def summarise(events: Iterable[Event], phase: Phase) -> RunSummary:
    templates, hosts, ranks = set(), set(), set()
    facts: dict[str, set[str]] = defaultdict(set)
    for e in events:
        templates.add(template(e))
        if e.source.host:
            hosts.add(e.source.host)
        if e.source.rank is not None:
            ranks.add(e.source.rank)
        if e.reference_id == CONFIG_REFERENCE and e.pattern.id in FACTS:
            fact = FACTS[e.pattern.id] or e.captures.get("key", "")
            value = e.captures.get("value") or ("internal" if e.captures.get("internal") else "")
            if fact and value:
                facts[fact].add(value.strip())
    return RunSummary(frozenset(templates), {k: frozenset(v) for k, v in facts.items()}, frozenset(hosts),
                      frozenset(ranks), phase)


def shared_with(good: RunSummary, event: Event) -> bool:
    """A line the good run printed too (same pattern, same message bar numbers) that is more than context."""
    return event.role != "context" and template(event) in good.templates


def compare(bad_events: list[Event], bad: RunSummary, good: RunSummary, baseline: tuple[str, ...],
            discounted: int) -> Comparison:
    new: dict[str, list[Event]] = {}  # by message alone: one error quoted by several files is one new line
    for e in sorted(bad_events, key=lambda e: e.order):
        if (e.role in FAILURE_ROLES or e.demoted_from in FAILURE_ROLES) and e.pattern.id not in HEADER_ONLY:
            if template(e) not in good.templates:
                new.setdefault(template(e)[1], []).append(e)
    described = []
    for evs in list(new.values())[:SHOWN]:
        ranks = sorted({e.source.rank for e in evs if e.source.rank is not None})
        where = f"{evs[0].path}:{evs[0].line}" + (f", rank(s) {rank_ranges(ranks)}" if ranks else "")
        described.append(f"{clip(message(evs[0]), 160)}{f' ×{len(evs)}' if len(evs) > 1 else ''} ({where})")
    if len(new) > SHOWN:
        described.append(f"... and {len(new) - SHOWN} more")
    return Comparison(baseline, tuple(described), tuple(_setup(bad, good)),
                      f"the failed run {bad.phase.describe()}; the good run {good.phase.describe()}", discounted)


def _setup(bad: RunSummary, good: RunSummary) -> list[str]:
    out = []
    for fact in sorted(set(bad.facts) | set(good.facts)):
        mine, theirs = bad.facts.get(fact, frozenset()), good.facts.get(fact, frozenset())
        if mine and theirs and mine != theirs:
            out.append(f"{fact}: {_values(mine)} in the failed run, {_values(theirs)} in the good run")
        elif mine and not theirs and fact.startswith("NCCL_"):
            out.append(f"{fact} is set to {_values(mine)} in the failed run only")
        elif theirs and not mine and fact.startswith("NCCL_"):
            out.append(f"{fact} was set to {_values(theirs)} in the good run only")
    if bad.hosts and good.hosts and bad.hosts != good.hosts:
        only = sorted(bad.hosts - good.hosts)
        if only:
            out.append(f"host(s) only in the failed run: {_values(frozenset(only))}")
    if bad.ranks and good.ranks and max(bad.ranks) != max(good.ranks):
        out.append(f"ranks seen: 0-{max(bad.ranks)} in the failed run, 0-{max(good.ranks)} in the good run")
    return out


def _values(values: frozenset[str]) -> str:
    shown = sorted(values)
    return ", ".join(shown[:4]) + (f" (+{len(shown) - 4} more)" if len(shown) > 4 else "")
