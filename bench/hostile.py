"""Hostile inputs through the CLI, each in a fresh process: exit code, wall time, peak memory, first message.

    python bench/hostile.py

The inputs of issue 15's bad-input table (binary, invalid UTF-8, NUL, a 200 MB line, CRLF, ANSI, a truncated and
a corrupt .gz, a gzip bomb, empty, a folder with nothing to read, a missing file, /dev/zero) and the blow-ups it
found (100,000 OOM lines without timestamps, nranks 100000000, a 5,000-digit rank). Generated under bench/out/
once. Bound: 200 MB peak memory per input; exit codes 0/1/2 as the README's contract says, never 3.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out" / "hostile"
OOM = ("[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 2 has a total capacity "
       "of 79.15 GiB of which 1.12 GiB is free.\n")


def _write(name: str, make) -> Path:
    path = OUT / name
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        make(path)
    return path


def _gz(path: Path, data: bytes) -> None:
    path.write_bytes(gzip.compress(data))


def _bomb(path: Path) -> None:
    with gzip.open(path, "wb", compresslevel=9) as f:
        block = b"\0" * (1 << 24)
        for _ in range(128):  # 2 GiB of zeros in about 2 MB
            f.write(block)


def inputs() -> list[tuple[str, str]]:
    example = (HERE.parent / "examples" / "oom-cascade" / "train.log").read_bytes()
    empty_dir = OUT / "empty-folder"
    empty_dir.mkdir(parents=True, exist_ok=True)
    return [
        ("random bytes, 10 MB", str(_write("random.bin", lambda p: p.write_bytes(os.urandom(10_000_000))))),
        ("invalid UTF-8", str(_write("invalid-utf8.log", lambda p: p.write_bytes(b"\xff\xfe\xc3(" * 250_000 + example)))),
        ("NUL bytes", str(_write("nul.log", lambda p: p.write_bytes(b"\0" * 1_000_000 + example)))),
        ("one 200 MB line", str(_write("one-200MB-line.log", lambda p: p.write_bytes(b"x" * 200_000_000 + b"\n")))),
        ("CRLF", str(_write("crlf.log", lambda p: p.write_bytes(example.replace(b"\n", b"\r\n"))))),
        ("ANSI colours", str(_write("ansi.log", lambda p: p.write_bytes(
            example.replace(b"[rank", b"\x1b[31m[rank").replace(b"]:", b"]:\x1b[0m"))))),
        ("truncated .gz", str(_write("truncated.log.gz", lambda p: p.write_bytes(gzip.compress(example)[:-40])))),
        ("corrupt .gz", str(_write("corrupt.log.gz", lambda p: p.write_bytes(
            (lambda b: b[:200] + bytes([b[200] ^ 0xFF]) + b[201:])(gzip.compress(example)))))),
        ("gzip bomb (2 GiB of zeros)", str(_write("bomb.log.gz", _bomb))),
        ("empty file", str(_write("empty.log", lambda p: p.write_bytes(b"")))),
        ("folder with nothing to read", str(empty_dir)),
        ("missing file", str(OUT / "no-such.log")),
        ("/dev/zero", "/dev/zero"),
        ("100,000 OOM lines, no timestamps", str(_write("oom-100k.log", lambda p: p.write_text(OOM * 100_000)))),
        ("nranks 100000000", str(_write("nranks.log", lambda p: p.write_text(
            "gpu0301:842624:842643 [0] NCCL INFO comm 0x55d0c8a1c2e0 rank 0 nranks 100000000 cudaDev 0 busId 1b000 "
            "- Init COMPLETE\n" + OOM)))),
        ("a 5,000-digit rank", str(_write("huge-rank.log", lambda p: p.write_text("[rank" + "9" * 5000 + "]: " + OOM)))),
    ]


def _measure(path: str) -> tuple[float, float, int, str]:
    script = ("import json,resource,subprocess,sys,time;s=time.perf_counter();"
              "c=subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL,stderr=subprocess.PIPE,text=True);"
              "w=time.perf_counter()-s;"
              "print(json.dumps([w,resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss/1024,c.returncode,"
              "c.stderr.strip().splitlines()[0] if c.stderr.strip() else '']))")
    done = subprocess.run([sys.executable, "-c", script, sys.executable, "-m", "firstfault", "diagnose", "--brief",
                           path], capture_output=True, text=True, check=True, timeout=600)
    wall, rss, code, message = json.loads(done.stdout)
    return wall, rss, code, message


def main() -> int:
    print(f"{'input':<34} {'exit':>4} {'wall':>8} {'peak RSS':>9}  first message")
    worst = 0.0
    for name, path in inputs():
        wall, rss, code, message = _measure(path)
        worst = max(worst, rss)
        print(f"{name:<34} {code:>4} {wall:>7.2f}s {rss:>7.0f}MB  {message[:90]}")
    print(f"peak memory, worst input: {worst:.0f} MB (bound: 200 MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
