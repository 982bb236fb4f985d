"""Run real torch.distributed jobs (torchrun, gloo, CPU) with injected faults and save their logs.

    python tests/realrun/generate.py [SCENARIO ...]

Needs a Python with torch installed (``pip install torch==2.13.0``). Writes
``tests/fixtures/realrun/<scenario>.log`` (stdout and stderr together, as ``2>&1 | tee`` gives)
and ``tests/fixtures/realrun/expected.toml`` with the verdict each fault must get: the reference
id and the rank that started it. Healthy runs go to ``tests/fixtures/clean/`` (the clean-log corpus,
on which nothing may be diagnosed). The test suite reads only the committed files.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import attrs

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "fixtures" / "realrun"
CLEAN = HERE.parent / "fixtures" / "clean"
WORKER = HERE / "worker.py"


@attrs.frozen
class Scenario:
    name: str
    fault: str
    expect_id: str | None  # None: a healthy run for the clean-log corpus
    expect_rank: int | None
    env: dict[str, str] = attrs.field(factory=dict)
    torchrun_args: tuple[str, ...] = ()
    block_port: int | None = None
    terminate_after: float | None = None  # send torchrun SIGTERM after this many seconds (a scheduler stopping it)
    nodes: int = 1  # >1: one torchrun agent per "node" on this machine, all writing to one log as srun does


SCENARIOS = [
    Scenario("rank-raises", "raise", "python-exception-one-rank", 1),
    Scenario("rank-segfault", "segv", "segfault-one-rank", 1),
    Scenario("rank-sigkill", "sigkill", "host-oom-kill", 2, env={"FAULT_RANK": "2"}),
    Scenario("rank-hangs", "hang", "collective-timeout", 1, env={"PG_TIMEOUT": "6"}),
    Scenario("mismatch-detail", "mismatch", "mismatched-collectives", 1,
             env={"TORCH_DISTRIBUTED_DEBUG": "DETAIL"}),
    # Without TORCH_DISTRIBUTED_DEBUG=DETAIL every rank only times out: the log cannot name the culprit.
    Scenario("mismatch-plain", "mismatch", "collective-timeout", None, env={"PG_TIMEOUT": "6"}),
    Scenario("port-in-use", "none", "port-in-use", None,
             torchrun_args=("--master-port", "29517"), block_port=29517),
    Scenario("bad-gloo-ifname", "none", "wrong-socket-ifname", None, env={"GLOO_SOCKET_IFNAME": "eth9"}),
    Scenario("unresolvable-rdzv-host", "none", "dns-resolution-failure", None,
             torchrun_args=("--rdzv-backend", "c10d", "--rdzv-endpoint", "no-such-host.invalid:29400")),
    Scenario("rendezvous-incomplete", "none", "rendezvous-timeout", None,
             torchrun_args=("--nnodes", "2", "--rdzv-backend", "c10d", "--rdzv-endpoint", "localhost:29411",
                            "--rdzv-conf", "join_timeout=8")),
    # The restart reuses the master port and dies in gloo's connectFullMesh on every rank; the first
    # attempt (rank 1 raising) is history.
    Scenario("restart-then-raise", "raise", "gloo-connect-timeout", None,
             torchrun_args=("--max-restarts", "1")),
    # The same at LOGLEVEL=INFO: the agent's "Worker group FAILED. 1/1 attempts left; will restart worker group"
    # reports on the first attempt and ends it.
    Scenario("restart-then-raise-verbose", "raise", "gloo-connect-timeout", None, env={"LOGLEVEL": "INFO"},
             torchrun_args=("--max-restarts", "1")),
    # A second node whose master (node 0, which hosts the TCPStore) never comes up.
    Scenario("master-unreachable", "none", "rendezvous-store-unreachable", None,
             torchrun_args=("--nnodes", "2", "--node-rank", "1", "--master-addr", "127.0.0.1",
                            "--master-port", "29531", "--rdzv-conf", "timeout=8")),
    # DDP with a parameter that never gets a gradient: every rank raises on the second iteration.
    Scenario("ddp-unused-parameter", "unused-param", "ddp-unused-parameters", None,
             env={"TORCH_DISTRIBUTED_DEBUG": "INFO"}),
    # A rank that exits with status 3 and no traceback: the others lose their connection to it, and torchrun's
    # summary names another rank as root cause; its exit status (not a signal) gives it away.
    Scenario("rank-exits-silently", "exit", "peer-connection-lost", 1),
    # Two agents ("nodes") whose output srun-style interleaves in one file; rank 3 (second node) raises.
    Scenario("two-nodes-rank-raises", "raise", "python-exception-one-rank", 3, env={"FAULT_RANK": "3"}, nodes=2),
    # Rank 1 runs out of data and exits 0 while the others are in a collective: they only lose a peer, and
    # nothing in the log says which (torchrun lists only failed workers). The honest verdict is undetermined.
    Scenario("rank-leaves-early", "early-exit", "peer-connection-lost", None),
    # Rank 2 reaches init_process_group 40 s late; the others time out waiting for its address in the store.
    Scenario("rank-late-to-init", "late-init", "gloo-connect-timeout", 2, env={"FAULT_RANK": "2", "PG_TIMEOUT": "10"}),
    # monitored_barrier names the rank that did not arrive (rank 1 sleeps past its 5 s timeout).
    Scenario("monitored-barrier", "monitored-barrier", "monitored-barrier-rank-missing", 1),
    # A DataLoader worker killed by SIGKILL (what the OOM killer does) on rank 1.
    Scenario("dataloader-worker-killed", "dataloader-kill", "host-oom-kill", 1),
    # The same with SIGABRT (a failed C++ assertion): a signal that is not the launcher's SIGTERM.
    Scenario("rank-aborts", "abort", "peer-connection-lost", 1),
    # The job is stopped from outside (as a scheduler does at its time limit): torchrun gets SIGTERM mid-training.
    Scenario("launcher-terminated", "slow", "launcher-received-signal", None, terminate_after=12),
    # env:// initialisation without MASTER_ADDR: every rank raises before rendezvous.
    Scenario("env-master-addr-missing", "no-master-addr", "env-rendezvous-variable-missing", None),
    # Every rank raises the same error at start-up: a shared cause, no rank to blame.
    Scenario("init-twice", "init-twice", "process-group-initialized-twice", None),
    # A DDP script on a CPU-only torch (this one): every rank's torch.cuda.set_device raises; no rank to blame.
    Scenario("cuda-on-cpu-build", "cuda-on-cpu-build", "torch-cpu-build", None),
    # Healthy jobs: nothing in them may be diagnosed.
    Scenario("torchrun-gloo-healthy", "none", None, None),
    Scenario("torchrun-gloo-healthy-verbose", "none", None, None,
             env={"LOGLEVEL": "INFO", "TORCH_CPP_LOG_LEVEL": "INFO", "TORCH_DISTRIBUTED_DEBUG": "DETAIL"},
             torchrun_args=("--tee", "3")),
]


def run(scenario: Scenario) -> str:
    env = {**os.environ, "FAULT": scenario.fault, "PYTHONUNBUFFERED": "1", **scenario.env}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "4"]
    if "--max-restarts" not in scenario.torchrun_args:
        cmd += ["--max-restarts", "0"]
    if "--rdzv-backend" not in scenario.torchrun_args and "--master-port" not in scenario.torchrun_args:
        cmd += ["--master-port", "29523"]
    cmd += [*scenario.torchrun_args, str(WORKER)]
    blocker = None
    if scenario.block_port is not None:
        blocker = socket.socket()
        blocker.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        blocker.bind(("", scenario.block_port))
        blocker.listen()
    try:
        agent = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=HERE)
        if scenario.terminate_after is not None:
            try:
                agent.wait(timeout=scenario.terminate_after)
            except subprocess.TimeoutExpired:
                agent.send_signal(signal.SIGTERM)
        out, _ = agent.communicate(timeout=180)
    finally:
        if blocker is not None:
            blocker.close()
    return out.decode("utf-8", "replace")


def run_nodes(scenario: Scenario) -> str:
    """Several torchrun agents joined by the c10d rendezvous, their output interleaved in one file."""
    env = {**os.environ, "FAULT": scenario.fault, "PYTHONUNBUFFERED": "1", **scenario.env}
    with tempfile.TemporaryFile() as out:
        agents = [subprocess.Popen(
            [sys.executable, "-m", "torch.distributed.run", "--nnodes", str(scenario.nodes), "--node-rank", str(n),
             "--nproc-per-node", "2", "--rdzv-backend", "c10d", "--rdzv-endpoint", "localhost:29561",
             "--rdzv-id", scenario.name, "--max-restarts", "0", *scenario.torchrun_args, str(WORKER)],
            env=env, stdout=out, stderr=subprocess.STDOUT, cwd=HERE) for n in range(scenario.nodes)]
        for agent in agents:
            agent.wait(timeout=180)
        out.seek(0)
        return out.read().decode("utf-8", "replace")


def main(argv: list[str]) -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    CLEAN.mkdir(parents=True, exist_ok=True)
    chosen = [s for s in SCENARIOS if not argv or s.name in argv]
    for scenario in chosen:
        text = run_nodes(scenario) if scenario.nodes > 1 else run(scenario)
        ((OUT if scenario.expect_id else CLEAN) / f"{scenario.name}.log").write_text(text, encoding="utf-8")
        print(f"{scenario.name}: {len(text.splitlines())} lines")
    lines = ["# Written by tests/realrun/generate.py: the verdict each injected fault must get.", ""]
    for s in (s for s in SCENARIOS if s.expect_id):
        lines += [f'["{s.name}"]', f'id = "{s.expect_id}"']
        if s.expect_rank is not None:
            lines.append(f"rank = {s.expect_rank}")
        lines.append("")
    (OUT / "expected.toml").write_text("\n".join(lines), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
