"""Stack dumps in a paste (py-spy's, Python's faulthandler): where each process's main thread stands, and which one
is not where the others wait.

A hung job prints nothing, so what people paste is `py-spy dump --pid P` for each rank (what this tool's own next
checks ask for), or the dump Python's faulthandler writes (on a fatal signal, a timer, or a signal the job registered).
py-spy prints, per process, "Process P: <command line>", then per thread a header, `Thread T (active): "MainThread"`,
and one line per frame, innermost first: `    all_reduce (torch/distributed/distributed_c10d.py:2050)` (src/dump.rs,
0.3-0.4; `--native` adds frames without a line number above the Python ones). faulthandler prints per thread
`Thread 0x... (most recent call first):` and `  File "path", line N in function`, without thread names: the thread
whose outermost frame is not threading's bootstrap is the main one. A main thread whose innermost Python frames are a
collective of torch.distributed (or DeepSpeed's, vLLM's, SGLang's wrappers) waits for its peers; one that is
elsewhere is the rank they wait for, and processes waiting in different collectives took different code paths.
Native dumps (gdb, lldb; nativeframes.py reads them) add what Python frames cannot show: a thread inside NCCL's
communicator teardown, which never returns when the abort hangs. Nothing in a dump failed, so each reading is a lead.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import cache

import attrs

from firstfault.commands import fill, own_inputs
from firstfault.context import after_prefixes
from firstfault.diagnosis import Diagnosis, clip, lead_without_failure
from firstfault.matcher import Event, ScanResult
from firstfault.model import Command, Reference
from firstfault.nativeframes import BACKGROUND, COLLECTIVE as IN_COLLECTIVE, GPU_WAIT, INIT, TEARDOWN, Thread, \
    classify, has_thread_headers, native_thread

HANG = "collective-timeout"
MISMATCH = "mismatched-collectives"
ABORT_HANG = "nccl-abort-hang"
PYSPY, FAULTHANDLER = "pyspy-main-thread", "faulthandler-thread"  # the patterns of a dumped thread's header
PYSPY_OTHER = "pyspy-other-thread"  # py-spy's header of a thread that is not the main one
GDB, LLDB = "gdb-first-frame", "lldb-frame-zero"  # the first frame a paste shows of a native thread
COLLECTIVE, FRAME, CALLER, PID, ENTRY, PHASE = "collective", "frame", "caller", "pid", "entry", "phase"
LAUNCH = "in_launch"  # set where the thread is blocked inside the kernel launch of NCCL's collective
# A frame: "    name (file:line)"; native frames have no line ("    pthread_cond_wait (libc.so.6)").
_FRAME = re.compile(r"^\s{2,}(?P<function>\S.*?) \((?P<file>[^()\s]*)(?::(?P<line>\d+))?\)\s*$")
# faulthandler's frame, after whatever a launcher put in front of the line: '  File "path", line N in function'.
_FAULT_FRAME = re.compile(r'^File "(?P<file>[^"]*)", line (?P<line>\d+) in (?P<function>\S+)')
_THREAD_START = re.compile(r"(?:^|/)threading\.py$")  # a thread's outermost frame, unless it is the main thread
_PROCESS = re.compile(r"^\s*Process (?P<pid>\d+): ")
_LOCALS = re.compile(r"^\s{8,}\S")  # --locals: "        Arguments:", "            name: value"
_TORCH = re.compile(r"(?:^|/)torch/")  # py-spy shortens paths to the package; an absolute one may remain
_CUDA_SYNC = re.compile(r"(?:^|/)torch/cuda/")
# Frames every process starts in (spawn, runpy, threads, event loops): not what tells one program from another.
_BOOTSTRAP = re.compile(r"^<string>$|^<frozen |(?:^|/)(?:multiprocessing|asyncio|concurrent)/"
                        r"|(?:^|/)(?:runpy|threading)\.py$")
# Where a collective's Python frames live (the communication layers, not the trainers that call them), and the calls
# that wait for every peer.
_DISTRIBUTED = ("torch/distributed/", "deepspeed/comm/", "deepspeed/runtime/zero/", "deepspeed/utils/",
                "vllm/distributed/", "sglang/srt/distributed/", "megatron/core/tensor_parallel/",
                "megatron/core/distributed/", "horovod/torch/", "apex/parallel/")
_COLLECTIVES = frozenset({
    "all_reduce", "all_reduce_coalesced", "all_gather", "all_gather_into_tensor", "_all_gather_base",
    "all_gather_object", "all_gather_coalesced", "reduce_scatter", "reduce_scatter_tensor", "_reduce_scatter_base",
    "broadcast", "broadcast_object_list", "broadcast_tensor_dict", "barrier", "monitored_barrier",
    "_store_based_barrier", "all_to_all", "all_to_all_single", "reduce", "gather", "gather_object", "scatter",
    "scatter_object_list", "inference_all_reduce", "allreduce", "allgather",
})


@attrs.frozen
class Dump:
    event: Event  # the main thread's header
    collective: str  # the call it waits in, or ""
    frame: str  # its innermost Python frame, "function (file:line)"
    caller: str  # the first frame outside the distributed packages: where the code called the collective ("" if cut)
    pid: str
    entry: str  # its outermost frame of its own: processes of one program (the ranks) share it
    phase: str  # what its native frames show it doing (nativeframes.py), or ""
    in_launch: bool = False

    def name(self) -> str:
        if self.pid:
            return f"process {self.pid}"
        rank = self.event.source.rank
        return f"rank {rank}" if rank is not None else f"the process at line {self.event.line}"


def read_dumps(lines: list[str], first: int, scan: ScanResult) -> None:
    """Sets, on each main-thread header of a paste (`lines` from wrapped.paste_lines, the first numbered `first`), where
    that thread stands."""
    def stand(e: Event) -> dict[str, str] | None:
        at = e.line - first
        faulthandler = e.pattern.id == FAULTHANDLER
        frames = (_fault_frames if faulthandler else _pyspy_frames)(lines, at + 1)
        python = [f for f in frames if ".py" in f[1]]
        native = classify([f[0] for f in frames]) if frames else None
        pid = _pid(lines, at, e.captures.get("tid", ""))
        if native and native.phase == TEARDOWN:
            return _native_captures(native, pid)
        if not python:
            # Only native frames (`py-spy dump --native` cut above the Python ones): a thread in NCCL still says where.
            if native and native.phase in (IN_COLLECTIVE, INIT):
                return _native_captures(native, pid, _where(frames[0]))
            return None
        if faulthandler and _THREAD_START.search(python[-1][1]):
            return None
        collective, caller = "", ""
        for function, file, line in python:
            if not _TORCH.search(file) and not _distributed(file):
                caller = _where((function, file, line))
                break
            if not collective and ((function in _COLLECTIVES and _distributed(file))
                                   or (function == GPU_WAIT and _CUDA_SYNC.search(file))):
                collective = function
        own = [f for f in python if not _BOOTSTRAP.search(f[1])]
        return {COLLECTIVE: collective, FRAME: _where(python[0]), CALLER: caller, PHASE: "",
                ENTRY: f"{own[-1][0]} ({own[-1][1]})" if own else "", PID: pid}

    def other(e: Event) -> dict[str, str] | None:
        """A py-spy thread besides the main one: only its native frames inside NCCL say anything."""
        frames = _pyspy_frames(lines, e.line - first + 1)
        thread = classify([f[0] for f in frames]) if frames else None
        if thread is None or thread.phase not in (TEARDOWN, IN_COLLECTIVE, INIT):
            return None
        return _native_captures(thread, "")

    # Whether the paste is a bare backtrace (no thread headers anywhere): read once, and only for a native dump.
    bare = cache(lambda: not has_thread_headers(lines))

    def native(e: Event) -> dict[str, str] | None:
        thread = native_thread(lines, e.line - first, bare=bare())
        # Of a process's other threads only those its frames place say anything (in NCCL or MPI, waiting for the GPU, a
        # library's helper); a data loader's or autograd's own work does not.
        if thread is None or not (thread.main or thread.phase):
            return None
        return _native_captures(thread, thread.pid)

    scan.add_captures(PYSPY, stand)
    scan.add_captures(PYSPY_OTHER, other)
    scan.add_captures(FAULTHANDLER, stand)
    scan.add_captures(GDB, native)
    scan.add_captures(LLDB, native)


def _native_captures(thread: Thread, pid: str, frame: str = "") -> dict[str, str]:
    """Where a thread stands by its native frames: the call it waits in (a collective, set-up, the GPU), its frames."""
    call = thread.call if thread.phase in (IN_COLLECTIVE, INIT) else GPU_WAIT if thread.phase == GPU_WAIT else ""
    return {COLLECTIVE: call, FRAME: frame or thread.chain, CALLER: "", ENTRY: "", PID: pid, PHASE: thread.phase,
            **({LAUNCH: "yes"} if thread.in_launch else {})}


def _distributed(file: str) -> bool:
    return any(d in file for d in _DISTRIBUTED)


def _pyspy_frames(lines: list[str], at: int) -> list[tuple[str, str, str]]:
    frames = []
    while at < len(lines):
        if m := _FRAME.match(line := after_prefixes(lines[at])):
            frames.append((m["function"], m["file"], m["line"] or ""))
        elif not _LOCALS.match(line):
            break
        at += 1
    return frames


def _fault_frames(lines: list[str], at: int) -> list[tuple[str, str, str]]:
    frames = []
    while at < len(lines) and (m := _FAULT_FRAME.match(after_prefixes(lines[at]).lstrip())):
        frames.append((m["function"], m["file"], m["line"]))
        at += 1
    return frames


def _where(frame: tuple[str, str, str]) -> str:
    function, file, line = frame
    return f"{function} ({file}:{line})" if line else f"{function} ({file})"


def _pid(lines: list[str], at: int, tid: str) -> str:
    """The "Process P:" header a few lines above (py-spy prints it, then the Python version, then a blank line); else
    the main thread's id where it is the OS thread id (decimal, Linux), which for the main thread is the pid."""
    for back in range(at - 1, max(-1, at - 4), -1):
        if m := _PROCESS.match(after_prefixes(lines[back])):
            return m["pid"]
    return tid if tid.isdigit() else ""


