"""Hosts that differ from their peers: facts each NCCL process prints once (version, CUDA driver, network plugin,
network, NCCL_* settings, IB devices), compared across hosts. A host whose value differs from the others' is
evidence for whatever the verdict is, shown with the values side by side."""

from __future__ import annotations

from collections import Counter, defaultdict

from firstfault.diagnosis import Diagnosis, lead_without_failure
from firstfault.matcher import Event
from firstfault.model import Reference

REFERENCE = "host-config-differs"
FACTS = {
    "nccl-version-info": "NCCL version",
    "nccl-cuda-driver-info": "CUDA driver",
    "nccl-net-plugin-info": "network plugin",
    "nccl-net-plugin-path-info": "network plugin",
    "nccl-network-info": "network",
    "nccl-ib-devices-info": "IB devices",
    "nccl-env-setting-info": "",  # named by the variable itself
}
SHOWN_HOSTS = 4


def _facts(events: list[Event]) -> dict[str, dict[str, tuple[str, Event]]]:
    """fact -> host -> (value, the first line that says it)."""
    values: dict[str, dict[str, tuple[str, Event]]] = defaultdict(dict)
    for e in events:
        if e.reference_id != REFERENCE or e.pattern.id not in FACTS or not e.source.host:
            continue
        fact = FACTS[e.pattern.id] or e.captures.get("key", "")
        value = e.captures.get("value") or ("internal" if e.captures.get("internal") else "")
        if fact and value:
            values[fact].setdefault(e.source.host, (value.strip(), e))
    return values


def differing_hosts(events: list[Event]) -> list[str]:
    """One sentence per fact on which some hosts disagree with the rest."""
    return _describe(_facts(events))


def _describe(facts: dict[str, dict[str, tuple[str, Event]]]) -> list[str]:
    values = {fact: {h: v for h, (v, _) in by_host.items()} for fact, by_host in facts.items()}
    lines = []
    for fact, by_host in values.items():
        counts = Counter(by_host.values())
        if len(by_host) < 2 or len(counts) < 2:
            continue
        (common, common_n), *_ = counts.most_common()
        odd = {h: v for h, v in by_host.items() if v != common}
        if common_n == len(by_host) - len(odd) and common_n > len(odd):
            shown = ", ".join(f"{h} has {v}" for h, v in sorted(odd.items())[:SHOWN_HOSTS])
            more = f" (+{len(odd) - SHOWN_HOSTS} more)" if len(odd) > SHOWN_HOSTS else ""
            lines.append(f"{fact} differs between hosts: {shown}{more}, while {common_n} other host(s) have {common}")
        else:
            shown = "; ".join(f"{h}: {v}" for h, v in sorted(by_host.items())[:SHOWN_HOSTS * 2])
            lines.append(f"{fact} differs between hosts ({shown})")
    return lines


def host_difference_verdict(reference: Reference, events: list[Event]) -> Diagnosis | None:
    """Nothing in the input failed, but its hosts run one job with different NCCL setups: a possible cause (a hang
    report that pastes each host's INFO lines), never more. The first line of a differing fact is the place to look."""
    facts = _facts(events)
    differences = _describe(facts)
    if not differences:
        return None
    lines = sorted((e for by_host in facts.values() if len({v for v, _ in by_host.values()}) > 1
                    for _, e in by_host.values()), key=lambda e: (e.input_index, e.line))
    return lead_without_failure(
        reference, lines,
        ("nothing in the input failed, but its hosts set NCCL up differently: a host that differs from its peers is "
         "a common cause of hangs and slow collectives", *differences),
        "no error in the input: the difference is a lead, not a failure that was seen", confidence=0.3)
