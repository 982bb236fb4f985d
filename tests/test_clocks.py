"""Hosts whose clocks disagree: offsets from moments every rank printed together (the watchdog timeouts of one
collective), corrected before ordering; a first failure closer to another host's than the clocks agree is not
shown to be first. On the bundled example (8 ranks, gpu-node-a runs 0-3, gpu-node-b 4-7)."""

from __future__ import annotations

import re
from pathlib import Path

import attrs
import pytest

from firstfault.clocks import ASSUMED_SKEW, Clocks, estimate, qualify
from firstfault.engine import Engine

EXAMPLE = Path(__file__).parent.parent / "examples" / "oom-cascade" / "train.log"
GLOG = re.compile(r"^(\[rank([4-7])\]:\[E\d{4} )(\d\d):(\d\d):(\d\d\.\d+)")


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine()


def _shift_node_b(seconds: float) -> str:
    """The example with gpu-node-b's stamps moved, as if its clock were off."""
    out = []
    for line in EXAMPLE.read_text().splitlines(keepends=True):
        if m := GLOG.match(line):
            total = int(m[3]) * 3600 + int(m[4]) * 60 + float(m[5]) + seconds
            stamp = f"{int(total // 3600):02d}:{int(total % 3600 // 60):02d}:{total % 60:09.6f}"
            line = m[1] + stamp + line[m.end():]
        out.append(line)
    return "".join(out)


def test_clocks_that_agree_are_left_as_stamped(engine):
    report = engine.analyze_paths([EXAMPLE])
    note, = [n for n in report.notes if n.startswith("clocks:")]
    assert note.startswith("clocks: gpu-node-b and gpu-node-a agree within ±0.0")


def test_a_host_whose_clock_runs_behind_is_corrected(engine, tmp_path):
    """gpu-node-b stamped 700 s early: its watchdog timeouts would seem to come before rank 2's OOM."""
    log = tmp_path / "train.log"
    log.write_text(_shift_node_b(-700))
    report = engine.analyze_paths([log])
    note, = [n for n in report.notes if n.startswith("clocks:")]
    assert note.startswith("clocks: gpu-node-b's stamps run 700.0") and "behind gpu-node-a's" in note
    top = report.diagnoses[0]
    assert top.reference.id == "cuda-oom" and top.initiator.rank == 2
    assert not any("clocks are known to agree" in e for e in top.evidence_against)
    # The report's events carry the corrected times: measured again, the hosts agree.
    assert estimate(list(report.events)).offsets["gpu-node-b"] == pytest.approx(0, abs=0.05)


def test_a_first_failure_closer_to_another_hosts_than_the_clocks_agree_is_not_certain(engine):
    report = engine.analyze_paths([EXAMPLE])
    top = report.diagnoses[0]
    other = next(e for e in report.events if e.source.rank == 6 and e.role in ("cause", "symptom"))
    close = attrs.evolve(other, time=top.initiator.time + 0.3)
    unknown = Clocks(rank_hosts={6: "gpu-node-b"})
    lowered = qualify(top, [close], unknown)
    assert lowered.confidence == pytest.approx(top.confidence - 0.15)
    assert f"(±{ASSUMED_SKEW:.3f} s)" in lowered.evidence_against[-1]
    measured = Clocks("gpu-node-a", {"gpu-node-b": 0.0}, {"gpu-node-b": 0.026, "gpu-node-a": 0.0}, 1,
                      {6: "gpu-node-b"})
    assert qualify(top, [close], measured) == top