def dumps_verdict(references: dict[str, Reference], events: list[Event]) -> Diagnosis | None:
    """Nothing in the input failed, but stack dumps show processes waiting in a collective: the one that is
    elsewhere, processes in different collectives, or (all in one) the collective and the processes still to dump."""
    dumps = [Dump(e, e.captures[COLLECTIVE], e.captures[FRAME], e.captures[CALLER], e.captures[PID],
                  e.captures[ENTRY], e.captures[PHASE], LAUNCH in e.captures) for e in events
             if e.pattern.id in (PYSPY, PYSPY_OTHER, FAULTHANDLER, GDB, LLDB) and FRAME in e.captures]
    if HANG not in references:
        return None
    hang = references[HANG]
    if (teardown := [d for d in dumps if d.phase == TEARDOWN]) and ABORT_HANG in references:
        return _abort_lead(references[ABORT_HANG], teardown)
    helpers = [d for d in dumps if d.phase == BACKGROUND]
    dumps = [d for d in dumps if d.phase not in (BACKGROUND, TEARDOWN)]
    waiting = [d for d in dumps if d.collective]
    if not waiting:
        return _helpers_lead(hang, helpers) if helpers and not dumps else None
    # Only a peer of the waiting processes can be the one they wait for: a server, a controller or a data loader
    # idling in its own loop is not.
    entries = {d.entry for d in waiting}
    elsewhere = [d for d in dumps if not d.collective and d.entry in entries]
    calls = Counter(d.collective for d in waiting if d.collective != GPU_WAIT)
    who = _names(waiting)
    if elsewhere:
        odd = elsewhere[0]
        return _lead(hang, _commands(hang, odd), [odd, *waiting], (
            f"waiting in a collective: {_calls(waiting)}; {_names(elsewhere)} "
            f"{'is' if len(elsewhere) == 1 else 'are'} elsewhere, the main thread at {odd.frame}: it never reached "
            "the collective, so the others wait for it",),
            f"{odd.name()} is not in the collective the others wait in: it is at {clip(odd.frame, 120)}")
    if len(calls) > 1 and MISMATCH in references:
        return _lead(references[MISMATCH], _commands(hang, waiting[0]), waiting, (
            f"the processes wait in different collectives ({_calls(waiting)}): each waits in one the others never "
            "enter, so they took different code paths",),
            f"the processes wait in different collectives: {', '.join(calls)}")
    one = next((d for d in waiting if d.collective != GPU_WAIT), waiting[0])
    if not calls:
        found = (f"{who} wait{'s' if len(waiting) == 1 else ''} for the GPU ({GPU_WAIT}{_from(one, ', from ')}): a "
                 "kernel that does not finish, most often a collective's waiting for a peer that never joined it, or a "
                 "GPU that stopped; dump the other ranks, and check the GPUs (nvidia-smi, dmesg for Xid)",)
        return _lead(hang, _commands(hang, waiting[0]), waiting, found,
                     f"{who} wait{'s' if len(waiting) == 1 else ''} for the GPU")
    if len(waiting) == 1:
        found = (f"{who} waits in {one.collective}{_from(one, ', called from ')}: it is waiting for a peer, not "
                 "failing itself; dump every rank: the one whose main thread is elsewhere is the one it waits for",)
    else:
        found = (f"every dumped process waits ({_calls(waiting)}): none of them is the one missing; dump the ranks "
                 "not shown here, and if all are in it, the collective itself is stuck (the network, a GPU): "
                 "NCCL_DEBUG=INFO and the Flight Recorder show which",)
    if any(d.in_launch for d in waiting):
        # NVIDIA/nccl#750: since 2.13 NCCL hands the network work to its proxy thread after the launch returns.
        found += ("a thread is blocked inside the CUDA kernel launch of NCCL's collective: with CUDA_LAUNCH_BLOCKING=1 "
                  "set, NCCL 2.13 and later deadlock there (the kernel waits for network work NCCL gives its proxy "
                  "thread only once the launch returns); unset it",)
    return _lead(hang, _commands(hang, waiting[0]), waiting, found,
                 f"{who} wait{'s' if len(waiting) == 1 else ''} in {one.collective}")


