"""Native stack dumps in a paste (gdb's `bt` and `thread apply all bt`, lldb's `bt all`, py-spy's `--native` frames):
which NCCL or CUDA call a thread stands in.

gdb prints, per thread, `Thread 3 (Thread 0x7f53817fd000 (LWP 500875) "python"):` (`Thread 1 (process 4242):` for a
process without threads), then one line per frame, innermost first: `#0  0x00007fc349513d2d in __GI___pthread_timedjoin_ex
(...) at pthread_join_common.c:89`, `#2  0x00007fc204d345fd in ncclCommAbort () from /usr/lib/libnccl.so.2`; a frame
inlined into its caller has no address (`#4  ncclProxyProgress (proxyState_=0x55d847bc00c0) at proxy.cc:868`), and a long
argument list wraps onto an indented line. A bare `bt` prints the frames without the header. lldb prints `  thread #16,
name = 'python', stop reason = signal SIGSTOP`, then `    frame #0: 0x00007fb0b7f0792d libc.so.6`syscall + 29`. Both number
the threads in the order they found them: thread 1 of a process attached while it hangs is its main thread, and gdb's
LWP of it is the process id. What a thread waits in is read from the functions its frames name, whatever their order:
NCCL's and c10d's names are stable across the versions people run.
"""

from __future__ import annotations

import re

import attrs

from firstfault.context import after_prefixes

# What a thread is doing, by the functions its frames name; the first phase (in this order) that any frame names wins:
# a watchdog thread that aborts the communicator is in the abort, not idling as a watchdog.
TEARDOWN, BACKGROUND, INIT, COLLECTIVE, GPU_WAIT = "teardown", "background", "init", "collective", "synchronize"
_PHASES = (
    # ncclCommAbort/ncclCommDestroy and what they call (commReclaim joins the proxy threads, commFree/commCleanup free,
    # commDestroySync waits for the device stream), and c10d's callers of it (ProcessGroupNCCL::abort and shutdown wait
    # for it in waitForFutureOrTimeout).
    (TEARDOWN, re.compile(r"\bp?ncclComm(?:Abort|Destroy|Finalize)\b|\bcomm(?:Reclaim|Free|Cleanup|DestroySync)\b"
                          r"|\babortCommsFromMap\b|ProcessGroupNCCL::(?:abort|shutdown|~ProcessGroupNCCL)\b")),
    # NCCL's own helper threads and c10d's monitoring threads: idle in any healthy job that holds a communicator.
    (BACKGROUND, re.compile(r"\bncclProxy(?:Progress|Service|ServiceUDS)\b|\bncclCommWatchdog\b|\bwatchdogHandler\b"
                            r"|\bheartbeatMonitor\b|HeartbeatMonitor::runLoop\b|\bTCPStoreMasterDaemon\b")),
    # Communicator set-up waits until every rank of the communicator has joined (bootstrap's all-gather).
    (INIT, re.compile(r"\bp?ncclCommInit\w*|\bp?ncclCommSplit\b|\bNCCLComm::create\b|\binitNCCLComm\b"
                      r"|\bbootstrap(?:Init|AllGather|Barrier)\b")),
    # NCCL's collectives and MPI's (Horovod's background thread runs its coordination in MPI_Gather/MPI_Bcast).
    (COLLECTIVE, re.compile(r"\bp?nccl(?:AllReduce|AllGather|ReduceScatter|Broadcast|Bcast|Reduce|AlltoAll|Send|Recv"
                            r"|GroupEnd|GroupEndInternal|LaunchKernel|EnqueueCheck)\b"
                            r"|\bP?MPI_(?:Allreduce|Allgather|Allgatherv|Gather|Gatherv|Bcast|Barrier|Alltoall|Alltoallv"
                            r"|Reduce|Reduce_scatter|Scatter|Wait|Waitall|Recv|Send)\b")),
    # A stream or device synchronisation waits for the GPU's kernels; so does a launch once the launch queue is full,
    # and a copy to the host (.item(), .cpu(): at::native::_local_scalar_dense_cuda) behind the kernels before it.
    (GPU_WAIT, re.compile(r"\bcu(?:da)?(?:Stream|Device|Event|Ctx)Synchronize\b|\bcu(?:da)?LaunchKernel\b"
                          r"|\bcu(?:da)?Memcpy\w*")),
)
# The names the CUDA driver, NCCL and PyTorch give their own threads (gdb and lldb show them): helpers, idle in any
# healthy job ("cuda-EvtHandlr", "cuda00006000019"; NCCL's "NCCL Progress 3", "NCCL Service 0"; "pt_nccl_watchdg",
# "pt_nccl_heartbt", "pt_autograd_0").
_HELPER_NAMES = re.compile(r"^(?:cuda-EvtHandlr|cuda\d{8,}|NCCL |pt_nccl_|pt_autograd_)")
# "#3  0x00007f539f454740 in ncclProxyGetPostedOps (...) at proxy.cc:713", "#4  ncclProxyProgress (...) at proxy.cc:868"
_GDB_FRAME = re.compile(r"#(?P<n>\d+)  ?(?:0x[0-9a-fA-F]+ in )?(?P<text>\S.*)")
# "frame #1: 0x00007fb08faef142 libstdc++.so.6`std::__atomic_futex_unsigned_base::_M_futex_wait_until_steady(...)"
_LLDB_FRAME = re.compile(r"^\s*(?:\*\s*)?frame #(?P<n>\d+): 0x[0-9a-fA-F]+ (?:[^\s`]*`)?(?P<text>\S.*)")
# The header above a thread's frames: gdb's "Thread 1 (Thread 0x7feb810ff640 (LWP 23530) "python"):", "Thread 1 (process
# 4242):", the stop line 'Thread 1 "python" received signal SIGINT, Interrupt.', lldb's "* thread #1, name = 'python'".
_GDB_THREAD = re.compile(r"^\s*\[?(?:Switching to )?[Tt]hread (?P<thread>\d+) (?:\((?:Thread 0x[0-9a-fA-F]+ "
                         r"\(LWP (?P<lwp>\d+)\)(?: \"(?P<name>[^\"]*)\")?|process (?P<pid>\d+))|\"[^\"]*\" received signal)")
