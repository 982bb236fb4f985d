"""An edited buffer is scanned again from the last checkpoint before its first changed line: the result is the
whole scan's, by construction (the chunks from a clean checkpoint on are the ones a whole scan reads). Checked on
real lines (the bundled example and the realrun fixtures), edited at random, with chunks small enough to make
many checkpoints."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import firstfault.engine as engine_module
import firstfault.reader as reader
from firstfault.engine import Engine
from firstfault.inputs import text_input

ROOT = Path(__file__).parent.parent
LINES = [line + "\n" for path in [ROOT / "examples" / "oom-cascade" / "train.log",
                                  *sorted((ROOT / "tests" / "fixtures" / "realrun").glob("*.log"))[:6]]
         for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine()


def _scan_state(report):
    scan = report.scans[0]
    events = [(e.pattern.id, e.line, e.col_start, e.col_end, e.text, e.source, e.time, e.captures, e.order)
              for e in scan.events]
    return events, dict(scan.counts), scan.attempt_starts, scan.attempt_ends, scan.report_lines, scan.lines


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(base=st.lists(st.sampled_from(LINES), min_size=1, max_size=300),
       cut=st.integers(0, 300), tail=st.lists(st.sampled_from(LINES), max_size=120), partial=st.booleans(),
       split=st.integers(0, 10**6))
def test_a_rescan_from_a_checkpoint_is_the_whole_scan(engine, monkeypatch, base, cut, tail, partial, split):
    """The new text also given in two parts (an editor buffer and what was appended to it), cut anywhere."""
    monkeypatch.setattr(reader, "TEXT_CHUNK_BYTES", 2048)  # the same for every example: nothing to reset
    monkeypatch.setattr(engine_module, "PASTE_BYTES", 0)  # texts this small are pastes, which are never resumed
    old = "".join(base)
    if partial:  # the last line was still being written
        old = old[:-1]
    cut = min(cut, len(base))
    new = "".join(base[:cut]) + "".join(tail)
    first_changed = cut + 1 if not partial or cut < len(base) else len(base)
    before = engine.analyze([text_input(old, "live.log")])
    again = engine.analyze([text_input(new, "live.log", earlier=(before.scans[0], first_changed))])
    split = split % (len(new) + 1)
    in_parts = engine.analyze([text_input((new[:split], new[split:]), "live.log",
                                          earlier=(before.scans[0], first_changed))])
    whole = engine.analyze([text_input(new, "live.log")])
    assert _scan_state(again) == _scan_state(whole) == _scan_state(in_parts)
    assert again.to_json() == whole.to_json() == in_parts.to_json()


def test_an_append_rescans_only_the_last_chunk(engine, monkeypatch):
    monkeypatch.setattr(reader, "TEXT_CHUNK_BYTES", 4096)
    old = "".join(LINES * 3)
    new = old + "".join(LINES[:40])
    before = engine.analyze([text_input(old, "live.log")])
    at = before.scans[0].resumable(old.count("\n") + 1, 0)
    assert at is not None and at.offset > len(old) - 2 * 4096
    scanned = []
    again = engine.analyze([text_input(new, "live.log", earlier=(before.scans[0], old.count("\n") + 1))],
                           progress=lambda done, total: scanned.append(done))
    assert scanned[-1] < len(new) - at.offset + 4096  # the chunks from the checkpoint on, not the whole text
    assert again.to_json() == engine.analyze([text_input(new, "live.log")]).to_json()


# kvcache-ai/Mooncake#2177: an error-level line that only a paste's reading knows (a paste-only pattern).
PASTE_ONLY = "E0521 16:22:21.694042   162 transfer_metadata.cpp:877] Local segment descriptor not found\n"


def test_a_paste_that_grows_past_a_pastes_size_is_read_as_a_whole_scan_would(engine, monkeypatch):
    monkeypatch.setattr(reader, "TEXT_CHUNK_BYTES", 2048)  # checkpoints after the paste-only line
    old = PASTE_ONLY + "".join(LINES[:200])
    new = old + "".join(LINES * 2)
    assert len(old) <= engine_module.PASTE_BYTES < len(new)
    before = engine.analyze([text_input(old, "live.log")])
    assert any(e.pattern.id == "glog-error-line-cpp" for e in before.scans[0].events)
    again = engine.analyze([text_input(new, "live.log", earlier=(before.scans[0], old.count("\n") + 1))])
    whole = engine.analyze([text_input(new, "live.log")])
    assert _scan_state(again) == _scan_state(whole)
    assert not any(e.pattern.id == "glog-error-line-cpp" for e in again.scans[0].events)
