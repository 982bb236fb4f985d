"""Text a user copies out of a diagnosis: the environment that makes the next failure diagnosable,
and an evidence excerpt with hosts, addresses and user paths masked for an issue tracker."""

from __future__ import annotations

from firstfault.diagnosis import Diagnosis, Report
from firstfault.redaction import redact, report_hosts
from firstfault.render import where

# What each kind of failure needs in the next run's log, by tier of the first diagnosis.
_ALWAYS = (("NCCL_DEBUG", "INFO"), ("TORCH_NCCL_TRACE_BUFFER_SIZE", "2000"), ("TORCH_NCCL_DUMP_ON_TIMEOUT", "1"))
_BY_TIER = {
    "timeout": (("TORCH_DISTRIBUTED_DEBUG", "DETAIL"), ("TORCH_NCCL_DESYNC_DEBUG", "1")),
    "transport": (("NCCL_DEBUG_SUBSYS", "INIT,NET"),),
    "device-fault": (("CUDA_LAUNCH_BLOCKING", "1"), ("TORCH_SHOW_CPP_STACKTRACES", "1")),
    "hardware": (("CUDA_LAUNCH_BLOCKING", "1"),),
    "rank-crash": (("TORCH_SHOW_CPP_STACKTRACES", "1"), ("PYTHONFAULTHANDLER", "1")),
    "launcher": (("TORCH_CPP_LOG_LEVEL", "INFO"),),
}


def env_block(diagnosis: Diagnosis | None) -> str:
    pairs = list(_ALWAYS)
    if diagnosis is not None:
        pairs += _BY_TIER.get(diagnosis.reference.tier, ())
        if diagnosis.reference.id == "mismatched-collectives" and ("TORCH_DISTRIBUTED_DEBUG", "DETAIL") not in pairs:
            pairs.append(("TORCH_DISTRIBUTED_DEBUG", "DETAIL"))
    return "\n".join(f"export {name}={value}" for name, value in dict(pairs).items()) + "\n"


def evidence_excerpt(report: Report, lines: int = 12) -> str:
    """The verdict, the initiating line and the first collateral lines, redacted."""
    if not report.diagnoses:
        return "firstfault: no failure found\n"
    top = report.diagnoses[0]
    out = [f"firstfault {report.version}: {'undetermined' if top.undetermined else 'first failure'}: "
           f"{top.reference.title} [{top.id}] (confidence {top.confidence:.2f})"]
    if top.initiator:
        out += [f"initiator: {where(top.initiator)}", f"  {(top.initiator.text or '').strip()}"]
    if top.collateral:
        out.append(f"collateral ({top.collateral_total} lines), first {min(lines, len(top.collateral))}:")
        out += [f"  {where(loc)}: {(loc.text or '').strip()}" for loc in top.collateral[:lines]]
    return redact("\n".join(out), report_hosts(report)) + "\n"
