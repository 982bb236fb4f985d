"""Logs of real torchrun/gloo jobs with injected faults (tests/realrun/generate.py made them)."""

import tomllib

import pytest

from conftest import REALRUN

EXPECTED = tomllib.loads((REALRUN / "expected.toml").read_text())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_injected_fault_gets_its_verdict(engine, name):
    expected = EXPECTED[name]
    report = engine.analyze_paths([REALRUN / f"{name}.log"])
    top = report.diagnoses[0]
    assert top.id == expected["id"]
    if "rank" in expected:
        assert top.initiator is not None and top.initiator.rank == expected["rank"]
    else:
        assert top.initiator is None or top.initiator.rank is None