_LLDB_THREAD = re.compile(r"^\s*(?:\*\s*)?thread #(?P<thread>\d+)\b(?:.*?, name = '(?P<name>[^']*)')?")
_NCCL_API = re.compile(r"p?nccl[A-Z]")
_LAUNCH = re.compile(r"\bcu(?:da)?LaunchKernel\b")
_NAME = re.compile(r"[\w:~<>.$@-]+|\?\?")  # a frame's function name, before its arguments
_MAX_FRAMES = 300  # lines read below a thread's first frame (deep C++ stacks run to a hundred frames and more)


@attrs.frozen
class Thread:
    phase: str  # one of the phases above, or "" (elsewhere: the program's own code)
    call: str  # the function that decided the phase, or the innermost frame's
    chain: str  # the innermost frames that say it, "pthread_join <- commReclaim <- ncclCommAbort"
    thread: int | None  # the debugger's thread number, where a header names it
    pid: str  # the process id where the header gives it (the main thread's LWP)
    bare: bool = False  # a backtrace without thread headers anywhere in the paste (`bt`): one thread, the one stopped
    in_launch: bool = False  # in a collective, blocked inside the CUDA kernel launch NCCL makes

    @property
    def main(self) -> bool:
        """The process's main thread, or the thread of a bare backtrace. Frames without a header in a dump that has
        headers are a thread whose header the paste cut: which thread is not known."""
        return self.thread == 1 or (self.thread is None and self.bare)


def has_thread_headers(lines: list[str]) -> bool:
    return any(_thread_header(line) for line in lines)


def _thread_header(line: str) -> re.Match[str] | None:
    """gdb's or lldb's header above a thread's frames, behind whatever a launcher put in front."""
    message = after_prefixes(line)
    return _GDB_THREAD.match(message) or _LLDB_THREAD.match(message)


