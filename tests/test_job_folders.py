"""Job folders, torchelastic error files and Flight Recorder dumps, on real runs of torch 2.13 (CPU, gloo) made by
tests/fixtures/jobs/train.py (see the README there), and on hostile files."""

from __future__ import annotations

import json
import os
import pickle
import shutil
from pathlib import Path

import pytest

from firstfault.cli import main
from firstfault.engine import Engine
from firstfault.errorfile import read_error_file
from firstfault.flightrecorder import analyse, load_dump
from firstfault.inputs import collect
from firstfault.jobfolder import DUMP, ERROR_FILE, LOG, walk
from firstfault.reader import InputError

JOBS = Path(__file__).parent / "fixtures" / "jobs"
EXAMPLES = Path(__file__).parent.parent / "examples"  # torchrun-raise, -stall and -ok: made the same way as JOBS
EXAMPLE_JOB = EXAMPLES / "torchrun-stall"


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine()


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_torchrun_log_dir_is_read_with_ranks_from_its_paths():
    folder = walk(EXAMPLES / "torchrun-raise")
    kinds = {Path(f.path).relative_to(EXAMPLES / "torchrun-raise").as_posix().split("/", 2)[-1]: f.kind
             for f in folder.files}
    assert kinds["attempt_0/1/error.json"] == ERROR_FILE and kinds["attempt_0/0/stderr.log"] == LOG
    assert [f.kind for f in folder.files if "/fr/" in f.path] == [DUMP, DUMP]
    error_file = next(f for f in folder.files if f.path.endswith("1/error.json"))
    assert error_file.source.local_rank == 1 and error_file.attempt == 0
    assert "read 2 torchelastic error files, 2 Flight Recorder dumps, 5 logs" in folder.notes()[0]


@pytest.mark.parametrize("job, reference, rank", [
    (EXAMPLES / "torchrun-raise", "python-exception-one-rank", 1),
    # rank 1 stalled before step 3's all_reduce: only the dumps show that it never entered it
    (EXAMPLE_JOB, "collective-lagging-rank-named", 1),
    # two ranks, two different collectives: no majority says which one is wrong
    ("torchrun-mismatch", "mismatched-collectives", None),
], ids=["raise", "stall", "mismatch"])
def test_a_job_folder_gets_the_verdict_its_evidence_supports(capsys, job, reference, rank):
    code, out, err = _run(capsys, "diagnose", "--format", "json", str(JOBS / job if isinstance(job, str) else job))
    report = json.loads(out)
    top = report["diagnoses"][0]
    assert code == 1 and err == ""
    assert top["id"] == reference and top["initiator"]["rank"] == rank
    assert {i["kind"] for i in report["inputs"]} == {"log", "error-file", "flight-recorder"}


def test_the_console_log_alone_cannot_tell_which_rank_stalled(engine):
    """Without the dumps, the stall reads as a timeout with no culprit: the dumps are what name rank 1."""
    report = engine.analyze_paths([EXAMPLE_JOB / "console.log"])
    assert report.diagnoses[0].undetermined
    with_dumps = engine.analyze_paths([EXAMPLE_JOB / "console.log", EXAMPLE_JOB / "fr"])
    assert with_dumps.diagnoses[0].initiator.rank == 1


def test_the_launchers_closing_report_is_not_a_new_attempt(engine):
    """torchrun's ChildFailedError summary after the last worker's failure quotes that failure again."""
    report = engine.analyze_paths([EXAMPLES / "torchrun-raise" / "console.log"])
    assert len(report.attempts) == 1 and report.diagnoses[0].reference.id == "python-exception-one-rank"


def test_error_files_in_both_formats(tmp_path):
    real = read_error_file(next((EXAMPLES / "torchrun-raise").rglob("1/error.json")))
    assert real.message == "ValueError: corrupt shard: /data/shard-00001.bin has 0 bytes"
    assert real.text().startswith("Traceback (most recent call last):") and real.timestamp == 1796329189
    string_form = tmp_path / "error.json"
    string_form.write_text(json.dumps({"message": "Signal 9 (SIGKILL) received by PID 4242", "timestamp": 1700000000},
                                      indent=2))
    parsed = read_error_file(string_form)
    assert parsed.text() == "Signal 9 (SIGKILL) received by PID 4242\n" and parsed.line == 2


