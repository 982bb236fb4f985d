"""Which rank the others waited for: the odd rank out, the rank behind, the silent rank, the departed rank, and
ranks that ran different collectives at one sequence number."""

from __future__ import annotations

import re
from collections import Counter, defaultdict

import attrs

from firstfault.diagnosis import clip, rank_ranges
from firstfault.hypothesis import Hypothesis, event_key
from firstfault.matcher import Event
from firstfault.model import UNRECOGNISED
from firstfault.numbers import MAX_COUNTER, bounded
from firstfault.roles import FAILURE_ROLES

LAUNCHER_STOP = -15  # SIGTERM: how torchrun stops the workers that are left once one has failed
# Point-to-point halves pair with each other (one rank sends what another receives, gloo's ring too): a rank in
# one and a rank in the other are not in different collectives.
POINT_TO_POINT = ("send", "recv")


def _collective(e: Event) -> str | None:
    op = e.captures.get("op")
    return op if op and op.lower() not in POINT_TO_POINT else None


def _shape(e: Event) -> str:
    """The collective and, where the watchdog gives it, its size: "BROADCAST of 64 elements"."""
    numel = e.captures.get("numel_in")
    return f"{_collective(e)} of {numel} elements" if numel else str(_collective(e))


@attrs.frozen
class OddRank:
    culprits: set[int]
    detail: str  # the evidence
    headline: str
    # Told apart by sequence numbers alone: a rank that is slow and ranks that issued different numbers of
    # collectives look the same there.
    by_sequence: bool = False


def odd_rank_out(h: Hypothesis, behind: bool = True) -> OddRank | None:
    """The minority rank(s) of mismatched fingerprints or sequence numbers, when one is clear; with `behind`, also
    the rank at the lowest sequence number when there is no majority."""
    fingerprints: dict[int, str] = {}
    for e in h.failures():
        c = e.captures
        if "fingerprint" in c and (rank := bounded(c.get("rank"))) is not None:
            fingerprints[rank] = c["fingerprint"]
        if "other_fingerprint" in c and (other := bounded(c.get("other_rank"))) is not None:
            fingerprints.setdefault(other, c["other_fingerprint"])
    kind = "collective"
    if len(set(fingerprints.values())) < 2:
        if not one_process_group(h):
            return None  # each group numbers and runs its own collectives: nothing to line up across them
        fingerprints = {e.source.rank: e.captures["seq"] for e in h.failures()
                        if "seq" in e.captures and e.source.rank is not None}
        kind = "sequence number"
    if len(set(fingerprints.values())) < 2:
        # No sequence numbers, or the same one everywhere: the collective each rank is stuck in, with its size.
        # A rank whose line lost its size (cut, wrapped) is compared on nothing it lacks.
        stuck = [e for e in h.failures() if _collective(e) and e.source.rank is not None]
        if any(e.captures.get("numel_in") for e in stuck):
            stuck = [e for e in stuck if e.captures.get("numel_in")]
        shapes = {e.source.rank: _shape(e) for e in stuck}
        if len(set(shapes.values())) > 1:
            fingerprints, kind = shapes, "collective"
    values = Counter(fingerprints.values())
    if len(values) < 2:
        return None
    (common, common_n), *rest = values.most_common()
    if rest and rest[0][1] == common_n:
        if kind == "sequence number":
            return _behind(fingerprints) if behind else None
        return _first_differing(h)
    culprits = {r for r, v in fingerprints.items() if v != common}
    detail = (f"ranks disagree on the {kind}: {common_n} rank(s) are at {clip(common, 120)}, while rank(s) "
              f"{rank_ranges(sorted(culprits))} are at {', '.join(sorted({clip(fingerprints[r], 120) for r in culprits}))}"
              ": the odd one out is the culprit")
    return OddRank(culprits, detail,
                   f"rank {rank_ranges(sorted(culprits))} diverged: the other ranks agree on the {kind}",
                   by_sequence=kind == "sequence number")


def _first_differing(h: Hypothesis) -> OddRank | None:
    """One rank's report against one other: ProcessGroupWrapper compares the ranks in order and names the first
    that differs, so a named rank other than the lowest one is the odd one (those before it agreed)."""
    named = set()
    for e in h.failures():
        rank, other = bounded(e.captures.get("rank")), bounded(e.captures.get("other_rank"))
        if rank is not None and other is not None and other != (1 if rank == 0 else 0):
            named.add(other)
    if len(named) != 1:
        return None
    culprit = named.pop()
    return OddRank({culprit}, f"the mismatch check compares ranks in order and names rank {culprit}, not the lowest "
                   f"rank: the ranks before it agreed, so rank {culprit} is the one that diverged",
                   f"rank {culprit} ran a different collective from the ranks before it")