def _abort_lead(abort: Reference, teardown: list[Dump]) -> Diagnosis:
    """A thread inside NCCL's communicator teardown: the process hangs in the abort (or destroy) itself."""
    first = teardown[0]
    found = (f"{_names(teardown)} {'is' if len(teardown) == 1 else 'are'} inside NCCL's communicator teardown "
             f"({clip(first.frame, 160)}): the abort or destroy never returns. It waits for NCCL's own threads and, in "
             "recent NCCL versions, for every rank of the node that shares the communicator; a peer that died or never "
             "aborts, or an NCCL abort bug, keeps it there. The abort is the response to something earlier (an error, a "
             "timeout, the end of the run): look for that failure too",)
    return _lead(abort, [c for c in abort.verify if not c.when], teardown, found,
                 f"{_names(teardown)} hang{'s' if len(teardown) == 1 else ''} in NCCL's communicator teardown "
                 f"(in {clip(first.frame.rsplit(' <- ', 1)[-1], 100)})", confidence=0.4)


def _helpers_lead(hang: Reference, helpers: list[Dump]) -> Diagnosis:
    """Only helper threads dumped (NCCL's, the CUDA driver's, PyTorch's): the main thread is not shown."""
    found = (f"the dumped threads are helper threads that NCCL, the CUDA driver or PyTorch start "
             f"({'; '.join(d.frame for d in helpers[:2])}), idle as in any job on GPUs: the dump does not show where "
             "the main thread stands; dump thread 1 (gdb: thread apply all bt) or run py-spy dump --native on every "
             "rank",)
    return _lead(hang, _commands(hang, helpers[0]), helpers, found,
                 "only helper threads are dumped, idle: the main thread is not shown", confidence=0.2)


