"""What to check next when nothing in the inputs failed: where the first failure usually is instead, and how to get
it. A job that died or hung and left no error in what was read still has one somewhere: above or beside a pasted
excerpt, in another rank's output, in the kernel's log (the OOM killer, a GPU fault), in the scheduler's record, or,
for a hang, in the stacks of the processes that are still waiting."""

from __future__ import annotations

from typing import Iterable, Sequence

from firstfault.diagnosis import InputInfo
from firstfault.matcher import Event
from firstfault.roles import EXCERPT_LINES

_EXCERPT = ("This is a {lines}-line excerpt: the first failure is often above it or in another rank's output; give "
            "firstfault the whole log of every rank, or the job's folder.")
_ELSEWHERE = ("If the job died, its first error is in another rank's output or outside the job: give firstfault every "
              "rank's log, or the job's folder (torchrun's --log-dir, Slurm's output files).")
_HUNG = ("If the job hung, dump every rank's stacks while it hangs (`py-spy dump --pid <PID>` for each process) and "
         "give the dumps to firstfault: the rank that is not in the collective the others wait in is the one to look "
         "at. Or rerun with TORCH_NCCL_TRACE_BUFFER_SIZE=2000 and TORCH_NCCL_DUMP_ON_TIMEOUT=1 for the Flight "
         "Recorder.")
_VANISHED = ("If a process vanished without a word, the kernel's log says whether the OOM killer or a GPU fault ended "
             "it: `dmesg -T | grep -iE 'killed process|out of memory|NVRM: Xid'` on each node.")
# Where the log shows the job ran under a scheduler or cluster manager, that one's own record of how it ended.
_SLURM = ("Slurm's record of how each step ended (OUT_OF_MEMORY, TIMEOUT, NODE_FAIL, the exit code): "
          "`sacct -j <jobid> -o JobID,State,ExitCode,MaxRSS,NodeList`.")
_RAY = ("Ray keeps each worker's own output apart from the driver's: `ray logs` lists it (or "
        "/tmp/ray/session_latest/logs on each node); the failing actor's worker log holds its error.")
_KUBERNETES = ("Kubernetes records what the pod's output cannot: `kubectl describe pod <pod>` (OOMKilled, exit codes, "
               "evictions) and `kubectl get events`.")
# Each: the reference ids (prefixes) and the words of a matched line that show that manager, and its check.
_MANAGERS = ((("slurm-", "srun-"), ("slurmstepd", "srun: ", "sbatch: "), _SLURM),
             (("ray-",), ("(raylet", "ray::"), _RAY),
             (("k8s-",), ("kubelet", "kubectl"), _KUBERNETES))


def next_checks(inputs: Sequence[InputInfo], events: Iterable[Event]) -> tuple[str, ...]:
    """The checks for a report without a diagnosis, the ones the inputs make likeliest first."""
    events = list(events)
    lines = sum(i.lines for i in inputs)
    checks = [_EXCERPT.format(lines=lines) if lines <= EXCERPT_LINES else _ELSEWHERE, _HUNG, _VANISHED]
    for references, words, check in _MANAGERS:
        if any(e.reference_id.startswith(references) or any(w in e.text for w in words) for e in events):
            checks.append(check)
    return tuple(checks)
