"""Without a diagnosis, the report says where the failure can be instead and how to get it."""

import json

from conftest import CLEAN, EXAMPLES
from firstfault.cli import main

HEALTHY = CLEAN / "nccl-info-2node-socket-all-reduce-perf.log"  # a real 2-node NCCL run that worked
# srun's line once a step it waited for was created (signatures/scheduler/slurm-step-creation-failed.toml cites it)
SLURM_LINE = "srun: Step created for job 63426764"


def checks(engine, text):
    report = engine.analyze_text(text, "paste.log")
    assert not report.diagnoses
    return report.next_checks


def test_a_clean_log_names_where_to_look_next(engine):
    found = checks(engine, HEALTHY.read_text())
    assert any("every rank's log" in c for c in found)
    assert any("py-spy dump --pid <PID>" in c for c in found)
    assert any("dmesg -T" in c for c in found)
    assert not any("excerpt" in c or "sacct" in c for c in found)


def test_an_excerpt_is_told_to_bring_the_whole_log(engine):
    head = "\n".join(HEALTHY.read_text().splitlines()[:5])
    assert "This is a 5-line excerpt" in checks(engine, head)[0]


def test_a_job_that_ran_under_slurm_gets_slurms_record(engine):
    assert any("sacct -j <jobid>" in c for c in checks(engine, SLURM_LINE))


def test_the_checks_are_in_every_format_and_only_without_a_diagnosis(capsys):
    assert main(["diagnose", str(HEALTHY)]) == 0
    out = capsys.readouterr().out
    assert "Check next" in out and "py-spy dump" in out
    assert main(["diagnose", "--format", "markdown", str(HEALTHY)]) == 0
    assert "**Check next**" in capsys.readouterr().out
    assert main(["diagnose", "--format", "json", str(HEALTHY)]) == 0
    assert any("dmesg" in c for c in json.loads(capsys.readouterr().out)["next_checks"])
    assert main(["diagnose", "--format", "json", str(EXAMPLES / "oom-cascade" / "train.log")]) == 1
    assert "next_checks" not in json.loads(capsys.readouterr().out)
