"""Comparing a failed run with a good one (`--baseline`): real torch 2.13 runs of tests/fixtures/jobs/train.py in
examples/ (torchrun-ok is the same job with nothing failing), and NCCL INFO lines quoted in signatures/communication/
host-config-differs.toml."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from firstfault.cli import main
from firstfault.engine import Engine

EXAMPLES = Path(__file__).parent.parent / "examples"
REALRUN = Path(__file__).parent / "fixtures" / "realrun"


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine()


def test_what_the_failed_run_printed_and_the_good_one_never_did(engine):
    report = engine.analyze_paths([EXAMPLES / "torchrun-raise"], baseline=[EXAMPLES / "torchrun-ok"])
    top = report.diagnoses[0]
    assert top.reference.id == "python-exception-one-rank" and top.initiator.rank == 1
    assert "the good run never printed this line" in top.evidence_for
    c = report.comparison
    assert c.baseline == (str(EXAMPLES / "torchrun-ok"),)
    assert c.phase == "the failed run reached step 2; the good run reached step 4"
    # console.log twice (behind its rank prefix, and indented in torchrun's summary), stderr.log, error.json
    assert c.new_lines[0].startswith("ValueError: corrupt shard: /data/shard-00001.bin has 0 bytes ×4 (")


def test_a_run_compared_with_itself_has_nothing_new(engine):
    """Whatever both runs printed is noise they share: the same log as its own baseline shows no failure."""
    log = REALRUN / "rank-raises.log"
    alone = engine.analyze_paths([log])
    assert alone.diagnoses
    report = engine.analyze_paths([log], baseline=[log])
    assert not report.diagnoses and report.comparison.new_lines == ()
    assert report.comparison.discounted > 0


def test_the_setup_that_differs(engine, tmp_path):
    good = tmp_path / "good.log"
    good.write_text("gpu0301:842624:842624 [0] NCCL INFO NCCL version 2.26.2+cuda12.6\n"
                    "lccn09:2520136:2520136 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to bond0\n")
    bad = tmp_path / "bad.log"
    bad.write_text("1: p5-dy-gpu-3:47930:47930 [0] NCCL INFO NCCL version 2.26.2+cuda12.2\n"
                   + (REALRUN / "rank-raises.log").read_text())
    c = engine.analyze_paths([bad], baseline=[good]).comparison
    assert "NCCL version: 2.26.2+cuda12.2 in the failed run, 2.26.2+cuda12.6 in the good run" in c.setup
    assert "NCCL_SOCKET_IFNAME was set to bond0 in the good run only" in c.setup


def test_the_cli_shows_the_comparison_in_every_format(capsys):
    args = ["diagnose", str(EXAMPLES / "torchrun-raise"), "--baseline", str(EXAMPLES / "torchrun-ok")]
    assert main([*args, "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)["baseline"]
    assert data["phase"].startswith("the failed run reached step 2") and data["new_lines"]
    assert main([*args, "--format", "markdown"]) == 1
    assert "### Compared with a good run" in capsys.readouterr().out
    assert main(args) == 1
    assert "Error lines the good run never printed:" in capsys.readouterr().out


def test_stdin_cannot_be_the_baseline(capsys):
    assert main(["diagnose", str(REALRUN / "rank-raises.log"), "--baseline", "-"]) == 2
    assert "--baseline takes files or folders" in capsys.readouterr().err


def test_the_failed_run_on_stdin_is_compared_too(capsys, monkeypatch):
    """stdin can be read once: the phase comes from the scan itself, not from a second read."""
    import io

    text = (EXAMPLES / "torchrun-raise" / "console.log").read_text()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    assert main(["diagnose", "-", "--baseline", str(EXAMPLES / "torchrun-ok"), "--format", "json"]) == 1
    assert json.loads(capsys.readouterr().out)["baseline"]["phase"].startswith("the failed run reached step 2")
