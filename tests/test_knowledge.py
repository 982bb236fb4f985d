"""Knowledge tables, the copied advice (environment block, redaction) and the server's settings parser."""

from __future__ import annotations

import pytest

from firstfault.advice import env_block, evidence_excerpt, redact
from firstfault.cli import main
from firstfault.knowledge import Knowledge
from firstfault.loader import builtin_dir
from firstfault.lsp.settings import Settings, parse

from conftest import EXAMPLES, REALRUN


@pytest.fixture(scope="module")
def knowledge() -> Knowledge:
    return Knowledge.load(builtin_dir() / "knowledge")


@pytest.mark.parametrize("line, expected", [
    ("[rank3]:   exitcode  : -6 (pid: 4711)", "SIGABRT"),          # torchelastic failure summary
    ("exitcode  : -9 (pid: 2719)", "SIGKILL"),
    ("srun: error: node12: task 3: Exited with exit code 137", "exit 137"),
    ("Signal 11 (SIGSEGV) received by PID 31337", "SIGSEGV"),
    ("NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.", "Xid 79"),
    ("torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error "
     "(run with NCCL_DEBUG=INFO for details)", "ncclSystemError"),
    ("RuntimeError: CUDA error: an illegal memory access was encountered", "cudaErrorIllegalAddress"),
    ("export TORCH_NCCL_TRACE_BUFFER_SIZE=2000", "TORCH_NCCL_TRACE_BUFFER_SIZE"),
    ("mpirun -n 1 -x FI_PROVIDER=efa -x NCCL_SOCKET_IFNAME=eth0 -x FI_EFA_USE_DEVICE_RDMA=0", "FI_EFA_USE_DEVICE_RDMA"),
    ("ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable RANK expected, "
     "but not set", "RANK"),
])
def test_terms_found_in_real_lines(knowledge: Knowledge, line: str, expected: str):
    assert expected in {t.entry.name for t in knowledge.terms(line)}


def test_terms_at_only_cover_the_hovered_column(knowledge: Knowledge):
    line = "NCCL_DEBUG=INFO NCCL_SOCKET_IFNAME=eth0"
    assert [t.entry.name for t in knowledge.terms_at(line, 20)] == ["NCCL_SOCKET_IFNAME"]
    assert knowledge.terms_at("step 10 loss 2.1", 3) == []


def test_unknown_codes_explain_nothing(knowledge: Knowledge):
    assert knowledge.exit_status(-99) is None and knowledge.exit_status(3) is None
    assert list(knowledge.terms("NCCL_NOT_A_REAL_VARIABLE=1")) == []


def test_explain_cli_knows_terms_and_references(capsys):
    assert main(["explain", "Xid 79"]) == 0
    assert "fallen off the bus" in capsys.readouterr().out
    assert main(["explain", "NCCL_SOCKET_IFNAME"]) == 0
    assert "wrong-socket-ifname" in capsys.readouterr().out
    assert main(["explain", "no-such-thing"]) == 2


def test_redaction_masks_hosts_addresses_and_user_paths():
    text = "gpu-node-a:81234 connect to 10.1.2.3<45123> fe80::1:2:3 failed in /home/alice/train.py"
    assert redact(text, {"gpu-node-a"}) == "<host>:81234 connect to <ip><45123> <ip> failed in /home/<user>/train.py"
    assert redact("[E1202 16:24:31.402117312 ProcessGroupNCCL.cpp:632]", set()) == \
        "[E1202 16:24:31.402117312 ProcessGroupNCCL.cpp:632]"


def test_evidence_excerpt_of_the_example_is_redacted(engine):
    report = engine.analyze_paths([EXAMPLES / "oom-cascade" / "train.log"])
    excerpt = evidence_excerpt(report)
    assert "CUDA out of memory" in excerpt and "rank 2" in excerpt
    assert "gpu-node-a" not in excerpt and "gpu-node-b" not in excerpt


def test_environment_block_follows_the_failure(engine):
    timeout = engine.analyze_paths([REALRUN / "mismatch-plain.log"]).diagnoses[0]
    block = env_block(timeout)
    assert "export TORCH_DISTRIBUTED_DEBUG=DETAIL" in block and "export NCCL_DEBUG=INFO" in block
    assert "CUDA_LAUNCH_BLOCKING" not in block


def test_settings_fall_back_per_field():
    settings, problems = parse({"firstfault": {"maxDiagnosticsPerFile": 0, "minimumSeverity": "Warning",
                                               "signatureDirectories": "not-a-list", "trusted": False}})
    assert settings == Settings(minimum_severity="warning", trusted=False)
    assert len(problems) == 2
    assert parse(None) == (Settings(), [])
    assert parse(42)[1] == ["settings must be an object, got int"]


def test_untrusted_workspace_ignores_its_signature_directories(tmp_path):
    inside, outside = tmp_path / "ws" / "sigs", tmp_path / "home" / "sigs"
    settings = Settings(signature_dirs=(str(inside), str(outside)), trusted=False)
    assert settings.effective_signature_dirs([tmp_path / "ws"]) == [outside]
    assert len(Settings(signature_dirs=(str(inside),)).effective_signature_dirs([tmp_path / "ws"])) == 1