def _behind(seqs: dict[int, str]) -> OddRank | None:
    """No majority (one rank against one, two against two): the rank(s) at the lowest sequence number are
    behind, still in a collective the others already finished."""
    numbers = {r: bounded(v, MAX_COUNTER) for r, v in seqs.items()}
    if any(n is None for n in numbers.values()):
        return None
    low = min(numbers.values())
    culprits = {r for r, n in numbers.items() if n == low}
    ahead = sorted(set(seqs) - culprits)
    detail = (f"rank(s) {rank_ranges(sorted(culprits))} time out at sequence number {low}, behind rank(s) "
              f"{rank_ranges(ahead)} at {', '.join(sorted({seqs[r] for r in ahead}))}: the rank behind is still in a "
              "collective the others finished, so it is the one they wait for")
    return OddRank(culprits, detail, f"rank {rank_ranges(sorted(culprits))} fell behind; rank(s) "
                   f"{rank_ranges(ahead)} timed out waiting for it in the next collective", by_sequence=True)


def different_ops_at_one_seq(h: Hypothesis) -> tuple[str, str] | None:
    """Watchdog timeouts of two or more ranks at the same sequence number but in different operations, or, from a
    PyTorch that prints no sequence numbers (WorkNCCL(OpType=..., Timeout(ms)=...)), in different operations at
    all: (evidence, headline)."""
    if not one_process_group(h):
        return None
    ops: dict[str, dict[str, set[int]]] = defaultdict(lambda: defaultdict(set))
    numbered = any(e.captures.get("seq") for e in h.failures())
    for e in h.failures():
        seq, op = e.captures.get("seq"), _collective(e)
        if op and e.source.rank is not None and (seq or not numbered):
            ops[seq or ""][op].add(e.source.rank)
    for seq, by_op in sorted(ops.items()):
        if len(by_op) == 1 and seq:
            # One operation at this sequence number, but of different sizes: different tensors, so different calls.
            # A rank whose line lost its size (cut, wrapped) is no evidence either way.
            shapes: dict[str, set[int]] = defaultdict(set)
            for e in h.failures():
                if (e.captures.get("seq") == seq and _collective(e) and e.source.rank is not None
                        and e.captures.get("numel_in")):
                    shapes[_shape(e)].add(e.source.rank)
            if len(shapes) > 1:
                ranks = "; ".join(f"rank(s) {rank_ranges(sorted(r))} in {s}" for s, r in sorted(shapes.items()))
                return (f"at sequence number {seq} the ranks time out in collectives of different sizes ({ranks}): "
                        "each is a different call that happens to share the number (ranks took different paths, or "
                        "built tensors of different shapes)",
                        f"the ranks time out in collectives of different sizes at sequence number {seq}")
        if len(by_op) > 1:
            ranks = "; ".join(f"rank(s) {rank_ranges(sorted(r))} in {op}" for op, r in sorted(by_op.items()))
            if not seq:
                # Each rank's watchdog names the collective it is stuck in, and none completes without every rank.
                return (f"the ranks time out in different collectives ({ranks}); no collective completes without "
                        "every rank, so they took different code paths and each waits in one the other never "
                        "enters (this PyTorch prints no sequence numbers to line them up)",
                        "the ranks time out in different collectives")
            return (f"at sequence number {seq} the ranks time out in different collectives ({ranks}): they "
                    "took different code paths, so each waits in a collective the other never enters",
                    f"the ranks time out in different collectives at sequence number {seq}")
    return None


_PG = re.compile(r"\[PG (?:ID )?(\d+)")
# The rank a watchdog line names inside its process group: "[Rank 0]", "[PG ID 2 PG GUID 5 Rank 1]".
_GROUP_RANK = re.compile(r"\[(?:PG [^\]]*? )?Rank (\d+)\]")