@pytest.mark.parametrize("content, words", [
    ('{"message": {"message": "RuntimeError: CUDA error: an illegal memory', "not valid JSON"),
    ('{"error": "no field called", "hint": "message"}', "not a torchelastic error file"),
    ('{"message": 42}', "neither text nor an object"),
    ('{"message": ' + '[' * 100_000, "not valid JSON"),
], ids=["truncated", "no-message-field", "message-a-number", "deeply-nested"])
def test_broken_error_files_are_read_as_text_with_a_note(tmp_path, engine, content, words):
    path = tmp_path / "error.json"
    path.write_text(content)
    with pytest.raises(InputError, match=words):
        read_error_file(path)
    report = engine.analyze_paths([path])
    assert any(words in n and "read as text" in n for n in report.notes)


def test_dumps_are_lined_up_per_collective():
    stall = [load_dump(p) for p in sorted((EXAMPLE_JOB / "fr").iterdir())]
    assert [len(d.entries) for d in stall] == [4, 3]
    finding, = analyse(stall)
    assert finding.rank == 1 and "missing ranks: {1}" in finding.lines
    assert finding.lines[0] == "Not all ranks joining collective, sequence number: 4"


def test_a_majority_names_the_odd_rank_out(tmp_path):
    """Three ranks where rank 2 called broadcast: built from the real mismatch dumps (rank 1's copied to 2)."""
    fr = JOBS / "torchrun-mismatch" / "fr"
    shutil.copy(fr / "nccl_trace_rank_0", tmp_path / "nccl_trace_rank_0")
    shutil.copy(fr / "nccl_trace_rank_0", tmp_path / "nccl_trace_rank_1")
    shutil.copy(fr / "nccl_trace_rank_1", tmp_path / "nccl_trace_rank_2")
    finding, = analyse([load_dump(p) for p in sorted(tmp_path.iterdir())])
    assert finding.rank == 2
    assert finding.lines[-1] == ("error msg: Culprit rank 2; Error type: COLLECTIVE_TYPE_MISMATCH, Expected collective "
                                 "type: 'all_reduce' does not match found collective type: 'broadcast'")


@pytest.mark.parametrize("case", ["stall", "mismatch"])
def test_findings_are_worded_as_pytorchs_own_analyser_words_them(case):
    """torch 2.13's torchfrtrace over the same dumps, their pg_config keyed by group id as NCCL dumps are (it fails
    on gloo's own with KeyError ('0', 0)): every line firstfault writes, bar its tie note, is one fr_trace printed."""
    folder = JOBS / "fr-trace" / case
    theirs = (JOBS / "fr-trace" / f"{case}.txt").read_text().splitlines()
    finding, = analyse([load_dump(p) for p in sorted(folder.iterdir())])
    ours = list(finding.lines)
    if case == "mismatch":  # a tie: fr_trace blames rank 1 (compared second); firstfault names both sides
        assert ours[-1].startswith("error msg: Culprit rank 0;") and finding.rank is None
        ours = ours[:-1]
    assert [line for line in theirs if line in ours] == ours


