"""What each matched line counts as in its attempt. Lines that healthy runs also print (`needs` patterns) and
the catch-all error lines are context unless the attempt gives them weight; a warning that is the only failure
evidence of an excerpt, or that repeats until the log stops, is a possible cause."""

from __future__ import annotations

from collections import Counter, defaultdict

import attrs

from firstfault.matcher import Event, Extent
from firstfault.model import UNRECOGNISED

FAILURE_ROLES = ("cause", "symptom")
TRACEBACK_HEADER = "traceback-header"
TRACEBACK_FRAME = "traceback-frame"
TRACEBACK = (TRACEBACK_HEADER, TRACEBACK_FRAME)  # a Python traceback's lines above its exception line
# Wrappers a framework prints on the line above the traceback it wraps: part of that traceback's block.
TRACEBACK_WRAPPERS = ("hydra-job-error",)
# Catch-all lines that say only that an error is being reported (a traceback's last line, or the WARN above NCCL's
# error trace, is what explains it; Hydra's wrapper precedes the traceback).
HEADER_ONLY = (*TRACEBACK, "nccl-error-return", *TRACEBACK_WRAPPERS)
# A launch that failed on another host (ssh refused, its daemon not started): the job never ran there, so a launcher
# banner after it is the other hosts starting (colossalai run starts torchrun on each host), not a restart.
REMOTE_LAUNCH_FAILURES = frozenset({"deepspeed-ssh-unreachable", "mpi-daemon-launch-failed"})
# An input this short is a selection or a paste: what it holds is all the user showed.
EXCERPT_LINES = 20
# The input ends with the warning when fewer lines than this follow its last copy.
TAIL_LINES = 3
# Why a line that healthy runs print too is only a possible cause, in the evidence of every such verdict.
NOT_CONCLUSIVE = "not conclusive on its own (healthy runs print it too, or the line that says why is missing)"
# A longer log that ends with a warning seen this often stopped mid-retry.
REPEATS_AT_END = 3
# torchrun's SIGKILL of a worker that outlived the SIGTERM grace period (30 s), as its summary dates it.
AGENT_SIGKILL = "elastic-sigkill-entry"
SUMMARY_EXIT = "summary-exitcode"  # a worker's exit code in the same summary
AGENT_GRACE_SECONDS = 29
# CPython's header above an exception it could not raise and went on from (PyErr_WriteUnraisable); the exception
# line that ends the traceback under it (whose other lines are TRACEBACK's), and how far below it they may be.
IGNORED_HEADER = "python-exception-ignored"
IGNORED_EXCEPTION = ("python-exception-line", "python-exception-line-other-class", "python-exception-line-bare")
IGNORED_BLOCK = 60


def as_context(event: Event) -> Event:
    return demoted(event, "context")


def demoted(event: Event, role: str) -> Event:
    """The line read in a lesser role for this attempt; `restored` gives its own back."""
    if event.role == role:
        return event
    return attrs.evolve(event, pattern=attrs.evolve(event.pattern, role=role), demoted_from=event.role)


def restored(event: Event) -> Event:
    if event.demoted_from is None:
        return event
    return attrs.evolve(event, pattern=attrs.evolve(event.pattern, role=event.demoted_from), demoted_from=None)


def without_catch_all(event: Event) -> Event:
    """The catch-all lines never decide where an attempt starts."""
    return as_context(event) if event.reference_id == UNRECOGNISED else event


def weigh(events: list[Event], extents: dict[int, Extent]) -> list[Event]:
    """The roles of one attempt's lines; `extents` says how long each input is."""
    events, recovered = _recovered(_claimed_twice(_ignored_by_python([restored(e) for e in events])))
    events = _needs_met_or_context(events, extents, recovered)
    events = _killed_by_the_agent(events)
    # What the good run printed too is noise both runs share, whatever it says.
    events = [as_context(e) if e.in_baseline else e for e in events]
    if not _recognised_failure(events):
        # Only consequences of a failure (a worker died, the store went away): they are what the log can say, as a
        # verdict that names the consequence and says the cause is not in the input. The launcher's teardown
        # (the agent reporting a failed worker, stopping the rest) counts too unless an error line no reference
        # knows says more.
        promoted = ("collateral",) if _unrecognised_error(events) else ("collateral", "teardown")
        events = [_consequence(e) if e.role in promoted and e.reference_id != UNRECOGNISED else e for e in events]
    if _recognised_failure(events):
        # Error lines that no reference explains are listed beside a recognised failure, not diagnosed.
        events = [without_catch_all(e) for e in events]
    return events


