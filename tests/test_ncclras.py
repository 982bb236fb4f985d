"""NCCL RAS reports (`ncclras`, NCCL 2.24+): real reports pasted in NVIDIA/nccl issues and NVIDIA's user-guide
samples (tests/fixtures/ras/README.md), read as a whole so a rank line means what its section says."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from firstfault.engine import Engine
from firstfault.jobfolder import RAS, walk
from firstfault.ncclras import read_report
from firstfault.reader import InputError

RAS_DIR = Path(__file__).parent / "fixtures" / "ras"
EXAMPLES = Path(__file__).parent.parent / "examples"


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine()


@pytest.mark.parametrize("name, rank, line", [
    ("docs-dead.txt", 21, 5),  # DEAD, then the communicator's missing rank (2.24 wording)
    ("docs-incomplete.txt", 21, 12),  # the process sent no data: INCOMPLETE, not yet dead
    ("docs-json.json", 1, 1),  # ncclras -f json (2.29.1): missing_ranks[] of a 2-rank communicator
    # 2.27.3: process 60004 sent no data; its communicator has 2 of the job's 10 processes, so its "Rank 1" is not
    # a global rank and no rank is named
    ("issue-1762-incomplete.txt", None, 32),
])
def test_a_report_names_the_rank_or_process_that_went_away(engine, name, rank, line):
    report = engine.analyze_paths([RAS_DIR / name])
    top = report.diagnoses[0]
    assert top.reference.id == "nccl-ras-rank-unreachable" and report.inputs[0].kind == RAS
    assert (top.initiator.rank, top.initiator.line) == (rank, line)


@pytest.mark.parametrize("name", ["issue-1730-healthy.txt", "issue-1911-mismatch.txt"])
def test_a_complete_report_is_no_failure(engine, name):
    """Every communicator RUNNING; or a MISMATCH of operation counts, which names no culprit (NVIDIA/nccl#1911)."""
    assert not engine.analyze_paths([RAS_DIR / name]).diagnoses


def test_rank_lines_are_read_by_their_section():
    """In a MISMATCH section "Rank 12 -- GPU 4 ..." lists an outlier, not a missing rank."""
    assert not any("missing" in line.lower() for line in read_report(RAS_DIR / "issue-1911-mismatch.txt").lines)
    lines = read_report(RAS_DIR / "issue-1762-incomplete.txt").lines
    assert "Process 60004 on node 10.4.109.13 managing GPU 0" in lines
    assert not any(line.startswith("The missing rank") for line in lines)


def test_the_json_of_nccl_2_28_7_without_its_comma_is_read(tmp_path):
    """2.28.7-2.28.9 wrote missing_ranks[] with no comma after "nvml_dev" (fixed in 2.29.2)."""
    text = (RAS_DIR / "docs-json.json").read_text()
    broken = text.replace('"nvml_dev": 1,\n          "status"', '"nvml_dev": 1\n          "status"')
    assert broken != text
    with pytest.raises(json.JSONDecodeError):
        json.loads(broken)
    path = tmp_path / "ras.json"
    path.write_text(broken)
    assert "The missing rank: 1" in read_report(path).lines


def test_a_truncated_json_report_is_an_input_problem(tmp_path):
    path = tmp_path / "ras.json"
    path.write_text((RAS_DIR / "docs-json.json").read_text()[:400])
    with pytest.raises(InputError, match="not valid JSON"):
        read_report(path)


def test_a_report_saved_in_a_job_folder_is_found_and_read(engine, tmp_path):
    job = tmp_path / "job"
    shutil.copytree(EXAMPLES / "torchrun-raise", job)
    shutil.copy(RAS_DIR / "docs-dead.txt", job / "ncclras.txt")
    assert [f.kind for f in walk(job).files if f.path.endswith("ncclras.txt")] == [RAS]
    report = engine.analyze_paths([job])
    assert any("1 NCCL RAS report" in n for n in report.notes)
    assert report.diagnoses[0].reference.id == "python-exception-one-rank"  # the rank's own error outranks it
