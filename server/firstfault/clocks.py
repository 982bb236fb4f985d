"""Clocks that disagree: each host stamps its lines with its own clock. Where every rank printed the same thing at
the same moment, the differences between hosts' stamps are their clocks' offsets.

Moments shared by every rank:
- the watchdog timeouts of one collective (same sequence number): the ranks entered it together after the previous
  one completed, so each fires Timeout(ms) later, within the ranks' jitter;
- a communicator's init completing (NCCL's bootstrap is a collective: every rank returns from it together).

Per host, the median stamp of each shared moment; per other host, the median difference to the reference host
(the one that printed most of them) is its offset, and the spread of those differences, the spread within hosts
and the stamps' resolution bound the uncertainty. An offset larger than its uncertainty is clear: the events'
times are corrected before anything is ordered. A first failure that precedes another host's failure by less
than the uncertainty (or than ASSUMED_SKEW when nothing estimates it) is not shown to be first.
"""

from __future__ import annotations

import statistics
from collections import defaultdict

import attrs

from firstfault.diagnosis import Diagnosis
from firstfault.matcher import Event
from firstfault.roles import FAILURE_ROLES

# Two hosts' clocks kept by NTP usually agree within milliseconds, but nothing in a log proves it; events on two
# hosts closer than this are not taken as ordered when no shared moment measures the offset.
ASSUMED_SKEW = 1.0
_WATCHDOG = ("nccl-watchdog-timeout", "worknccl-ran-for")
_INIT = ("nccl-init-complete",)


@attrs.frozen
class Clocks:
    reference: str | None = None
    offsets: dict[str, float] = attrs.field(factory=dict)  # host -> seconds its stamps run ahead of the reference
    uncertainty: dict[str, float] = attrs.field(factory=dict)  # host -> seconds
    moments: int = 0
    rank_hosts: dict[int, str] = attrs.field(factory=dict)  # learnt from lines that name both

    def host_of(self, event: Event) -> str | None:
        return event.source.host or self.rank_hosts.get(event.source.rank)

    def clear(self, host: str) -> bool:
        return host in self.offsets and abs(self.offsets[host]) > self.uncertainty[host]

    def corrected(self, event: Event) -> Event:
        host = self.host_of(event)
        if event.time is None or event.clock != "wall" or host is None or not self.clear(host):
            return event
        return attrs.evolve(event, time=event.time - self.offsets[host])

    def skew(self, a: str | None, b: str | None) -> float:
        """How far apart two hosts' (corrected) stamps may still be in the wrong order."""
        if a is None or b is None or a == b:
            return 0.0
        known = [self.uncertainty[h] for h in (a, b) if h in self.uncertainty]
        return max(known) if len(known) == 2 else ASSUMED_SKEW  # the reference is in it (0.0) once measured

    def notes(self) -> list[str]:
        out = []
        basis = f"from {self.moments} moment(s) every rank printed together"
        for host, offset in sorted(self.offsets.items()):
            if self.clear(host):
                how = "ahead of" if offset > 0 else "behind"
                out.append(f"clocks: {host}'s stamps run {abs(offset):.3f} s {how} {self.reference}'s "
                           f"(±{self.uncertainty[host]:.3f} s, {basis}); its times are corrected before ordering")
            else:
                out.append(f"clocks: {host} and {self.reference} agree within ±{self.uncertainty[host]:.3f} s "
                           f"({basis})")
        return out


def rank_hosts(events: list[Event]) -> dict[int, str]:
    """Each rank's host, where the lines that name both agree on one."""
    seen: dict[int, set[str]] = defaultdict(set)
    for e in events:
        if e.source.rank is not None and e.source.host:
            seen[e.source.rank].add(e.source.host)
    return {rank: next(iter(hosts)) for rank, hosts in seen.items() if len(hosts) == 1}


def estimate(events: list[Event]) -> Clocks:
    per_moment: dict[tuple, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    resolution = 1.0
    hosts_of = rank_hosts(events)
    for e in events:
        host = e.source.host or hosts_of.get(e.source.rank)
        if e.time is None or e.time_inferred or e.clock != "wall" or not host:
            continue
        if e.pattern.id in _WATCHDOG and e.captures.get("seq"):
            key = ("watchdog", e.captures["seq"], e.captures.get("op"))
        elif e.pattern.id in _INIT and e.captures.get("nranks"):
            key = ("init", e.captures["nranks"])
        else:
            continue
        per_moment[key][host].append(e.time)
        if e.time != int(e.time):
            resolution = 0.001
    shared = {k: hosts for k, hosts in per_moment.items() if len(hosts) > 1}
    if not shared:
        return Clocks(rank_hosts=hosts_of)
    count = defaultdict(int)
    for hosts in shared.values():
        for h in hosts:
            count[h] += 1
    reference = min(count, key=lambda h: (-count[h], h))
    diffs: dict[str, list[float]] = defaultdict(list)
    spread: dict[str, float] = defaultdict(float)
    for hosts in shared.values():
        if reference not in hosts:
            continue
        base = statistics.median(hosts[reference])
        for host, times in hosts.items():
            spread[host] = max(spread[host], max(times) - min(times), max(hosts[reference]) - min(hosts[reference]))
            if host != reference:
                diffs[host].append(statistics.median(times) - base)
    offsets = {h: statistics.median(d) for h, d in diffs.items()}
    uncertainty = {h: max(resolution, spread[h], (max(d) - min(d)) / 2) for h, d in diffs.items()}
    uncertainty[reference] = 0.0
    return Clocks(reference, offsets, uncertainty, len(shared), hosts_of)


def qualify(diagnosis: Diagnosis, events: list[Event], clocks: Clocks) -> Diagnosis:
    """Lower the confidence of a first failure that another host's failure follows by less than the clocks allow."""
    init = diagnosis.initiator
    if init is None or init.time is None or diagnosis.undetermined:
        return diagnosis
    for e in sorted(events, key=lambda e: e.time if e.time is not None else float("inf")):
        host = clocks.host_of(e)
        if (e.time is None or e.clock != "wall" or e.role not in FAILURE_ROLES or not host
                or not init.host or host == init.host or e.time < init.time):
            continue
        gap, skew = e.time - init.time, clocks.skew(init.host, host)
        if gap >= skew:
            return diagnosis
        return attrs.evolve(diagnosis, confidence=round(max(0.1, diagnosis.confidence - 0.15), 2),
                            evidence_against=diagnosis.evidence_against + (
                                f"{host} printed a failure {gap:.3f} s later (line {e.line}{e.source.on()}), "
                                f"closer than the two hosts' clocks are known to agree (±{skew:.3f} s): which "
                                "came first is not certain",))
    return diagnosis