class _Marker:
    """Unpickling this would create a file: the test checks that it never exists."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_a_malicious_dump_is_refused_and_nothing_in_it_runs(tmp_path, engine):
    marker = tmp_path / "pwned"
    dump = tmp_path / "nccl_trace_rank_0"
    dump.write_bytes(pickle.dumps({"version": "2.10", "entries": [_Marker(str(marker))], "pg_config": {}},
                                  protocol=4))
    with pytest.raises(InputError, match="asks for io.open|asks for builtins.open"):
        load_dump(dump)
    report = engine.analyze_paths([tmp_path])
    assert not marker.exists()
    assert any("not a readable Flight Recorder dump" in n and "skipped" in n for n in report.notes)


@pytest.mark.parametrize("cut", [0, 1, 200], ids=["empty", "one-byte", "truncated"])
def test_a_cut_dump_is_an_input_problem_not_a_crash(tmp_path, cut):
    dump = tmp_path / "nccl_trace_rank_0"
    dump.write_bytes((EXAMPLE_JOB / "fr" / "nccl_trace_rank_0").read_bytes()[:cut] or b"")
    with pytest.raises(InputError):
        load_dump(dump)


def test_links_to_folders_are_not_followed(tmp_path, engine):
    job = tmp_path / "job"
    shutil.copytree(EXAMPLES / "torchrun-raise", job)
    os.symlink(job, job / "loop")
    folder = walk(job)
    assert any("links to folders" in reason for reason, _ in folder.skipped)
    assert engine.analyze_paths([job]).diagnoses[0].reference.id == "python-exception-one-rank"


def test_older_attempts_are_listed_as_skipped(tmp_path):
    job = tmp_path / "job"
    shutil.copytree(EXAMPLES / "torchrun-raise", job)
    run = next((job / "logs").iterdir())
    shutil.copytree(run / "attempt_0", run / "attempt_1")
    folder = walk(job)
    assert all("attempt_0" not in f.path for f in folder.files)
    assert folder.skipped_counts["from earlier torchrun attempts (the verdict is for the newest)"] == 6


def test_a_huge_folder_is_walked_within_its_bounds(tmp_path, monkeypatch):
    import firstfault.jobfolder as jobfolder

    monkeypatch.setattr(jobfolder, "MAX_FILES", 50)
    monkeypatch.setattr(jobfolder, "MAX_ENTRIES", 2_000)
    for i in range(2_500):
        (tmp_path / f"rank{i}.log").write_text(f"step 1 rank {i}\n")
    seen = []
    folder = walk(tmp_path, lambda n, finished: seen.append((n, finished)))
    assert len(folder.files) == 50 and seen[-1] == (2_500, True) and seen[0] == (1_000, False)
    assert folder.skipped_counts["beyond the first 50 files read"] == 1_950
    assert folder.skipped_counts["beyond the first 2,000 entries"] == 500


def test_an_empty_folder_or_one_without_logs_is_an_input_error(tmp_path):
    (tmp_path / "model.safetensors").write_bytes(b"\x00" * 10)
    with pytest.raises(InputError, match="no logs, error files or Flight Recorder dumps"):
        collect([tmp_path])


def test_files_numbered_0_to_n_minus_1_are_one_per_rank(tmp_path):
    """srun -o %x-%j-%t.out: the task number is the rank. Rank 1's file holds the raise example's traceback
    without torch's [rank1]: prefix, so only its name says whose it is; pids (%p) are never taken for ranks."""
    stderr = next((EXAMPLES / "torchrun-raise").rglob("1/stderr.log")).read_text()
    (tmp_path / "train-4242-0.out").write_text("step 0 ok\n")
    (tmp_path / "train-4242-1.out").write_text(stderr.replace("[rank1]: ", ""))
    (tmp_path / "nccl.gpu-node-a.81234").write_text("step 0 ok\n")
    (tmp_path / "nccl.gpu-node-a.81240").write_text("step 0 ok\n")
    sources = {Path(f.path).name: (f.source.rank, f.source.host) for f in walk(tmp_path).files}
    assert sources == {"train-4242-0.out": (0, None), "train-4242-1.out": (1, None),
                       "nccl.gpu-node-a.81234": (None, None), "nccl.gpu-node-a.81240": (None, None)}
    report = Engine().analyze_paths([tmp_path])
    assert report.diagnoses[0].initiator.rank == 1


def test_a_json_dump_is_recognised_past_the_head_of_its_keys():
    """torch 2.13's _dump_fr_trace_json() over 200 all_reduces (gloo, one rank): keys come sorted, so "pg_config"
    lies 93 KB in; the file is still a dump, read whole."""
    path = JOBS / "fr-json" / "nccl_trace_rank_0.json"
    assert walk(path.parent).files[0].kind == DUMP
    dump = load_dump(path)
    assert dump.rank == 0 and [e.seq for e in dump.entries] == list(range(1, 201))
