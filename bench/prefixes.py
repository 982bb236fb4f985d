"""How much a verdict depends on the prefix a launcher or logger puts in front of every line.

    python bench/prefixes.py [--split dev|test|all] [--only NAME,...]

Each benchmark case is read once as pasted and once per prefix below with that prefix in front of every non-empty
line, as the tool that prints it would; the figure is how many top verdicts change. A change is not always wrong
(a rank prefix can rightly name a rank, a fragment pasted from mid-line never carries a prefix), so the figure is a
measure of dependence on the wrapper, to compare before and after an engine change, not a score. The rewritten
lines exist only in memory and are never stored as cases.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
import truth  # noqa: E402

# name -> (prefix of line i); each is the form the named tool prints.
PREFIXES: dict[str, Callable[[int], str]] = {
    "slurm --label": lambda i: "3: ",                                     # srun -l
    "torchrun rank tee": lambda i: "[rank3]:",                            # torchrun --tee / log_line_prefix (2.2+)
    "open mpi --tag-output": lambda i: "[1,3]<stderr>:",
    "ray actor": lambda i: "(RayWorkerWrapper pid=2345, ip=10.0.0.7) ",
    "docker compose logs": lambda i: "trainer-1  | ",
    "kubectl logs --timestamps": lambda i: f"2024-05-01T12:00:{i % 60:02d}.123456789Z ",
    "pdsh (deepspeed multi-node)": lambda i: "worker-1: ",
    "journalctl": lambda i: f"Dec 03 17:59:{i % 60:02d} gpu-node-7 python[41234]: ",
    "github actions": lambda i: f"2024-05-01T12:00:{i % 60:02d}.1234567Z ",
    "markdown quote": lambda i: "> ",
}


def wrapped(text: str, prefix: Callable[[int], str]) -> str:
    return "\n".join(prefix(i) + line if line.strip() else line for i, line in enumerate(text.split("\n")))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "test", "all"), default="dev")
    parser.add_argument("--only", help="comma-separated prefix names")
    args = parser.parse_args(argv)

    from firstfault.engine import Engine
    from firstfault.loader import load_library

    cases, _ = truth.load_cases(truth.CASES, set(load_library().references))
    cases = [c for c in cases if args.split == "all" or c.split == args.split]
    engine = Engine()

    def top(text: str) -> str:
        diagnoses = engine.analyze_text(text, "paste.log").diagnoses
        return diagnoses[0].id if diagnoses else "no failure found"

    pasted = {c.id: top(c.text) for c in cases}
    names = args.only.split(",") if args.only else list(PREFIXES)
    print(f"{len(cases)} {args.split} cases; top verdicts that change when every line carries the prefix")
    for name in names:
        changed = [c for c in cases if top(wrapped(c.text, PREFIXES[name])) != pasted[c.id]]
        print(f"  {name:30} {len(changed):5}  {', '.join(c.id for c in changed[:5])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
