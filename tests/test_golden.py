"""What a person reads, byte for byte: the CLI's text, brief and markdown reports and `explain`, on the bundled
example and real runs. A change in wording shows up here as a diff to review.
Regenerate after an intended change: FIRSTFAULT_UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py"""

from __future__ import annotations

import os

import pytest

from conftest import FIXTURES, ROOT
from firstfault.cli import main

GOLDEN = FIXTURES / "golden"
CASES = {
    "oom-cascade.txt": ["diagnose", "examples/oom-cascade/train.log"],
    "oom-cascade.brief": ["diagnose", "--brief", "examples/oom-cascade/train.log"],
    "oom-cascade.md": ["diagnose", "--format", "markdown", "examples/oom-cascade/train.log"],
    "oom-cascade-redacted.txt": ["diagnose", "--redact", "examples/oom-cascade/train.log"],
    "rank-hangs.txt": ["diagnose", "tests/fixtures/realrun/rank-hangs.log"],
    "healthy.txt": ["diagnose", "tests/fixtures/clean/torchrun-gloo-healthy.log"],
    "explain-137.txt": ["explain", "137"],
    "explain-xid79.txt": ["explain", "xid79"],
    "explain-nccl-socket-ifname.txt": ["explain", "NCCL_SOCKET_IFNAME"],
}


@pytest.mark.parametrize("name", CASES)
def test_output_is_as_reviewed(capsys, monkeypatch, name):
    monkeypatch.chdir(ROOT)
    main(CASES[name])
    out = capsys.readouterr().out
    golden = GOLDEN / name
    if os.environ.get("FIRSTFAULT_UPDATE_GOLDEN"):
        golden.write_text(out)
    assert golden.read_text() == out, f"{name} changed; review it and regenerate (see this file's docstring)"
