"""cuda-samples' p2pBandwidthLatencyTest in a paste: its bandwidth matrices, read as numbers.

The test copies between every pair of GPUs twice, with peer-to-peer access off (staged through host memory) and on,
and prints each run as a matrix of GB/s under a header ("Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix
(GB/s)"). Peer-to-peer copies slower than the staged ones mean the PCIe path redirects them (ACS, the IOMMU): the
usual cause of NCCL hangs and crawls inside a node, and what NVIDIA asks for in such threads. Healthy and broken
runs print the same words, so the verdict rests on the numbers: the median GPU-to-GPU (off-diagonal) figure with P2P
on against the same run with it off.
"""

from __future__ import annotations

import re
import statistics

from firstfault.context import after_prefixes
from firstfault.diagnosis import Diagnosis, lead_without_failure
from firstfault.matcher import Event, ScanResult
from firstfault.model import Reference

REFERENCE = "p2p-acs-iommu-hang"
HEADER = "p2p-test-bandwidth-matrix"
MEDIAN = "offdiag_median_gbps"
# P2P on slower than this share of P2P off: peer writes are being redirected, not merely uneven.
SLOWER = 0.5
_ROW = re.compile(r"^\s*(\d+)((?:\s+\d+(?:\.\d+)?)+)\s*$")
_COLUMNS = re.compile(r"^\s*D\\D(?:\s+\d+)+\s*$")


def matrix_medians(lines: list[str], first: int, scan: ScanResult) -> None:
    """Sets, on each matrix header of a paste (`lines` from wrapped.paste_lines, the first numbered `first`), the
    median of its GPU-to-GPU figures."""
    def median(e: Event) -> dict[str, str] | None:
        figures = _off_diagonal(lines, e.line - first + 1)
        return {MEDIAN: f"{statistics.median(figures):.2f}"} if figures else None

    scan.add_captures(HEADER, median)


def _off_diagonal(lines: list[str], start: int) -> list[float]:
    """The figures of the matrix below a header, without each GPU's copy to itself."""
    at = start
    if at < len(lines) and _COLUMNS.match(after_prefixes(lines[at])):
        at += 1
    figures = []
    while at < len(lines) and (m := _ROW.match(after_prefixes(lines[at]))):
        row = int(m[1])
        figures += [float(v) for column, v in enumerate(m[2].split()) if column != row]
        at += 1
    return figures


def p2p_verdict(reference: Reference, events: list[Event]) -> Diagnosis | None:
    """Nothing in the input failed, but the test's own numbers say peer-to-peer copies are slower than staged ones:
    a possible cause, pointing at the P2P=Enabled matrix."""
    medians: dict[tuple[str, str], tuple[float, Event]] = {}
    for e in events:
        if e.pattern.id == HEADER and MEDIAN in e.captures:
            medians.setdefault((e.captures.get("direction", ""), e.captures.get("p2p", "")),
                               (float(e.captures[MEDIAN]), e))
    for direction in ("Unidirectional", "Bidirectional"):
        on, off = medians.get((direction, "Enabled")), medians.get((direction, "Disabled"))
        if on and off and on[0] < SLOWER * off[0]:
            return lead_without_failure(
                reference, [on[1], off[1]],
                (f"p2pBandwidthLatencyTest, {direction.lower()}: GPU-to-GPU copies with P2P enabled ran at a median "
                 f"{on[0]:g} GB/s, against {off[0]:g} GB/s with P2P disabled (staged through host memory): "
                 "peer-to-peer traffic is slower than not using it, so the PCIe path redirects it (ACS or the IOMMU)",),
                "these are a benchmark's numbers, not a failure seen in a job: the job's own log shows whether it hung "
                "or ran slowly", confidence=0.35)
    return None
