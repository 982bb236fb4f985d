"""The real-log benchmark: firstfault's verdict on logs people pasted in public threads.

    python bench/truth.py                   # figures per split, and the dev split's misses
    python bench/truth.py --misses test     # also list the test split's misses (measure only: never tune on them)
    python bench/truth.py --check           # exit 1 when a figure is worse than bench/truth/baseline.json
    python bench/truth.py --update-baseline # store today's figures as the baseline
    python bench/truth.py --save-dev a.json # keep each dev case's verdict, then after a change:
    python bench/truth.py --diff-dev a.json # list the dev cases whose verdict moved, better or worse

Each case is bench/truth/cases/<id>.log (the paste, exactly as posted) and <id>.toml (its thread and label);
bench/truth/README.md says how cases are chosen and labelled. The split is fixed by a hash of the thread's URL,
so every paste from one thread lands on the same side, and no one picks which side a case is on.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import tomllib
from pathlib import Path
from typing import Any, Iterable

import attrs

ROOT = Path(__file__).resolve().parent
CASES = ROOT / "truth" / "cases"
BASELINE = ROOT / "truth" / "baseline.json"
SIGNATURES = ROOT.parent / "signatures"
SPLITS = ("dev", "test")
SHORT_LINES = 5
# How each figure is read: "up" figures are right answers (higher is better), "down" ones are errors.
FIGURES = {
    "top1_confirmed": ("top-1 cause, confirmed", "up"),
    "top1_all": ("top-1 cause, all labelled", "up"),
    "top3_all": ("top-3 cause, all labelled", "up"),
    "first_rank": ("first failing rank", "up"),
    "flagged_unknown": ("unknown cause flagged as a failure", "up"),
    "false_alarms": ("false alarms on negatives", "down"),
    # Not checked alone: a false alarm that becomes only possible raises it. The confident rest is checked.
    "false_alarms_possible": ("... of them only a possible cause", "none"),
    "no_failure": ("'No failure found' on positives", "down"),
    # Of the verdicts the tool gives at confidence 0.6 or more (labelled positives and negatives), the wrong ones.
    "confident_wrong": ("wrong top-1 at confidence >= 0.6", "down"),
}
CONFIDENT = 0.6
# Confidence bands for the reliability table: how often a verdict given at that confidence named the labelled cause.
BANDS = ((0.0, 0.35), (0.35, 0.5), (0.5, 0.6), (0.6, 0.7), (0.7, 1.01))
REQUIRED = {"url": str, "cause": str, "confirmed": bool}
OPTIONAL = {"title": str, "confirmation": str, "first_rank": int, "multi_rank": bool, "stack": list,
            "cut": bool, "notes": str}


@attrs.frozen
class Case:
    id: str
    url: str
    cause: str  # a reference id, "unknown" (a failure no reference covers) or "none" (a healthy log)
    confirmed: bool
    text: str
    first_rank: int | None
    multi_rank: bool
    meta: dict[str, Any]

    @property
    def split(self) -> str:
        return split_of(self.url)

    @property
    def positive(self) -> bool:
        return self.cause != "none"

    @property
    def labelled(self) -> bool:
        return self.cause not in ("none", "unknown")

    @property
    def short(self) -> bool:
        return sum(1 for line in self.text.splitlines() if line.strip()) <= SHORT_LINES


@attrs.frozen
class Outcome:
    case: Case
    ids: tuple[str, ...]
    rank: int | None
    undetermined: bool
    possible: bool = False
    confidence: float | None = None  # the top diagnosis's


def normalise_url(url: str) -> str:
    url = url.strip().split("#", 1)[0].split("?", 1)[0].rstrip("/")
    return re.sub(r"^http://", "https://", url).lower()


def split_of(url: str) -> str:
    """Fixed before any case was read: the parity of the first 32 bits of the normalised URL's SHA-256."""
    digest = hashlib.sha256(normalise_url(url).encode()).hexdigest()
    return SPLITS[int(digest[:8], 16) % 2]


