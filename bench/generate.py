"""Write a synthetic N-rank training log of a given size with one failure cascade near its end.

    python bench/generate.py OUT.log --size-mb 1024 --ranks 64

The filler is the usual mix of a healthy job (per-rank step lines, NCCL INFO, DeepSpeed-style logging,
tqdm progress with carriage returns); the cascade reuses the bundled example's real line formats: one
rank's CUDA OOM, watchdog timeouts on the others, torchrun's teardown.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "oom-cascade" / "train.log"


def filler(rng: random.Random, ranks: int, step: int) -> str:
    r = rng.randrange(ranks)
    kind = rng.random()
    if kind < 0.55:
        return (f"[rank{r}]:[2026-12-02 16:{step // 3600 % 60:02d}:{step % 60:02d},{rng.randrange(1000):03d}] "
                f"[INFO] [train.py:211] step {step} loss {rng.uniform(1.5, 3):.4f} lr 2.9e-05 "
                f"tokens/s {rng.randrange(150000, 200000)}\n")
    if kind < 0.75:
        host = f"gpu-node-{r // 8:03d}"
        return (f"{host}:{40000 + r}:{40100 + r} [{r % 8}] NCCL INFO Channel {rng.randrange(32):02d}/0 : "
                f"{r}[{r % 8}] -> {(r + 1) % ranks}[{(r + 1) % 8}] via P2P/CUMEM/read\n")
    if kind < 0.9:
        pct = rng.randrange(100)
        return f"[rank{r}]: Epoch 3:  {pct}%|{'#' * (pct // 10)}| {step}/{step + 900} [12:01<30:00,  1.37it/s]\r"
    return (f"[rank{r}]:[W1202 16:10:{step % 60:02d}.{rng.randrange(10**6):06d}000 ProcessGroupNCCL.cpp:4715] "
            f"[PG ID 0 PG GUID 0 Rank {r}] using GPU {r % 8} as device used by this process is currently unknown.\n")


def cascade() -> str:
    lines = EXAMPLE.read_text().splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if "Traceback" in line)
    return "".join(lines[start:])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--size-mb", type=float, default=100)
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    target = int(args.size_mb * 2**20)
    tail = cascade()
    written = 0
    step = 0
    with args.out.open("w") as out:
        while written < target - len(tail):
            block = "".join(filler(rng, args.ranks, step + i) for i in range(2000))
            step += 2000
            out.write(block)
            written += len(block)
        out.write(tail)


if __name__ == "__main__":
    main()
