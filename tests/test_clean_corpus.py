"""The clean-log corpus: healthy jobs on which no reference may fire, except the listed known false positives."""

from __future__ import annotations

import tomllib

import pytest

from conftest import ROOT
from firstfault.engine import Engine
from firstfault.loader import load_library

CLEAN = ROOT / "tests" / "fixtures" / "clean"
KNOWN = tomllib.loads((ROOT / "signatures" / "_false-positives.toml").read_text(encoding="utf-8"))["known"]
LOGS = sorted(CLEAN.glob("*.log"))


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine(load_library())


def test_the_corpus_has_healthy_logs():
    assert len(LOGS) >= 2


@pytest.mark.parametrize("log", LOGS, ids=[p.stem for p in LOGS])
def test_nothing_is_diagnosed_on_a_healthy_log(engine: Engine, log):
    report = engine.analyze_paths([log])
    found = {d.id for d in report.diagnoses}
    listed = {k["reference"] for k in KNOWN if (ROOT / k["log"]).resolve() == log.resolve()}
    assert found == listed, (f"{log.name}: diagnosed {sorted(found - listed)} (not listed in "
                             f"signatures/_false-positives.toml); listed but gone: {sorted(listed - found)}")


def test_every_known_false_positive_names_a_log_a_reference_and_a_reason():
    ids = set(load_library().references)
    for k in KNOWN:
        assert (ROOT / k["log"]).is_file() and k["reference"] in ids and len(k["reason"]) > 20, k