def _ignored_by_python(events: list[Event]) -> list[Event]:
    """A traceback CPython printed under "Exception ignored in: <object>" and went on from: its lines, up to the first
    exception line after the header (within IGNORED_BLOCK lines), are context."""
    headers = {(e.input_index, e.line) for e in events if e.pattern.id == IGNORED_HEADER}
    if not headers:
        return events
    ignored: set[tuple[int, int]] = set()
    open_at: dict[int, int] = {}  # input -> the line of the header whose traceback is being read
    for e in sorted(events, key=lambda e: (e.input_index, e.line)):
        key = (e.input_index, e.line)
        if key in headers:
            open_at[e.input_index] = e.line
            continue
        start = open_at.get(e.input_index)
        if start is None or e.line - start > IGNORED_BLOCK:
            continue
        if e.pattern.id in TRACEBACK:
            ignored.add(key)
        elif e.pattern.id in IGNORED_EXCEPTION:
            ignored.add(key)
            del open_at[e.input_index]  # its exception line ends the ignored traceback
    return [as_context(e) if (e.input_index, e.line) in ignored else e for e in events]


def _killed_by_the_agent(events: list[Event]) -> list[Event]:
    """torchrun stops the other workers with SIGTERM and sends SIGKILL to those still alive 30 s later
    (torch/distributed/elastic/multiprocessing/api.py, _close(death_sig, timeout=30)): a summary entry killed by
    SIGKILL that long after another worker's failure is the agent's teardown, not the OOM killer."""
    failed = [e.time for e in events if e.pattern.id == SUMMARY_EXIT and e.time is not None
              and e.captures.get("exitcode") not in ("-9", "-15")]
    if not failed:
        return events
    first = min(failed)
    return [demoted(e, "teardown")
            if e.pattern.id == AGENT_SIGKILL and e.time is not None and e.time >= first + AGENT_GRACE_SECONDS
            else e for e in events]


def _claimed_twice(events: list[Event]) -> list[Event]:
    """A `once_per` line is a failure only where another line of its pattern names the same values."""
    def key(e: Event) -> tuple:
        return e.pattern.id, tuple(e.captures.get(g) for g in e.pattern.once_per)

    seen = Counter(key(e) for e in events if e.pattern.once_per)
    return [as_context(e) if e.pattern.once_per and seen[key(e)] < 2 else e for e in events]


def _recognised_failure(events: list[Event]) -> bool:
    return any(e.role in FAILURE_ROLES and e.reference_id != UNRECOGNISED for e in events)


def _unrecognised_error(events: list[Event]) -> bool:
    return any(e.reference_id == UNRECOGNISED and e.role in FAILURE_ROLES and e.pattern.id not in HEADER_ONLY
               for e in events)


def _consequence(event: Event) -> Event:
    return attrs.evolve(event, pattern=attrs.evolve(event.pattern, role="symptom"), cause_absent=True)


def _recovered(events: list[Event]) -> tuple[list[Event], set[tuple[int, int]]]:
    """A failure line above a line that says the software recovered from it (in the same input) is context; also
    where those lines are (input, line)."""
    last_recovery: dict[tuple[int, str], int] = {}
    for e in events:
        for pid in e.pattern.recovers:
            key = (e.input_index, pid)
            last_recovery[key] = max(last_recovery.get(key, 0), e.line)
    if not last_recovery:
        return events, set()
    recovered = {(e.input_index, e.line) for e in events
                 if e.line < last_recovery.get((e.input_index, e.pattern.id), 0)}
    return [as_context(e) if (e.input_index, e.line) in recovered else e for e in events], recovered


