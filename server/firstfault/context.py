"""Who printed a line and when: rank, host, pid, device and timestamp from real prefix formats."""

from __future__ import annotations

import re
import time
from pathlib import PurePath

import attrs

from firstfault.numbers import MAX_PID, bounded


@attrs.frozen
class Source:
    rank: int | None = None
    local_rank: int | None = None
    host: str | None = None
    pid: int | None = None
    device: int | None = None

    def merged(self, under: "Source") -> "Source":
        """This source with gaps filled from `under` (the file's or the block's source). Spelt out field by field: it
        runs for every matched line, and attrs.astuple took a tenth of a hit-dense scan."""
        if under is EMPTY_SOURCE or under == EMPTY_SOURCE:
            return self
        return Source(self.rank if self.rank is not None else under.rank,
                      self.local_rank if self.local_rank is not None else under.local_rank,
                      self.host if self.host is not None else under.host,
                      self.pid if self.pid is not None else under.pid,
                      self.device if self.device is not None else under.device)

    def label(self) -> str:
        """"rank 3 on node-a", "local rank 1", "host node-a", "pid 4242"; "" when nothing is known."""
        who = (f"rank {self.rank}" if self.rank is not None
               else f"local rank {self.local_rank}" if self.local_rank is not None else "")
        if self.host:
            return f"{who} on {self.host}" if who else f"host {self.host}"
        if not who and self.pid is not None:
            return f"pid {self.pid}"
        return who

    def on(self) -> str:
        """" on rank 3 on node-a" to follow a line number; "" when nothing is known."""
        label = self.label()
        return f" on {label}" if label else ""

    def is_empty(self) -> bool:
        return self == EMPTY_SOURCE


EMPTY_SOURCE = Source()


@attrs.frozen
class LineContext:
    """Sources found in the line, each from its column on (lines from several ranks can be glued). Its time is read
    apart (parse_time), only for a line whose event is kept."""

    segments: tuple[tuple[int, Source], ...]

    def source_at(self, column: int) -> Source:
        found = EMPTY_SOURCE
        for start, source in self.segments:
            if start <= column:
                found = source
        return found


