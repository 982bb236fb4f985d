"""Which serving or training framework a failure happened in, from the lines that matched: a reference can give
advice per framework (a vLLM worker's OOM wants gpu_memory_utilization, not activation checkpointing)."""

from __future__ import annotations

import re
from typing import Iterable

from firstfault.matcher import Event
from firstfault.model import Reference

# Marks of each framework in a line: its worker/process tags and its package path; an event of its own emitter
# counts too.
_MARKS = {
    "vllm": re.compile(r"\((?:VllmWorker|EngineCore|RayWorkerVllm|Worker_[TP]P\d)|/vllm/|\bvLLM\b"),
    "deepspeed": re.compile(r"deepspeed", re.IGNORECASE),
    # SGLang's package path, and its --mem-fraction-static, which its memory errors name
    "sglang": re.compile(r"/sglang/|--mem-fraction-static"),
    # Huawei's stack on Ascend NPUs: PyTorch's adapter, its collective library, the devices' name, and CANN's error
    # codes (a module's letter or digit and four digits: "EI0006: ", "EZ9999[PID: 1]", "(EI0006)")
    "ascend": re.compile(r"torch_npu|HCCL|\bAscend\b|\bNPU\b|\bE[A-Z0-9]\d{4}(?=[:\[)])"),
    # Text Generation Inference (and LoRAX, its fork): the launcher and server names, and the flag its warm-up names
    "tgi": re.compile(r"text[-_]generation[-_](?:launcher|server|router)|lorax_(?:launcher|client)"
                      r"|--max-batch-prefill-tokens"),
    # AMReX (WarpX, Castro, Nyx, PeleC): its abort's "amrex::Abort::RANK::" and its sources' names
    "amrex": re.compile(r"amrex::|\bAMReX_\w+\.(?:cpp|H)\b"),
}
FRAMEWORKS = tuple(_MARKS)
_NAMES = {"vllm": "vLLM", "deepspeed": "DeepSpeed", "sglang": "SGLang", "ascend": "Ascend",
          "tgi": "Text Generation Inference", "amrex": "AMReX"}


def display_name(framework: str) -> str:
    return _NAMES.get(framework, framework)


def fix_for(reference: Reference, found: set[str]) -> tuple[str | None, tuple[str, ...]]:
    """(framework, its fixes) when the reference has advice for a framework the log shows; else (None, fix)."""
    return next(((name, fixes) for name, fixes in reference.fix_for if name in found), (None, reference.fix))


def frameworks_in(events: Iterable[Event]) -> set[str]:
    found: set[str] = set()
    for event in events:
        if event.pattern.emitter in _MARKS:
            found.add(event.pattern.emitter)
        found.update(name for name, mark in _MARKS.items() if name not in found and mark.search(event.text))
        if len(found) == len(_MARKS):
            break
    return found
