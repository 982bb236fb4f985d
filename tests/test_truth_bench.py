"""bench/truth.py's case-by-case comparison (--save-dev / --diff-dev), which says which dev verdicts a change moved."""

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("truth", Path(__file__).resolve().parents[1] / "bench" / "truth.py")
truth = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(truth)


def verdict(ids, cause, confidence=0.6, rank=None, first_rank=None):
    return {"ids": ids, "rank": rank, "confidence": confidence, "possible": False, "cause": cause,
            "first_rank": first_rank}


def test_moved_marks_each_changed_verdict_better_worse_or_moved_and_skips_the_rest():
    before = {
        "a": verdict(["python-exception-one-rank"], "cuda-oom", 0.3),
        "b": verdict(["cuda-oom"], "cuda-oom"),
        "c": verdict([], "none", None),
        "d": verdict(["cuda-oom"], "cuda-oom", 0.75),
        "e": verdict(["collective-timeout"], "collective-timeout", rank=None, first_rank=1),
        "f": verdict(["cuda-oom"], "cuda-oom"),
    }
    after = {
        "a": verdict(["cuda-oom"], "cuda-oom"),
        "b": verdict(["illegal-memory-access", "cuda-oom"], "cuda-oom"),
        "c": verdict(["unrecognised-failure"], "none", 0.3),
        "d": verdict(["cuda-oom"], "cuda-oom", 0.6),
        "e": verdict(["collective-timeout"], "collective-timeout", rank=1, first_rank=1),
        "f": verdict(["cuda-oom"], "cuda-oom"),
    }
    rows = {row.split()[1]: row.split()[0] for row in truth.moved(before, after)}
    assert rows == {"a": "better", "b": "worse", "c": "worse", "d": "moved", "e": "better"}


def test_an_unknown_cause_is_right_when_anything_is_flagged():
    rows = truth.moved({"u": verdict([], "unknown", None)}, {"u": verdict(["unrecognised-failure"], "unknown", 0.3)})
    assert rows and rows[0].split()[0] == "better"
