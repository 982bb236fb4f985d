"""Time `firstfault diagnose` against ripgrep on the same file, and report peak memory.

    python bench/run.py [--sizes 100,1024] [--ranks 64]

Generates each log under bench/out/ (git-ignored) once, then prints one line per size:
firstfault wall time and peak RSS beside `rg -F -i -c -f <all literals>` on the same file.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"




def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="100,1024", help="log sizes in MiB, comma separated")
    parser.add_argument("--ranks", type=int, default=64)
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    literals = OUT / "literals.txt"
    listing = subprocess.run([sys.executable, "-m", "firstfault", "signatures", "list", "--format", "json"],
                             capture_output=True, text=True, check=True)
    refs = json.loads(listing.stdout)["references"]
    literals.write_text("\n".join(sorted({lit for r in refs for p in r["patterns"] for lit in p["literals"]})))
    rg = shutil.which("rg")
    print(f"{'size':>8} {'lines':>11} {'firstfault':>11} {'peak RSS':>9} {'rg -F -i -c':>12} {'ratio':>6}")
    for size in [float(s) for s in args.sizes.split(",")]:
        log = OUT / f"synthetic-{size:g}MiB-{args.ranks}ranks.log"
        if not log.exists():
            subprocess.run([sys.executable, str(HERE / "generate.py"), str(log), "--size-mb", str(size),
                            "--ranks", str(args.ranks)], check=True)
        lines = sum(chunk.count(b"\n") + chunk.count(b"\r") for chunk in iter(
            lambda f=log.open("rb"): f.read(1 << 24), b""))
        # Each measurement in a fresh process so peak RSS is that run's own.
        ff_wall, ff_rss, code = _isolated([sys.executable, "-m", "firstfault", "diagnose", str(log)])
        rg_wall = float("nan")
        if rg:
            rg_wall, _, _ = _isolated([rg, "-F", "-i", "-c", "-f", str(literals), str(log)])
        ratio = ff_wall / rg_wall if rg else float("nan")
        print(f"{size:>6g}MB {lines:>11,} {ff_wall:>10.2f}s {ff_rss:>7.0f}MB {rg_wall:>11.2f}s {ratio:>5.1f}x"
              + ("" if code == 1 else f"  (unexpected exit {code})"))
    if not rg:
        print("ripgrep (rg) is not installed: install it to get the comparison column", file=sys.stderr)
    return 0


def _isolated(cmd: list[str]) -> tuple[float, float, int]:
    script = ("import json,resource,subprocess,sys,time;s=time.perf_counter();"
              "c=subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL).returncode;"
              "w=time.perf_counter()-s;"
              "print(json.dumps([w,resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss/1024,c]))")
    done = subprocess.run([sys.executable, "-c", script, *cmd], capture_output=True, text=True, check=True,
                          env={**os.environ})
    wall, rss, code = json.loads(done.stdout)
    return wall, rss, code


if __name__ == "__main__":
    sys.exit(main())
