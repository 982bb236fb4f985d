"""A tiny torch.distributed (gloo) job whose FAULT environment variable injects one failure.

Run under torchrun by generate.py; each mode reproduces a failure users meet on real clusters.
"""

import datetime
import os
import signal
import sys
import time

import torch
import torch.distributed as dist

FAULT = os.environ.get("FAULT", "none")
FAULT_RANK = int(os.environ.get("FAULT_RANK", "1"))


def main() -> None:
    if FAULT == "late-init" and os.environ.get("RANK") == str(FAULT_RANK):
        time.sleep(40)  # a rank stuck before init_process_group (slow import, data download, a hang)
    if FAULT == "no-master-addr":
        os.environ.pop("MASTER_ADDR", None)  # as a launch script that never exports it
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=int(os.environ.get("PG_TIMEOUT", "15"))))
    if FAULT == "init-twice":
        dist.init_process_group("gloo")  # as a framework helper and the script each initialising
    rank = dist.get_rank()
    if FAULT == "cuda-on-cpu-build":
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))  # a DDP script on a CPU-only torch
    if FAULT == "slow":
        for _ in range(120):  # a long training loop, to be stopped from outside
            dist.all_reduce(torch.ones(4))
            time.sleep(0.5)
        return
    if FAULT == "monitored-barrier":
        if rank == FAULT_RANK:
            time.sleep(30)
        dist.monitored_barrier(timeout=datetime.timedelta(seconds=5))
        return
    if FAULT == "unused-param":
        ddp_with_an_unused_parameter()
        return
    world = dist.get_world_size()
    print(f"rank {rank}/{world} started on pid {os.getpid()}", flush=True)
    t = torch.ones(4)
    for step in range(3):
        dist.all_reduce(t)
        print(f"rank {rank} step {step} ok sum={t.sum().item():.0f}", flush=True)
    if rank == FAULT_RANK:
        if FAULT == "raise":
            raise ValueError(f"bad batch at step 3 on rank {rank}")
        if FAULT == "segv":
            os.kill(os.getpid(), signal.SIGSEGV)
        if FAULT == "sigkill":
            os.kill(os.getpid(), signal.SIGKILL)
        if FAULT == "early-exit":
            return  # this rank ran out of data and leaves cleanly; the others are still in their collectives
        if FAULT == "dataloader-kill":
            load_with_a_killed_worker()
        if FAULT == "abort":
            os.abort()  # as a failed C++ assertion or std::terminate would
        if FAULT == "exit":
            sys.exit(3)  # a script that exits with an error code and prints no traceback
        if FAULT == "hang":
            time.sleep(120)
        if FAULT == "mismatch":
            dist.all_reduce(torch.ones(7))
            dist.barrier()
            return
    dist.all_reduce(t)
    dist.barrier()
    print(f"rank {rank} done", flush=True)
    dist.destroy_process_group()


class KilledOnFirstItem(torch.utils.data.Dataset):
    """A data-loading worker that the kernel kills, as the OOM killer does to a worker holding too much memory."""

    def __len__(self) -> int:
        return 8

    def __getitem__(self, index: int):
        os.kill(os.getpid(), signal.SIGKILL)


def load_with_a_killed_worker() -> None:
    for _ in torch.utils.data.DataLoader(KilledOnFirstItem(), num_workers=2):
        pass


def ddp_with_an_unused_parameter() -> None:
    """A module whose second layer never takes part in the loss: DDP's reducer waits for its gradient."""
    class TwoHeads(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.used = torch.nn.Linear(4, 4)
            self.unused = torch.nn.Linear(4, 4)

        def forward(self, x):
            return self.used(x)

    model = torch.nn.parallel.DistributedDataParallel(TwoHeads())
    for _ in range(2):
        model(torch.ones(2, 4)).sum().backward()


if __name__ == "__main__":
    sys.exit(main())