def one_process_group(h: Hypothesis) -> bool:
    """Whether the lines can be read as one process group's: sequence numbers count per group, so numbers from two
    groups say nothing about each other. Two groups show as two PG IDs, or, before PyTorch printed the PG ID, as a
    line whose rank within its group differs from the process's global rank ("[rank2]:... [Rank 0] Watchdog ...": a
    tensor- or pipeline-parallel subgroup, which the lines of other ranks need not share)."""
    groups: set[str] = set()
    for e in h.failures():
        if pg := _PG.search(e.text):
            groups.add(pg.group(1))
        elif (m := _GROUP_RANK.search(e.text)) and e.source.rank is not None and int(m.group(1)) != e.source.rank:
            return False
    return len(groups) <= 1


def completed_past_stuck(h: Hypothesis) -> tuple[str, str] | None:
    """A rank whose watchdog says it already completed work number N while another rank of the same process group is
    still stuck in its own number N: one collective cannot complete on one rank while another is still in it, so the
    two calls numbered N were different collectives, and the ranks issued different sequences: (evidence, headline)."""
    if not one_process_group(h):
        return None
    stuck: dict[int, tuple[int, str]] = {}
    completed: dict[int, int] = {}
    for e in h.failures():
        rank = e.source.rank
        if rank is None:
            continue
        seq = bounded(e.captures.get("seq") or e.captures.get("work"), MAX_COUNTER)
        if seq is not None and (rank not in stuck or seq < stuck[rank][0]):
            stuck[rank] = (seq, _collective(e) or "")
        done = bounded(e.captures.get("completed"), MAX_COUNTER)
        if done is not None:
            completed[rank] = max(done, completed.get(rank, -1))
    for behind, (seq, op) in sorted(stuck.items(), key=lambda item: item[1][0]):
        ahead = sorted(r for r, done in completed.items() if r != behind and done >= seq)
        if ahead:
            what = f"{op} " if op else ""
            reported = ", ".join(str(completed[r]) for r in ahead)
            return (f"rank(s) {rank_ranges(ahead)} completed work up to number {reported} ('last completed NCCL "
                    f"work'), while rank {behind} is still stuck in its {what}number {seq}: a collective cannot "
                    "complete on one rank while another is still in it, so the calls numbered alike were different "
                    "collectives and the ranks issued different sequences of them",
                    f"the ranks' collectives are out of step: rank(s) {rank_ranges(ahead)} completed number {seq}, "
                    f"which rank {behind} is still in")
    return None


def silent_ranks(h: Hypothesis, events: list[Event], ranks: set[int]) -> list[int]:
    reporting = h.ranks()
    if len(reporting) < 2:
        return []
    talking = {e.source.rank for e in events if e.role in ("cause", "symptom", "collateral")
               and e.source.rank is not None}
    silent = sorted(ranks - talking)
    return silent if silent and len(silent) < len(reporting) else []


def exit_statuses(events: list[Event]) -> dict[int, int]:
    """Each rank's exit status as the launcher's summary gives it (negative: killed by that signal)."""
    return {e.source.rank: code for e in events
            if e.source.rank is not None and (code := bounded(e.captures.get("exitcode"), MAX_COUNTER)) is not None}


def departed_ranks(h: Hypothesis, events: list[Event]) -> list[int]:
    """Peers that the reporting ranks lost: ranks that report no lost connection themselves and ended on their
    own — an error status or a signal other than the launcher's SIGTERM — while the others were stopped after."""
    reporting = h.ranks()
    if len(reporting) < 2:
        return []
    departed = sorted(r for r, status in exit_statuses(events).items()
                      if r not in reporting and status != 0 and status != LAUNCHER_STOP)
    return departed if departed and len(departed) < len(reporting) else []


def erring_ranks(h: Hypothesis, events: list[Event]) -> list[Event]:
    """Ranks that printed an error of their own (a traceback, an error-level line no reference explains) while
    the verdict's lines only report its consequence on other ranks: the first such line of each, earliest
    first. Only a minority counts: errors on every rank are the collateral itself."""
    reporting = h.ranks()
    own: dict[int, Event] = {}
    for e in sorted(events, key=event_key):
        if (e.reference_id == UNRECOGNISED and e.demoted_from in FAILURE_ROLES and e.source.rank is not None
                and e.source.rank not in reporting):
            own.setdefault(e.source.rank, e)
    if not own or (len(own) > 1 if not reporting else len(own) >= len(reporting)):
        return []
    return sorted(own.values(), key=event_key)