# Each with text its match must hold: a line without it is passed over before the regex runs (this runs once per
# matched line, and the regexes cost more than the test on a long NCCL line).
_PREFIXES = (
    (re.compile(r"\[rank(\d+)\]:?"), "rank", "[rank"),
    # The same prefix with its bracket cut off where the paste starts mid-line ("rank5]: ValueError: ...").
    (re.compile(r"^\s{0,4}rank(\d+)\]:"), "rank", "rank"),
    (re.compile(r"\[default(\d+)\]:"), "local_rank", "[default"),
    # torchrun's prefix under the template its docs give, TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE="[${rank}]:" (the
    # global rank; elastic/agent/server/local_elastic_agent.py in 2.4-2.13, not in 1.13). A summary's "[0]:" header has
    # nothing after it.
    (re.compile(r"^\s{0,4}\[(\d{1,6})\]:(?=\S)"), "rank", "]:"),
    # Open MPI --tag-output "[jobid,rank]<stderr>:"; Horovod's own launcher "[rank]<stderr>:".
    (re.compile(r"\[(?:\d+,)?(\d+)\]<std(?:out|err)>:"), "rank", "]<std"),
    # vLLM workers: "(VllmWorker rank=0 pid=1)" (v1, 0.8), "(VllmWorker TP1 pid=2)", "(Worker_TP0 pid=3)". Later
    # versions name a worker "Worker", then _DP, _PP, _PCP, _TP, _DCP and _EP with its rank in each group that has more
    # than one (vllm/v1/executor/multiproc_executor.py): the TP rank is the worker's rank when only TP splits the
    # world, the EP rank (its rank across DP x TP) when no pipeline stage does ("(Worker_DP3_TP0_EP6 pid=5)").
    (re.compile(r"\((?:VllmWorker(?:Process)?|Worker)(?: rank=| TP|_TP)(\d+)(?:_DCP\d+)? pid=\d+\)"), "rank", " pid="),
    (re.compile(r"\(Worker(?:_DP\d+)?(?:_PCP\d+)?(?:_TP\d+)?(?:_DCP\d+)?_EP(\d+) pid=\d+\)"), "rank", "_EP"),
    # Lightning's rank_prefixed_message (lightning/fabric/utilities/rank_zero.py): "[rank: 1] Seed set to 42".
    (re.compile(r"\[rank: (\d+)\]"), "rank", "[rank: "),
    # HugeCTR's logger: "[HUGECTR][08:46:21][WARNING][RANK0]: " (3.x), "[HCTR][14:56:35.473][ERROR][RK0][main]: " (4.x).
    (re.compile(r"\[(?:HCTR|HUGECTR)\]\[[\d:.]+\]\[[A-Z]+\]\[(?:RK|RANK)(\d+)\]"), "rank", "CTR]["),
    # SGLang's scheduler processes name their parallel ranks after the time (scheduler.py's logger prefix: DP, then PP,
    # TP, EP, each only where that size is above one): "[2025-01-24 04:52:54 TP1]", "[... DP1 TP2]", "[... TP0 EP0]".
    # The TP rank is the scheduler's rank in its world; under pipeline parallelism only the first stage's is.
    (re.compile(r"\[(?:\d{4}-\d\d-\d\d \d\d:\d\d:\d\d )?(?:DP\d+ )?(?:PP0 )?TP(\d+)(?: EP\d+)?\]"), "rank", "TP"),
    # TensorRT-LLM's Python logger: "[11/17/2025-14:46:33] [TRT-LLM] [RANK 0] [E] ...".
    (re.compile(r"\[TRT-LLM\] \[RANK (\d+)\]"), "rank", "[RANK "),
    # SkyPilot's multi-node task output: "(head, rank=0, pid=21170) ...", "(worker1, rank=1, pid=20075, ip=...) ...".
    (re.compile(r"\((?:head|worker\d+), rank=(\d+), pid=\d+"), "rank", ", rank="),
    # OLMo's logger: "CRITICAL [olmo.util:158, rank=0] ...".
    (re.compile(r"\[[\w.]+:\d+, rank=(\d+)\]"), "rank", ", rank="),
    # NeMo-RL's Ray workers name themselves by class and training rank: "(MegatronPolicyWorker[rank=0] pid=4182) ...".
    (re.compile(r"\(\w+\[rank=(\d+)\] pid=\d+"), "rank", "[rank="),
    # MosaicML LLM Foundry's logging format, after the time: "rank{global rank}[{pid}][{thread}]: LEVEL: logger: ...".
    (re.compile(r"(?<![\w\[])rank(\d+)\[\d+\]\[[^\]\s]*\]: "), "rank", "]["),
)
_SLURM_LABEL = re.compile(r"^\s{0,4}(\d{1,5}): ")
_NCCL = re.compile(r"(?:^|[\s\]:])(?P<host>[A-Za-z0-9][\w.-]*):(?P<pid>\d+):(?P<tid>\d+) \[(?P<dev>\d+)\] ")
_RANK_IN_TEXT = re.compile(r"\[(?:PG [^\]]*?)?Rank (\d+)\]")
# text-generation-inference's launcher ends a shard's lines with its tracing field: "... rank=1".
_TRAILING_RANK = re.compile(r"\srank=(\d+)\s*$")
# Open MPI's "[host:pid] " in front of its help and error lines, and UCX's "[seconds] [host:pid:thread] ".
_OMPI = re.compile(r"(?:\[\d+\.\d+\] +)?\[(?P<host>[A-Za-z][\w.-]*):(?P<pid>\d+)(?::\d+)?\] ")
_RAY_PID = re.compile(r"\((?:\w+ |\w+\[rank=\d+\] |\w+, rank=\d+, )?(?:rank=\d+ |TP\d+ )?pid=(\d+)(?:, ip=[\d.]+)?\)")
_SYSLOG = re.compile(r"^(?P<mon>Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +(?P<d>\d+) "
                     r"(?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d) (?P<host>[\w.-]+) kernel:")
_DMESG = re.compile(r"^\[\s*(\d{1,12}\.\d{1,9})\]")
# PyTorch's c10 logger does not zero-pad the month ("E626 05:14:36" is June 26); glog does ("E0626"). The level letter
# comes first, its start-of-line-or-bracket check after it, so that re skips to the letter instead of trying an
# alternation at every column (2.1 -> 0.8 us a line on the benchmark's logs, the same matches).
_GLOG = re.compile(r"(?P<lvl>[IWEF])(?<![^\[\]: ][IWEF])(?P<mo>1[0-2]|0?[1-9])(?P<d>[0-3]\d) (?P<h>\d\d):(?P<mi>\d\d):"
                   r"(?P<s>\d\d(?:\.\d+)?)(?: +(?P<pid>\d+))? ")
