"""Hosts that differ from their peers: facts each NCCL process prints once (version, CUDA driver, network plugin,
network, NCCL_* settings, IB devices), compared across hosts. A host whose value differs from the others' is
evidence for whatever the verdict is, shown with the values side by side."""

from __future__ import annotations

from collections import Counter, defaultdict

from firstfault.matcher import Event

REFERENCE = "host-config-differs"
FACTS = {
    "nccl-version-info": "NCCL version",
    "nccl-cuda-driver-info": "CUDA driver",
    "nccl-net-plugin-info": "network plugin",
    "nccl-network-info": "network",
    "nccl-ib-devices-info": "IB devices",
    "nccl-env-setting-info": "",  # named by the variable itself
}
SHOWN_HOSTS = 4


def differing_hosts(events: list[Event]) -> list[str]:
    """One sentence per fact on which some hosts disagree with the rest."""
    values: dict[str, dict[str, str]] = defaultdict(dict)  # fact -> host -> value
    for e in events:
        if e.reference_id != REFERENCE or e.pattern.id not in FACTS or not e.source.host:
            continue
        fact = FACTS[e.pattern.id] or e.captures.get("key", "")
        value = e.captures.get("value") or ("internal" if e.captures.get("internal") else "")
        if fact and value:
            values[fact].setdefault(e.source.host, value.strip())
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