def _needs_met_or_context(events: list[Event], extents: dict[int, Extent],
                          recovered: set[tuple[int, int]]) -> list[Event]:
    present = {e.pattern.id for e in events}
    harmless = {e.pattern.id for e in events if present.intersection(e.pattern.unless)}
    events = [as_context(e) if e.pattern.id in harmless else e for e in events]
    unmet = {e.pattern.id for e in events if e.pattern.needs and not present.intersection(e.pattern.needs)} - harmless
    if not unmet:
        return events
    events = [as_context(e) if e.pattern.id in unmet else e for e in events]
    # Error lines no reference explains do not silence a specific reading: a wrapper ("X failed:") often stands
    # above the line that says why.
    if any(e.role in FAILURE_ROLES and e.reference_id != UNRECOGNISED for e in events):
        return events
    unexplained = any(e.role in FAILURE_ROLES for e in events)
    # Nothing a reference explains failed: a warning can still be what the user is looking at.
    by_pattern: dict[str, list[Event]] = defaultdict(list)
    for e in events:
        # A line the software later says it recovered from is not the failure, even as a possible one.
        if (e.pattern.id in unmet and e.demoted_from in FAILURE_ROLES and e.pattern.standalone
                and (e.input_index, e.line) not in recovered):
            by_pattern[e.pattern.id].append(e)
    errors = {(e.input_index, e.line) for e in events if e.reference_id == UNRECOGNISED
              and e.role in FAILURE_ROLES and e.pattern.id not in HEADER_ONLY}
    reasons = {pid: why for pid, evs in by_pattern.items()
               if (why := _why_possible(evs, extents, unexplained) or _printed_as_error(evs, errors))}
    return [attrs.evolve(restored(e), possible=reasons[e.pattern.id]) if e.pattern.id in reasons
            and e.demoted_from else e for e in events]


def _printed_as_error(events: list[Event], errors: set[tuple[int, int]]) -> str | None:
    """A line that a catch-all reads as an error (a C++ terminate's what(), an error-level log line) is a failure
    whatever else the input holds; where a specific reading of the same line counts only beside another line, it
    still names the likeliest cause, as a possible one."""
    line = next((e.line for e in events if (e.input_index, e.line) in errors), None)
    if line is None:
        return None
    return (f"this message is {NOT_CONCLUSIVE}, but line {line} prints it as an error and nothing else in the input "
            "explains the failure")


def _why_possible(events: list[Event], extents: dict[int, Extent], unexplained: bool = False) -> str | None:
    """Only where the input ends with the warning (a C++ backtrace printed with it is part of it): a run that printed
    it and went on stays quiet. `unexplained`: the input also has error lines no reference explains."""
    last = max(events, key=lambda e: (e.input_index, e.line))
    extent = extents.get(last.input_index, Extent.whole(0))
    if extent.last - last.line >= TAIL_LINES or len(events) < last.pattern.repeats_alone:
        return None
    if extent.said <= EXCERPT_LINES:
        repeated = f", {len(events)} times," if len(events) > 1 else ""
        cut_out = extent.cut_traceback is not None
        left_out = ("blank lines, C++ backtrace frames and a traceback cut before its exception line" if cut_out
                    else "blank lines and C++ backtrace frames")
        size = (f"{extent.lines}-line excerpt" if extent.said == extent.lines
                else f"excerpt ({extent.said} lines that say something: {left_out} left out)")
        cut = (", then a traceback cut before its exception line" if cut_out and last.line < extent.cut_traceback
               else "")
        return (f"this line is {NOT_CONCLUSIVE}; in this {size} "
                f"it is the only failure evidence{' a reference explains' if unexplained else ''}{repeated} "
                f"and the excerpt ends with it{cut}")
    if len(events) >= REPEATS_AT_END:
        times = [e.time for e in events if e.time is not None and e.clock == "wall"]
        span = f" over {max(times) - min(times):.0f} s" if len(times) > 1 else ""
        return (f"repeated {len(events)} times{span}, and the log ends there without the final error: "
                "the job was stopped (or hung) while this was still happening")
    return None
