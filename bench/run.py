"""Time `firstfault diagnose` against ripgrep on the same file, and report peak memory.

    python bench/run.py [--sizes 100,1024] [--ranks 64]

Generates each log under bench/out/ (git-ignored) once, then prints one line per input: firstfault's
wall time (on every core, and with --jobs 1) and peak RSS (of its largest process) beside
`rg -F -i -c -f <all literals>` on the same file. Besides the synthetic
N-rank logs it measures a hit-sparse log (the healthy corpus, tests/fixtures/clean, repeated to 100 MiB) and three
hostile inputs: one 200 MB line, 50 MB of random bytes and a job folder of
100,000 one-line rank logs in 12,500 host folders (firstfault reads the first 20,000 and says so).
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
CLEAN = HERE.parent / "tests" / "fixtures" / "clean"
HOSTILE = {
    "one-200MB-line.log": lambda f: (f.write(b"x" * 200_000_000),
                                     f.write(b" CUDA error: an illegal memory access was encountered\n")),
    "random-50MB.bin": lambda f: f.write(os.urandom(50_000_000)),
}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="100,1024", help="log sizes in MiB, comma separated")
    parser.add_argument("--ranks", type=int, default=64)
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    literals = _write_literals(OUT / "literals.txt")
    rg = shutil.which("rg")
    inputs = []
    for size in [float(s) for s in args.sizes.split(",")]:
        log = OUT / f"synthetic-{size:g}MiB-{args.ranks}ranks.log"
        if not log.exists():
            subprocess.run([sys.executable, str(HERE / "generate.py"), str(log), "--size-mb", str(size),
                            "--ranks", str(args.ranks)], check=True)
        inputs.append(log)
    sparse = OUT / "clean-corpus-100MiB.log"
    if not sparse.exists():
        corpus = b"".join(p.read_bytes().rstrip(b"\n") + b"\n" for p in sorted(CLEAN.glob("*.log")))
        with sparse.open("wb") as f:
            for _ in range(-(-100 * 2**20 // len(corpus))):
                f.write(corpus)
    inputs.append(sparse)
    for name, write in HOSTILE.items():
        path = OUT / name
        if not path.exists():
            with path.open("wb") as f:
                write(f)
        inputs.append(path)
    inputs.append(_folder(OUT / "folder-100k-files"))
    print(f"{'input':<32} {'lines':>11} {'firstfault':>11} {'--jobs 1':>9} {'peak RSS':>9} {'rg -F -i -c':>12} "
          f"{'ratio':>6} {'1 core':>7}")
    for path in inputs:
        diagnose = [sys.executable, "-m", "firstfault", "diagnose", str(path)]
        ff_wall, ff_rss, code = _isolated(diagnose)
        one_wall, one_rss, _ = _isolated([*diagnose, "--jobs", "1"])
        rg_wall = _isolated([rg, "-F", "-i", "-c", "-f", str(literals), str(path)])[0] if rg else float("nan")
        print(f"{path.name:<32} {_lines(path):>11,} {ff_wall:>10.2f}s {one_wall:>8.2f}s {max(ff_rss, one_rss):>7.0f}MB "
              f"{rg_wall:>11.2f}s {ff_wall / rg_wall:>5.1f}x {one_wall / rg_wall:>6.1f}x"
              + ("" if code in (0, 1) else f"  (exit {code})"))
    if not rg:
        print("ripgrep (rg) is not installed: install it to get the comparison column", file=sys.stderr)
    return 0


def _write_literals(path: Path) -> Path:
    listing = subprocess.run([sys.executable, "-m", "firstfault", "signatures", "list", "--format", "json"],
                             capture_output=True, text=True, check=True)
    refs = json.loads(listing.stdout)["references"]
    path.write_text("\n".join(sorted({lit for r in refs for p in r["patterns"] for lit in p["literals"]})))
    return path


def _folder(path: Path, files: int = 100_000, per_host: int = 8) -> Path:
    if not path.exists():
        for i in range(files):
            host = path / f"node{i // per_host:05d}"
            host.mkdir(parents=True, exist_ok=True)
            (host / f"rank{i}.log").write_text(f"step 1 loss 2.3 rank {i}\n")
    return path


def _lines(path: Path) -> int:
    """Line breaks as firstfault counts them: \\n, \\r\\n and a lone \\r."""
    if path.is_dir():
        return sum(_lines(p) for p in path.rglob("*") if p.is_file())
    count = 0
    with path.open("rb") as f:
        while block := f.read(1 << 24):
            count += block.count(b"\n") + block.count(b"\r") - block.count(b"\r\n")
    return count


def _isolated(cmd: list[str]) -> tuple[float, float, int]:
    """Run cmd under a fresh Python so the peak RSS reported is that command's own."""
    script = ("import json,resource,subprocess,sys,time;s=time.perf_counter();"
              "c=subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL).returncode;"
              "w=time.perf_counter()-s;"
              "print(json.dumps([w,resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss/1024,c]))")
    done = subprocess.run([sys.executable, "-c", script, *cmd], capture_output=True, text=True, check=True)
    wall, rss, code = json.loads(done.stdout)
    return wall, rss, code


if __name__ == "__main__":
    sys.exit(main())
