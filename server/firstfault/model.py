"""The signature library's data: patterns, references and their verification commands."""

from __future__ import annotations

import re
from pathlib import Path

import attrs

ROLES = ("cause", "symptom", "collateral", "teardown", "context")

# Precedence, strongest first: a failure in an earlier tier explains failures in later ones.
# "unrecognised" holds the catch-all error lines that no reference explains.
TIERS = ("hardware", "device-fault", "rank-crash", "transport", "timeout", "launcher", "info", "unrecognised")

# The catch-all reference for error lines that no other reference explains (signatures/process/).
UNRECOGNISED = "unrecognised-failure"

SEVERITIES = ("critical", "error", "warning", "info")
STATUSES = ("experimental", "stable", "deprecated")
CATEGORIES = ("communication", "hardware", "device", "memory", "process", "launcher", "configuration")


@attrs.frozen
class Pattern:
    """One line-level fact: literals feed the automaton, the regex confirms and captures."""

    id: str
    literals: tuple[str, ...]
    regex: re.Pattern[str]  # or, where the loader allows, the same interface: BoundedRegex, LazyRegex
    role: str
    emitter: str
    match: tuple[str, ...] = ()
    near_miss: tuple[str, ...] = ()
    reference_id: str = ""
    # A catch-all (any Python exception): dropped on a line that a specific pattern also matched.
    generic: bool = False
    # A line that healthy runs print too: it counts as a failure only when one of these patterns also
    # shows in the same attempt, and is context otherwise.
    needs: tuple[str, ...] = ()
    # The message goes on on the next line ("Last error:" then NCCL's reason): that line's text is captured as
    # `continuation`, without the prefix the two lines share.
    continuation: bool = False
    # A line that is harmless where one of these patterns also shows in the same attempt (a network fallback in a
    # job whose ranks all bootstrap over loopback, on one host): context there, whatever else failed.
    unless: tuple[str, ...] = ()
    # A line each process prints once per run, naming what it holds in these named groups (the rank; or host, GPU
    # and communicator): a failure only where one value shows twice in an attempt (two processes claim one rank, one
    # GPU), context otherwise.
    once_per: tuple[str, ...] = ()
    # A `needs` line that may stand alone as a possible cause when nothing else in the input failed. False for a line
    # the software prints for something that is usually no failure at all (Slurm's "Exceeded step memory limit at
    # some point" counts page cache, and nothing was killed): alone it is context.
    standalone: bool = True
    # Alone (an excerpt, or the end of a log), a `needs` line counts as a possible cause only where it shows this
    # many times: vLLM's shm-broadcast wait printed once is a slow start, printed on and on is a hang.
    repeats_alone: int = 1
    # Read only in inputs small enough to be a paste (wrapped.PASTE_BYTES): a pattern whose literal is common in
    # large logs ("E0521 ... file.cpp:877]" needs ".cpp:", which every c10 warning holds) costs the whole scan, yet
    # the line it reads is the only evidence where someone pasted just it.
    paste_only: bool = False
    # A line that says the software recovered from these patterns' failures (llama.cpp retrying its compute buffers
    # without pipeline parallelism after a cudaMalloc failed): their lines above it in the same input are context;
    # a failure after it still counts.
    recovers: tuple[str, ...] = ()
    # The end of the match decides what the line says (the signature's `tail`): a paste that wrapped the line
    # before it is read with the next line joined (wrapped.py), as a message whose literal the cut split is.
    tail_decides: bool = False


# Placeholders filled from the user's own inputs rather than from the log: the log's path, and for a Flight
# Recorder dump its folder and the file-name prefix before the rank (what PyTorch's torchfrtrace takes).
OWN_PLACEHOLDERS = ("log", "log_path", "dump_dir", "dump_prefix")


def shell_script(argv: list[str] | tuple[str, ...]) -> str | None:
    """The script of `sh -c SCRIPT ...` / `bash -c SCRIPT ...`, else None."""
    return argv[2] if len(argv) >= 3 and argv[0] in ("sh", "bash") and argv[1] == "-c" else None


@attrs.frozen
class Command:
    """A verification command; argv items may hold {placeholders} filled from captured fields."""

    title: str
    argv: tuple[str, ...]
    # Offered only when one of these patterns of the reference is in the evidence (the lines it reads exist).
    when: tuple[str, ...] = ()

    def fits(self, present: set[str]) -> bool:
        return not self.when or bool(present.intersection(self.when))


@attrs.frozen
class SampleTest:
    """A sample log beside the reference and the verdict it must produce."""

    path: Path
    initiator_rank: int | None = None
    undetermined: bool = False


@attrs.frozen
class Suggestion:
    """What usually explains a verdict when the log does not say: where a failure line's `capture` is one of
    `values`, or (`pattern`) where the verdict rests on that pattern's lines alone."""
    reference: str
    capture: str
    values: tuple[str, ...]  # compared lower-cased
    why: str
    pattern: str = ""

    def fits(self, captures: dict[str, str]) -> bool:
        return not self.capture or captures.get(self.capture, "").lower() in self.values


@attrs.frozen
class Reference:
    """One failure entry: what it is, how it shows, how to confirm, fix and verify it."""

    id: str
    title: str
    category: str
    tier: str
    severity: str
    status: str
    summary: str
    mechanism: str
    patterns: tuple[Pattern, ...]
    aliases: tuple[str, ...] = ()
    confirm: tuple[str, ...] = ()
    fix: tuple[str, ...] = ()
    # Fixes that replace `fix` when the log shows the framework (vllm, deepspeed): inference advice for inference.
    fix_for: tuple[tuple[str, tuple[str, ...]], ...] = ()
    prevention: tuple[str, ...] = ()
    next_checks: tuple[str, ...] = ()
    verify: tuple[Command, ...] = ()
    related: tuple[str, ...] = ()
    references: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    # Pattern ids of this reference that must all be present for it to be a hypothesis.
    requires: tuple[str, ...] = ()
    # Pattern ids (any reference) whose presence counts against this reference.
    against: tuple[str, ...] = ()
    # Other references that usually explain this one when a capture of its evidence has one of some values (NCCL's
    # 'invalid usage' at communicator creation: two ranks on one GPU): offered beside the verdict as what else could
    # explain it, never instead of it.
    suggests: tuple[Suggestion, ...] = ()
    samples: tuple[SampleTest, ...] = ()
    source: Path | None = None

    def pattern(self, pattern_id: str) -> Pattern | None:
        return next((p for p in self.patterns if p.id == pattern_id), None)