def _commands(hang: Reference, dump: Dump) -> list[Command]:
    """The hang reference's commands written for the kind of dump given (they line up every thread's frames)."""
    return [c for c in hang.verify if dump.event.pattern.id in c.when]


def _lead(reference: Reference, commands: list[Command], dumps: list[Dump], found: tuple[str, ...],
          headline: str, confidence: float = 0.35) -> Diagnosis:
    """A possible cause at the first dump given."""
    d = lead_without_failure(reference, [x.event for x in dumps], found,
                             "stack dumps show where each process stands, not that anything failed", confidence)
    pid = int(dumps[0].pid) if dumps[0].pid else None
    verify = tuple(fill(c, {}, own_inputs(d.initiator.path)) for c in commands)
    return attrs.evolve(d, headline=headline, initiator=attrs.evolve(d.initiator, pid=pid), verify=verify)


def _names(dumps: list[Dump]) -> str:
    pids = [d.pid for d in dumps if d.pid]
    if len(pids) == len(dumps):
        return f"process{'es' if len(pids) > 1 else ''} {', '.join(pids)}"
    ranks = [str(d.event.source.rank) for d in dumps if d.event.source.rank is not None]
    if len(ranks) == len(dumps):
        return f"rank{'s' if len(ranks) > 1 else ''} {', '.join(ranks)}"
    return f"{len(dumps)} dumped process{'es' if len(dumps) > 1 else ''}" if len(dumps) > 1 else "the dumped process"


def _calls(dumps: list[Dump]) -> str:
    by_call: dict[str, list[Dump]] = {}
    for d in dumps:
        by_call.setdefault(d.collective, []).append(d)
    return "; ".join(f"{_names(ds)} in {call}{_from(ds[0], ' (from ', ')')}" for call, ds in by_call.items())


def _from(dump: Dump, before: str, after: str = "") -> str:
    """Where the code called the collective, or the frame the dump shows when it was cut inside the library."""
    return f"{before}{dump.caller}{after}" if dump.caller else f" at {dump.frame}"