_ISO = re.compile(r"(?P<y>\d{4})-(?P<mo>\d\d)-(?P<d>\d\d)[ T_](?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d(?:[.,]\d+)?)")
_VLLM = re.compile(r"\b(?P<lvl>INFO|WARNING|ERROR|DEBUG|CRITICAL) (?P<mo>\d\d)-(?P<d>\d\d) "
                   r"(?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)")
_MONTHS = {m: i for i, m in enumerate("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split(), 1)}
_GLOG_LEVEL = {"I": "INFO", "W": "WARNING", "E": "ERROR", "F": "FATAL"}


def _seconds(mo: str | int, d: str, h: str, mi: str, s: str) -> float:
    # Years are absent from glog and syslog stamps; month and day order events within one job.
    return ((int(mo) * 31 + int(d)) * 24 + int(h)) * 3600 + int(mi) * 60 + float(s.replace(",", "."))


def wall_seconds(tm: time.struct_time) -> float:
    """A local time (an epoch timestamp's) on the same year-less scale as the stamps in the logs."""
    return _seconds(tm.tm_mon, str(tm.tm_mday), str(tm.tm_hour), str(tm.tm_min), str(tm.tm_sec))


def parse_time(line: str) -> tuple[float | None, str, str | None]:
    head = line[:400]
    if m := _DMESG.match(head):
        return float(m.group(1)), "boot", None
    if m := _SYSLOG.match(head):
        return _seconds(_MONTHS[m["mon"]], m["d"], m["h"], m["mi"], m["s"]), "wall", None
    if m := _GLOG.search(head):
        return _seconds(m["mo"], m["d"], m["h"], m["mi"], m["s"]), "wall", _GLOG_LEVEL[m["lvl"]]
    if m := _ISO.search(head):
        return _seconds(m["mo"], m["d"], m["h"], m["mi"], m["s"]), "wall", None
    if m := _VLLM.search(head):
        return _seconds(m["mo"], m["d"], m["h"], m["mi"], m["s"]), "wall", m["lvl"]
    return None, "wall", None


def parse_line(line: str) -> LineContext:
    segments: list[tuple[int, Source]] = []
    for regex, field, needed in _PREFIXES:
        if needed in line:
            for m in regex.finditer(line):
                segments.append((m.start(), Source(**{field: bounded(m.group(1))})))
    if not segments and (m := _SLURM_LABEL.match(line)):
        segments.append((0, Source(rank=bounded(m.group(1)))))
    if len(segments) > 1:
        segments.sort(key=lambda seg: seg[0])
    extra = {}
    if "] " in line and (m := _NCCL.search(line)):
        extra = {"host": m["host"], "pid": bounded(m["pid"], MAX_PID), "device": bounded(m["dev"])}
    elif "pid=" in line and (m := _RAY_PID.search(line)):
        extra = {"pid": bounded(m.group(1), MAX_PID)}
    elif line.startswith("[") and (m := _OMPI.match(line)):
        extra = {"host": m["host"], "pid": bounded(m["pid"], MAX_PID)}
    if " kernel:" in line and (m := _SYSLOG.match(line)):
        extra["host"] = m["host"]
    in_text = ("Rank " in line and _RANK_IN_TEXT.search(line)) or ("rank=" in line and _TRAILING_RANK.search(line))
    if in_text and not any(s.rank is not None for _, s in segments):
        extra["rank"] = bounded(in_text.group(1))
    if "pid" not in extra and (glog := _GLOG.search(line[:400])) and glog["pid"]:
        extra["pid"] = bounded(glog["pid"], MAX_PID)
    if extra:
        base = Source(**extra)
        segments = [(start, src.merged(base)) for start, src in segments] or [(0, base)]
    return LineContext(tuple(segments))


# What launchers and loggers put in front of a message at the start of a line, one after another: a pattern anchored
# at the start of a message ("^RuntimeError: ...") is tried again after them.
_LEADING = re.compile(
    r"\s*(?:\[(?:rank|default)\d+\]:?"                                   # torchrun --tee, DeepSpeed's launcher
    r"|rank\d+\]:"                                   # the same, its bracket cut off where a paste starts mid-line
    r"|\[(?:[\w.-]{1,64}:)?\d{1,6}\]:(?=\S)"   # torchrun's log_line_prefix_template: "[${rank}]:", "[host:N]:"
    r"|\[rank: \d+\]"                                                     # Lightning
    r"|(?:\[(?:\d+,)?\d+\])?<std(?:out|err)>:"                             # Open MPI --tag-output, Horovod
    r"|\((?:[\w.-]+(?: [\w=.-]+)*? )?pid=\d+(?:, ip=[\d.]+)?\)"          # Ray actors ("(pid=1)" in 1.x), vLLM
    r"|\((?:head|worker\d+), rank=\d+, pid=\d+(?:, ip=[\d.]+)?\)"        # SkyPilot's nodes
    r"|:? ?rank\d+\[\d+\]\[[^\]\s]{1,64}\]:"                                 # LLM Foundry
    r"|(?:INFO|WARNING|ERROR|DEBUG|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[?[\w.-]+:\d+\]"  # vLLM
    r"|\[?[IWEF]\d{3,4} \d\d:\d\d:\d\d(?:\.\d+)?(?: +\d+)? [\w./-]+:\d+\]"  # glog, PyTorch's c10 logger
    r"|\[\d+/\d+(?:_\d+)?\](?= )"             # torch.compile's compile id after the logger's prefix ("[0/0]")
    r"|[\w.-]{1,255}(?:/[\w.-]{1,255}){1,64}\.py:\d{1,7}\](?= )"  # a logger's prefix the paste cut ("pkg/x.py:12] ")
    # a service's output as journalctl prints it, short or short-iso: time, host, program[pid]
    # ("Oct 04 15:02:41 llm sd-webui-forge-start[394]: ")
    r"|(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[+-]\d\d:?\d\d)?)"
    r" [\w.-]{1,255} [\w./@-]{1,100}\[\d{1,10}\]:(?= )"
    r"|\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\]?"  # ISO date and time
    r"|(?:[A-Z][a-z]{2} [ \d]\d )?\d\d:\d\d:\d\d(?:\.\d+)?(?= )"  # CI output, syslog: "Dec 03 17:59:26 ", "02:21:53 "
    r"|[IWEDC] \d\d-\d\d \d\d:\d\d:\d\d [\w./-]+:\d+\]"  # SkyPilot's logger: "I 09-12 22:49:49 file.py:497]"
    r"|[\w.-]+/\d+ \[\d+\]:"                                            # TorchX: "role/replica [local_rank]:"
    r"|\|(?= )"                                   # a log console's table pasted as text: "| time | message"
    r"|\[\d{1,3}(?:;\d{1,3})*m"                   # a colour code whose ESC the paste lost (Ray's "[36m(task pid=1)[0m")
    r"|>|\*\*|`{1,3}"                       # a paste's Markdown: a quote, bold, a code span around the line
    r"|E {3,}(?=\S)"                        # pytest's explanation of a failed test ("E       RuntimeError: ...")
    r"|\"message\": \"(?=[\w.]{1,200}: )"          # torchelastic's error record printed as JSON (the exception line)
    r")")
# What a launcher puts at the very start of each line: Slurm's --label task number, pdsh's host (DeepSpeed's
# multi-node runner); `docker compose logs`' service name ("trainer-1  | ", "trainer_1  | " before Compose v2) and
# `docker service logs`' task ("svc.1.<task id>@<node>    | "). Not an exception class ("RuntimeError: ..." is the
# message itself). Bounded: a label is a task number or a host name, and on a line of megabytes without a space an
# unbounded run backtracks through all of it (0.2 s per pattern on the hostile 200 MB line).
_LINE_LABEL = re.compile(r"\s{0,4}(?:(?:\d{1,5}|(?![\w.]{0,253}(?:Error|Exception|Warning)\b)[A-Za-z0-9][\w-]{0,62}"
                         r"(?:\.[\w-]{1,63}){0,126}): |[A-Za-z0-9][\w.-]{0,126}(?:@[\w.-]{1,126})? {1,40}\| )"
                         r"(?=[ \t]{0,80}\S)")


def message_start(line: str) -> int:
    """The column where the message begins, after a launcher's line label and the prefixes in _LEADING (0 when
    there are none)."""
    pos = label = m.end() if (m := _LINE_LABEL.match(line)) else 0
    while (m := _LEADING.match(line, pos)) and m.end() > pos:
        pos = m.end()
    if pos > label and line[pos:pos + 1] == " ":
        pos += 1  # the space that separates a prefix from the line it precedes
    return pos  # the line as printed after its prefixes: its indentation kept, as without them


def after_prefixes(line: str) -> str:
    """The line as its program printed it: without the labels and prefixes in front (message_start)."""
    return line[message_start(line):]


# The closing half of the Markdown a paste put around the line ("**Killed**", "`Killed`").
_CLOSING_MARKDOWN = re.compile(r"(?:\*\*|`{1,3})\s*$")


def message_end(line: str, start: int) -> int:
    """Where the message ends: before a closing bold or code-span marker when message_start skipped an opening one,
    so that a pattern that reads to the end of the line still fits."""
    if line[:start].rstrip().endswith(("**", "`")) and (m := _CLOSING_MARKDOWN.search(line, start)):
        return m.start()
    return len(line)


_SUMMARY_FIELD = re.compile(r"^\s{0,4}(?:exitcode|error_file|traceback|time|host|rank)\s*:")
# A pasted summary can lose its line breaks or its alignment ("rank2 (local rank: 2)exitcode: -9 ...", a log
# console's "[2]: time : ... host : algo-2 rank : 2 (local_rank: 2) exitcode : -6 ..."): the entry on one line.
_SUMMARY_RANK = re.compile(r"^\s{0,4}rank\s*:?\s*(\d+)\s*\(local[_ ]rank:\s*(\d+)\)")
_SUMMARY_HOST = re.compile(r"^\s{0,4}host\s*:\s*(\S+)")
_FLAT_RANK = re.compile(r"(?<![\w-])rank\s*:?\s*(\d+)\s*\(local[_ ]rank:\s*(\d+)\)")
_FLAT_HOST = re.compile(r"(?<![\w-])host\s*:\s*([\w.-]+)\s+rank\b")
_SUMMARY_HEADER = re.compile(r"^\s{0,4}\[\d+\]:\s*$")


def _unlabelled(line: str) -> str:
    """A summary line without the label a launcher put before it (pdsh's "worker-1:   rank      : 8 ...")."""
    if _SUMMARY_FIELD.match(line) or _SUMMARY_HEADER.match(line) or not (m := _LINE_LABEL.match(line)):
        return line
    return line[m.end():]


def is_summary_field(line: str) -> bool:
    return bool(_SUMMARY_FIELD.match(_unlabelled(line)))


def flattened_entry_source(line: str) -> Source:
    """Rank and host of a torchelastic failure entry pasted on one line (see _FLAT_RANK)."""
    if "local" not in line or not (m := _FLAT_RANK.search(line)):
        return EMPTY_SOURCE
    host = h.group(1) if (h := _FLAT_HOST.search(line, 0, m.end())) else None
    return Source(rank=bounded(m.group(1)), local_rank=bounded(m.group(2)), host=host)


def summary_entry_source(previous: list[str]) -> tuple[Source, bool]:
    """Rank and host of the torchelastic failure entry holding a field, from the lines above it (nearest
    first), and whether the entry is the one headed "Root Cause (first observed failure)"."""
    rank = local = host = None
    root_cause = False
    for i, line in enumerate(map(_unlabelled, previous)):
        if m := _SUMMARY_RANK.match(line):
            rank, local = bounded(m.group(1)), bounded(m.group(2))
        elif m := _SUMMARY_HOST.match(line):
            host = m.group(1)
        elif _SUMMARY_HEADER.match(line):
            root_cause = i + 1 < len(previous) and "Root Cause (first observed failure)" in previous[i + 1]
            break
        elif not _SUMMARY_FIELD.match(line):
            break
    return Source(rank=rank, local_rank=local, host=host), root_cause


_LOG_DIR = re.compile(r"attempt_(\d+)/(\d+)/(?:stdout|stderr|error)\.(?:log|json)$")
_FILE_RANK = re.compile(r"(?:^|[^a-z])rank[-_.]?(\d+)", re.IGNORECASE)
_HOST_TOKEN = re.compile(r"^[a-z][a-z0-9-]*\d[a-z0-9-]*$", re.IGNORECASE)
_NOT_HOST = re.compile(r"^(?:slurm|job|attempt|rank|default|worker|log|stdout|stderr|nccl|out|err|run|step|epoch|"
                       r"checkpoint|ckpt)", re.I)


def host_like(token: str) -> bool:
    """A file or folder name part that reads as a host name (node007, gpu-a12), not a job, rank or run label."""
    return bool(_HOST_TOKEN.match(token)) and not _NOT_HOST.match(token)


def source_from_path(path: str) -> tuple[Source, int | None]:
    """Rank or host a file name carries (rank3.log, node007.out, nccl.%h.%p), and a torchrun attempt."""
    posix = path.replace("\\", "/")
    if m := _LOG_DIR.search(posix):
        return Source(local_rank=bounded(m.group(2))), bounded(m.group(1))
    name = PurePath(posix).name
    rank = bounded(m.group(1)) if (m := _FILE_RANK.search(name)) else None
    host = None
    for token in re.split(r"[._]", name):
        if host_like(token):
            host = token
            break
    return Source(rank=rank, host=host), None
