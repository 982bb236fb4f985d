"""A large file read in pieces by forked processes gives the report one whole scan gives: the pieces start where a
whole read starts a chunk, and the merge moves line numbers, applies the per-key cap over all pieces, numbers the
events' order again and hands the next piece's first line to an event whose continuation it is. Checked on real
lines, with chunks small enough to make many pieces."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import firstfault.parallel as parallel
import firstfault.reader as reader
from firstfault.engine import Engine
from firstfault.inputs import text_input
from firstfault.matcher import KEEP_PER_KEY
from firstfault.parallel import from_partial, to_partial

ROOT = Path(__file__).parent.parent
LINES = [line + "\n" for path in [ROOT / "examples" / "oom-cascade" / "train.log",
                                  *sorted((ROOT / "tests" / "fixtures" / "realrun").glob("*.log"))[:6]]
         for line in path.read_text().splitlines()]
# A pattern whose evidence continues on the next line (jax-coordination-barrier-timeout, real jaxlib lines).
BARRIER = ("jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Barrier_id: "
           "PjRT_Client_Connect. Timed out task names:\n")
STRAGGLER = "/job:jax_worker/replica:0/task:1\n"
CHUNK = 2048


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine()


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(reader, "CHUNK_BYTES", CHUNK)
    monkeypatch.setattr(parallel, "MIN_SPLIT_BYTES", 0)


def _scan_state(scan):
    events = [(e.pattern.id, e.line, e.col_start, e.col_end, e.text, e.source, e.time, e.captures, e.order)
              for e in scan.events]
    return events, dict(scan.counts), scan.attempt_starts, scan.attempt_ends, scan.report_lines, scan.lines


def _both(engine: Engine, path: Path, jobs: int):
    whole = engine.analyze_paths([path])
    engine.jobs = jobs
    try:
        pieces = engine.analyze_paths([path])
    finally:
        engine.jobs = 1
    return whole, pieces


def _dressed(line: str, how: int) -> str:
    """The same line as terminals and Windows tools write it: CRLF, colour escapes, a non-ASCII word."""
    body = line.rstrip("\n")
    return [line, body + "\r\n", f"\x1b[31m{body}\x1b[0m\n", f"Größe {body}\n"][how]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.tuples(st.sampled_from(LINES), st.integers(0, 3)), min_size=1, max_size=400),
       jobs=st.integers(2, 4))
def test_pieces_merged_are_the_whole_scan(engine, small_chunks, tmp_path_factory, lines, jobs):
    path = tmp_path_factory.mktemp("pieces") / "train.log"
    path.write_text("".join(_dressed(line, how) for line, how in lines), encoding="utf-8")
    whole, pieces = _both(engine, path, jobs)
    assert _scan_state(pieces.scans[0]) == _scan_state(whole.scans[0])
    assert pieces.to_json() == whole.to_json()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.tuples(st.sampled_from(LINES), st.integers(0, 3)), min_size=1, max_size=400),
       jobs=st.integers(2, 4), cut=st.integers(0, 400), tail=st.lists(st.sampled_from(LINES), max_size=60))
def test_a_buffer_in_pieces_is_the_whole_scan_and_an_edit_resumes_from_its_checkpoints(
        engine, small_chunks, monkeypatch, lines, jobs, cut, tail):
    """An editor's buffer is cut in memory; the merged checkpoints are the whole scan's, so the next edit's rescan
    from one of them is the whole scan of the edited buffer."""
    monkeypatch.setattr(reader, "TEXT_CHUNK_BYTES", CHUNK)
    dressed = [_dressed(line, how) for line, how in lines]
    text = "".join(dressed)
    whole = engine.analyze([text_input(text, "live.log")])
    engine.jobs = jobs
    try:
        pieces = engine.analyze([text_input(text, "live.log")])
    finally:
        engine.jobs = 1
    assert _scan_state(pieces.scans[0]) == _scan_state(whole.scans[0])
    assert pieces.scans[0].checkpoints == whole.scans[0].checkpoints
    assert pieces.to_json() == whole.to_json()
    cut = min(cut, len(dressed))
    edited = "".join(dressed[:cut]) + "".join(tail)
    again = engine.analyze([text_input(edited, "live.log", earlier=(pieces.scans[0], cut + 1))])
    assert again.to_json() == engine.analyze([text_input(edited, "live.log")]).to_json()


def test_a_buffer_cut_after_its_first_failures_keeps_the_whole_scans_checkpoints(engine, small_chunks, monkeypatch):
    monkeypatch.setattr(reader, "TEXT_CHUNK_BYTES", CHUNK)
    text = (ROOT / "examples" / "oom-cascade" / "train.log").read_text() * 3
    assert len(reader.text_grid_split(reader.TextBytes((text,)), 2)) == 1
    whole = engine.analyze([text_input(text, "live.log")])
    engine.jobs = 2
    try:
        pieces = engine.analyze([text_input(text, "live.log")])
    finally:
        engine.jobs = 1
    assert pieces.scans[0].checkpoints == whole.scans[0].checkpoints
    assert pieces.to_json() == whole.to_json()


def test_pieces_are_forked_while_another_thread_waits_on_stdin(engine, small_chunks, monkeypatch):
    """The language server reads the editor's messages from stdin in a thread, which holds stdin's lock while it
    waits; a worker forked meanwhile must not wait for that lock in its copy (multiprocessing closes stdin there)."""
    monkeypatch.setattr(reader, "TEXT_CHUNK_BYTES", CHUNK)
    read_end, write_end = os.pipe()
    stdin = open(read_end, encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", stdin)
    waiting = threading.Thread(target=stdin.buffer.read, args=(1,), daemon=True)
    waiting.start()
    text = (ROOT / "examples" / "oom-cascade" / "train.log").read_text() * 3
    engine.jobs = 2
    done = []
    analysis = threading.Thread(target=lambda: done.append(engine.analyze([text_input(text, "live.log")])), daemon=True)
    try:
        analysis.start()
        analysis.join(120)  # a deadlock never ends; this only keeps the test run from hanging with it
    finally:
        engine.jobs = 1
        os.write(write_end, b"x")
        waiting.join()
        os.close(write_end)
    assert done and done[0].to_json() == engine.analyze([text_input(text, "live.log")]).to_json()


def test_the_cap_per_key_and_a_continuation_hold_across_a_cut(engine, small_chunks, monkeypatch, tmp_path):
    monkeypatch.setattr(reader, "CHUNK_BYTES", 8192)
    # Real lines, then one line of '#' sized so that the barrier line ends just before the grid line at 8192 and
    # its continuation crosses it: the cut falls between the two.
    head = "".join(LINES)[:8192 - len(BARRIER) - 200]
    head = head[:head.rfind("\n") + 1]
    head += "#" * (8192 - len(head) - len(BARRIER) - 11) + "\n"
    text = head + BARRIER + STRAGGLER + "".join(BARRIER + STRAGGLER for _ in range(KEEP_PER_KEY + 5)) + head
    path = tmp_path / "jax.log"
    path.write_text(text)
    assert reader.grid_split(path, len(text), 2) == [len(head + BARRIER)]
    whole, pieces = _both(engine, path, 2)
    assert _scan_state(pieces.scans[0]) == _scan_state(whole.scans[0])
    kept = [e for e in pieces.scans[0].events if e.pattern.id == "jax-barrier-timed-out"]
    assert kept[0].captures.get("continuation") == STRAGGLER.strip()
    assert len(kept) == KEEP_PER_KEY


def test_a_file_without_a_clean_place_to_cut_is_read_whole(engine, small_chunks, tmp_path):
    path = tmp_path / "one-line.log"
    path.write_text("x" * (CHUNK * 3) + " CUDA error: an illegal memory access was encountered\n")
    assert reader.grid_split(path, path.stat().st_size, 2) == []
    whole, pieces = _both(engine, path, 2)
    assert pieces.to_json() == whole.to_json()


def test_a_partial_scan_is_plain_data_and_refuses_another_library(engine, tmp_path):
    path = tmp_path / "train.log"
    path.write_text("".join(LINES))
    scan = engine.analyze_paths([path]).scans[0]
    partial = to_partial(scan, engine.matcher)
    import json
    again = from_partial(json.loads(json.dumps(partial)), engine.matcher, str(path), 0)
    assert [(e.pattern.id, e.line, e.captures) for e in again.events] == \
           [(e.pattern.id, e.line, e.captures) for e in scan.events]
    with pytest.raises(ValueError, match="same library"):
        from_partial({**partial, "patterns": partial["patterns"] + 1}, engine.matcher, str(path), 0)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=st.lists(st.lists(st.sampled_from(LINES), max_size=120), min_size=2, max_size=6),
       jobs=st.integers(2, 3))
def test_files_spread_over_processes_are_read_as_in_one(engine, small_chunks, tmp_path_factory, files, jobs):
    folder = tmp_path_factory.mktemp("ranks")
    paths = []
    for rank, lines in enumerate(files):
        path = folder / f"rank{rank}.log"
        path.write_text("".join(lines))
        paths.append(path)
    whole = engine.analyze_paths(paths)
    engine.jobs = jobs
    try:
        spread = engine.analyze_paths(paths)
    finally:
        engine.jobs = 1
    assert [_scan_state(scan) for scan in spread.scans] == [_scan_state(scan) for scan in whole.scans]
    assert spread.to_json() == whole.to_json()


def test_a_compressed_file_is_read_in_one_process(engine, small_chunks, tmp_path, monkeypatch):
    import gzip
    path = tmp_path / "train.log.gz"
    path.write_bytes(gzip.compress("".join(LINES * 3).encode()))
    monkeypatch.setattr(parallel, "_scan_piece", None)  # a piece sent to a worker would fail here
    whole, pieces = _both(engine, path, 2)
    assert pieces.to_json() == whole.to_json()