def native_thread(lines: list[str], at: int, bare: bool) -> Thread | None:
    """The thread whose first frame shown is lines[at] (its innermost, #0, or the first a paste kept), from its frames
    and the header a few lines above; None for a frame inside a thread's list. `bare`: no thread headers in `lines`."""
    lldb = _LLDB_FRAME.match(after_prefixes(lines[at])) is not None
    above = after_prefixes(lines[at - 1]) if at > 0 else ""
    if not lldb and (_GDB_FRAME.match(above.strip()) or above[:1].isspace() and lines[at - 1].strip()):
        return None
    frames = _lldb_frames(lines, at) if lldb else _gdb_frames(lines, at)
    if not frames:
        return None
    thread, pid, name = _header(lines, at)
    if _HELPER_NAMES.match(name):
        return Thread(BACKGROUND, name, _chain(frames[:1]), thread, pid)
    return attrs.evolve(classify(frames, thread, pid), bare=bare)


def classify(functions: list[str], thread: int | None = None, pid: str = "") -> Thread:
    """A thread from its frames' text, innermost first. The call is the outermost of NCCL's own frames of its phase:
    the one the program made (ncclAllReduce, not the ncclGroupEndInternal it runs in; pncclCommInitRankConfig, not
    c10d's NCCLComm::create around it)."""
    for phase, names in _PHASES:
        found = [(depth, m.group(0)) for depth, text in enumerate(functions) if (m := names.search(text))]
        if found:
            call = next((name for _, name in reversed(found) if _NCCL_API.match(name)), found[-1][1])
            launch = phase == COLLECTIVE and any(_LAUNCH.search(f) for f in functions[:found[0][0]])
            return Thread(phase, call, _chain(functions[:found[-1][0] + 1]), thread, pid, in_launch=launch)
    return Thread("", _name(functions[0]), _chain(functions[:1]), thread, pid)


def _gdb_frames(lines: list[str], at: int) -> list[str]:
    frames: list[str] = []
    start = int(m["n"]) if (m := _GDB_FRAME.match(after_prefixes(lines[at]).strip())) else 0
    for i in range(at, min(len(lines), at + _MAX_FRAMES)):
        line = after_prefixes(lines[i])
        stripped = line.strip()
        m = _GDB_FRAME.match(stripped)
        if m and int(m["n"]) == start + len(frames):
            frames.append(m["text"])
        elif frames and stripped and not m and line[:1].isspace():
            frames[-1] += " " + stripped  # arguments gdb wrapped onto the next line
        elif not (frames and stripped and not m and _next_frame(lines, i + 1, start + len(frames))):
            break  # else a source line gdb printed under the frame
    return frames


def _next_frame(lines: list[str], at: int, n: int) -> bool:
    m = _GDB_FRAME.match(after_prefixes(lines[at]).strip()) if at < len(lines) else None
    return m is not None and int(m["n"]) == n


def _lldb_frames(lines: list[str], at: int) -> list[str]:
    frames: list[str] = []
    for line in lines[at:at + _MAX_FRAMES]:
        if not (m := _LLDB_FRAME.match(after_prefixes(line))) or int(m["n"]) != len(frames):
            break
        frames.append(m["text"])
    return frames


def _header(lines: list[str], at: int) -> tuple[int | None, str, str]:
    """The thread number, process id and thread name from the header just above the frames (gdb may print the stop
    location and its prompt between them)."""
    for back in range(at - 1, max(-1, at - 4), -1):
        if m := _thread_header(lines[back]):
            thread = int(m["thread"])
            groups = m.groupdict()
            pid = groups.get("pid") or (groups.get("lwp") if thread == 1 else None) or ""
            return thread, pid, groups.get("name") or ""
    return None, "", ""


def _name(text: str) -> str:
    m = _NAME.match(text)
    return m.group(0) if m else text.split(" ", 1)[0]


def _chain(frames: list[str]) -> str:
    """The frames up to the one that decided, innermost first, at most four (the first two and the last two); frames
    without a symbol ("??") say nothing."""
    names = [n for n in map(_name, frames) if n != "??"] or ["??"]
    if len(names) > 4:
        names = [*names[:2], "...", *names[-2:]]
    return " <- ".join(names)