def load_cases(directory: Path, known_ids: set[str]) -> tuple[list[Case], list[str]]:
    cases, problems = [], []
    for meta_path in sorted(directory.glob("*.toml")):
        log_path = meta_path.with_suffix(".log")
        where = meta_path.name
        try:
            meta = tomllib.loads(meta_path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            problems.append(f"{where}: not valid TOML: {exc}")
            continue
        if not log_path.is_file():
            problems.append(f"{where}: no {log_path.name} beside it")
            continue
        bad = [f"'{k}' must be {t.__name__}" for k, t in REQUIRED.items() if not isinstance(meta.get(k), t)]
        bad += [f"'{k}' must be {t.__name__}" for k, t in OPTIONAL.items() if k in meta and not isinstance(meta[k], t)]
        bad += [f"unknown key '{k}'" for k in meta if k not in REQUIRED and k not in OPTIONAL]
        if not bad and meta["cause"] not in known_ids | {"unknown", "none"}:
            bad.append(f"cause '{meta['cause']}' is no reference id (nor 'unknown' / 'none')")
        if bad:
            problems.append(f"{where}: " + "; ".join(bad))
            continue
        text = log_path.read_bytes().decode("utf-8", errors="replace")
        cases.append(Case(meta_path.stem, meta["url"], meta["cause"], meta["confirmed"], text,
                          meta.get("first_rank"), meta.get("multi_rank", False), meta))
    return cases, problems


def run_cases(cases: Iterable[Case]) -> list[Outcome]:
    from firstfault.engine import Engine

    engine = Engine()
    outcomes = []
    for case in cases:
        report = engine.analyze_text(case.text, "paste.log")
        top = report.diagnoses[0] if report.diagnoses else None
        rank = top.initiator.rank if top is not None and top.initiator is not None else None
        outcomes.append(Outcome(case, tuple(d.id for d in report.diagnoses), rank,
                                bool(top is not None and top.undetermined), bool(top is not None and top.possible),
                                top.confidence if top is not None else None))
    return outcomes


def figures(outcomes: list[Outcome]) -> dict[str, list[int]]:
    """Each figure as [count, out of]."""
    def tally(pool: list[Outcome], hit) -> list[int]:
        return [sum(1 for o in pool if hit(o)), len(pool)]

    labelled = [o for o in outcomes if o.case.labelled]
    return {
        "top1_confirmed": tally([o for o in labelled if o.case.confirmed], _top1),
        "top1_all": tally(labelled, _top1),
        "top3_all": tally(labelled, lambda o: o.case.cause in o.ids[:3]),
        "first_rank": tally([o for o in outcomes if o.case.first_rank is not None],
                            lambda o: o.rank == o.case.first_rank),
        "flagged_unknown": tally([o for o in outcomes if o.case.cause == "unknown"], lambda o: bool(o.ids)),
        "false_alarms": tally([o for o in outcomes if not o.case.positive], lambda o: bool(o.ids)),
        "false_alarms_possible": tally([o for o in outcomes if not o.case.positive], lambda o: o.possible),
        "no_failure": tally([o for o in outcomes if o.case.positive], lambda o: not o.ids),
        "confident_wrong": tally([o for o in _judged(outcomes) if o.confidence >= CONFIDENT - 1e-9],
                                 lambda o: not _top1(o)),
    }


def _judged(outcomes: list[Outcome]) -> list[Outcome]:
    """Verdicts whose rightness the labels decide: on a labelled positive (right when it names the cause) and on a
    negative (always wrong). An unknown cause is left out: no reference is right there, yet a generic one may be."""
    return [o for o in outcomes if o.ids and o.case.cause != "unknown"]


def reliability(per_split: dict[str, list[Outcome]]) -> str:
    """How far to trust a verdict: per confidence band, how many of the verdicts given in it were right."""
    head = " | ".join(per_split)
    lines = [f"| confidence of the top verdict | {head} |", "|---|" + "---|" * len(per_split)]
    for low, high in BANDS:
        label = f"{low:.2f}-{min(high, 1.0):.2f}" if high > 1 else f"{low:.2f}-{high - 0.01:.2f}"
        cells = []
        for outcomes in per_split.values():
            band = [o for o in _judged(outcomes) if low - 1e-9 <= o.confidence < high - 1e-9]
            cells.append(_cell([sum(1 for o in band if _top1(o)), len(band)]) + " right")
        lines.append(f"| {label} | {' | '.join(cells)} |")
    return "\n".join(lines)


def _top1(outcome: Outcome) -> bool:
    return bool(outcome.ids) and outcome.ids[0] == outcome.case.cause


def misses(outcomes: list[Outcome]) -> list[str]:
    rows = []
    for o in outcomes:
        case, got = o.case, (o.ids[0] if o.ids else "no failure found")
        wrong = []
        if case.labelled and not _top1(o):
            wrong.append(f"cause: want {case.cause}, got {got}" + (" (undetermined)" if o.undetermined else ""))
        if case.cause == "unknown" and not o.ids:
            wrong.append("unknown cause: no failure found")
        if not case.positive and o.ids:
            wrong.append(f"false alarm: {got}")
        if case.first_rank is not None and o.rank != case.first_rank:
            wrong.append(f"rank: want {case.first_rank}, got {o.rank}")
        if wrong:
            rows.append(f"  {case.id:12} {'; '.join(wrong)}  [{case.url}]")
    return rows


def composition(cases: list[Case]) -> str:
    positives = [c for c in cases if c.positive]
    return (f"{len(cases)} cases: {len(positives)} positive ({sum(c.labelled for c in positives)} with a reference, "
            f"{sum(c.confirmed for c in positives if c.labelled)} of them confirmed; "
            f"{sum(c.cause == 'unknown' for c in positives)} unknown), {len(cases) - len(positives)} negative; "
            f"{sum(c.short for c in cases)} short (1-{SHORT_LINES} lines), {sum(c.multi_rank for c in cases)} multi-rank, "
            f"{sum(c.first_rank is not None for c in cases)} with a known first rank")


def table(per_split: dict[str, dict[str, list[int]]]) -> str:
    lines = [f"| figure | {' | '.join(per_split)} |", "|---|" + "---|" * len(per_split)]
    for key, (label, _) in FIGURES.items():
        cells = [_cell(per_split[s][key]) for s in per_split]
        lines.append(f"| {label} | {' | '.join(cells)} |")
    return "\n".join(lines)


def _cell(value: list[int]) -> str:
    n, total = value
    return f"{n}/{total} ({100 * n / total:.0f}%)" if total else "–"


def regressions(now: dict[str, dict[str, list[int]]], base: dict[str, dict[str, list[int]]]) -> list[str]:
    """A figure is worse when its rate moved the wrong way (cases may be added, so rates, not counts)."""
    worse = []
    checked = {**{k: v for k, v in FIGURES.items() if v[1] != "none"},
               "confident_false_alarms": ("false alarms on negatives, not only a possible cause", "down")}
    for split, old_figures in base.items():
        new_figures = now.get(split, {})
        old_figures, new_figures = _with_confident(old_figures), _with_confident(new_figures)
        for key, (old_n, old_total) in old_figures.items():
            new_n, new_total = new_figures.get(key, [0, 0])
            if not old_total or not new_total or key not in checked:
                continue
            old_rate, new_rate = old_n / old_total, new_n / new_total
            better_up = checked[key][1] == "up"
            if (new_rate < old_rate - 1e-9) if better_up else (new_rate > old_rate + 1e-9):
                worse.append(f"{split}: {checked[key][0]} {_cell([old_n, old_total])} -> {_cell([new_n, new_total])}")
    return worse


def _with_confident(figures: dict[str, list[int]]) -> dict[str, list[int]]:
    if "false_alarms" not in figures or "false_alarms_possible" not in figures:
        return figures
    (alarms, total), (possible, _) = figures["false_alarms"], figures["false_alarms_possible"]
    return {**figures, "confident_false_alarms": [alarms - possible, total]}


def verdicts(outcomes: list[Outcome]) -> dict[str, dict[str, Any]]:
    """Each case's verdict, to compare two engines or libraries case by case (dev only: test is measured, not read)."""
    return {o.case.id: {"ids": list(o.ids[:3]), "rank": o.rank, "confidence": o.confidence, "possible": o.possible,
                        "cause": o.case.cause, "first_rank": o.case.first_rank} for o in outcomes}


def moved(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> list[str]:
    """The cases whose top verdict, rank or confidence changed, each marked better, worse or moved."""
    def right(v: dict[str, Any]) -> tuple[bool, bool]:
        top = v["ids"][0] if v["ids"] else None
        cause_right = top is None if v["cause"] == "none" else (top is not None if v["cause"] == "unknown"
                                                                 else top == v["cause"])
        return cause_right, v["first_rank"] is None or v["rank"] == v["first_rank"]

    def show(v: dict[str, Any]) -> str:
        return f"{v['ids'][0] if v['ids'] else '-'}@{v['confidence']} rank {v['rank']}"

    rows = []
    for case_id in sorted(before.keys() & after.keys()):
        old, new = before[case_id], after[case_id]
        if (old["ids"][:1], old["rank"], old["confidence"]) == (new["ids"][:1], new["rank"], new["confidence"]):
            continue
        was, now = right(old), right(new)
        if any(n < w for n, w in zip(now, was)):
            mark = "worse"
        else:
            mark = "better" if now != was else "moved"
        rows.append(f"  {mark:6} {case_id:12} want {old['cause']}: {show(old)} -> {show(new)}")
    return rows


def leaked_test_urls(cases: list[Case]) -> list[str]:
    """Test-split threads that a signature file cites: they are left out of the figures."""
    cited = set()
    for path in SIGNATURES.rglob("*.toml"):
        cited.update(normalise_url(u) for u in re.findall(r"https?://[^\s\"'<>\])]+", path.read_text(errors="replace")))
    return sorted({c.url for c in cases if c.split == "test" and normalise_url(c.url) in cited})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=Path, default=CASES)
    parser.add_argument("--misses", choices=("dev", "test", "both", "none"), default="dev")
    parser.add_argument("--check", action="store_true", help="fail when a figure is worse than the baseline")
    parser.add_argument("--update-baseline", action="store_true")
    parser.add_argument("--save-dev", type=Path, metavar="FILE", help="write each dev case's verdict to FILE")
    parser.add_argument("--diff-dev", type=Path, metavar="FILE", help="list dev verdicts that moved since FILE")
    args = parser.parse_args(argv)

    from firstfault.loader import load_library

    cases, problems = load_cases(args.cases, set(load_library().references))
    for problem in problems:
        print(f"truth: {problem}", file=sys.stderr)
    if problems:
        return 2
    # A test thread that the library now cites was read while writing it: it no longer measures generality.
    leaked = set(leaked_test_urls(cases))
    seen = [c for c in cases if c.url in leaked]
    cases = [c for c in cases if c.url not in leaked]

    outcomes = run_cases(cases)
    per_split = {s: figures([o for o in outcomes if o.case.split == s]) for s in SPLITS}
    for split in SPLITS:
        print(f"{split}: {composition([c for c in cases if c.split == split])}")
    if seen:
        print(f"test: {len(seen)} case(s) left out because the signature library cites their thread: "
              f"{', '.join(c.id for c in seen)}")
    print()
    print(table(per_split))
    print()
    print(reliability({s: [o for o in outcomes if o.case.split == s] for s in SPLITS}))
    for split in SPLITS:
        if args.misses in (split, "both"):
            rows = misses([o for o in outcomes if o.case.split == split])
            print(f"\n{split} misses ({len(rows)}):")
            print("\n".join(rows) if rows else "  none")
    if args.misses != "both" and args.misses != "test":
        test_misses = len(misses([o for o in outcomes if o.case.split == "test"]))
        print(f"\ntest: {test_misses} cases with a miss (listed with --misses test; measure on them, never tune)")

    dev = verdicts([o for o in outcomes if o.case.split == "dev"])
    if args.save_dev:
        args.save_dev.write_text(json.dumps(dev, indent=1) + "\n")
    if args.diff_dev:
        rows = moved(json.loads(args.diff_dev.read_text()), dev)
        print(f"\ndev verdicts moved since {args.diff_dev} ({len(rows)}):")
        print("\n".join(rows) if rows else "  none")

    if args.update_baseline:
        BASELINE.write_text(json.dumps(per_split, indent=2) + "\n")
        print(f"\nbaseline written to {BASELINE.relative_to(ROOT.parent)}")
    if args.check:
        worse = regressions(per_split, json.loads(BASELINE.read_text()))
        for line in worse:
            print(f"truth: worse than the baseline: {line}", file=sys.stderr)
        if worse:
            return 1
        print("\ntruth: no figure below the baseline")
    return 0


if __name__ == "__main__":
    sys.exit(main())
