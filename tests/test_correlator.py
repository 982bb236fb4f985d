import attrs
import pytest

from conftest import CLEAN, EXAMPLES, REALRUN, REFERENCE_HEAD
from firstfault.annotations import annotate
from firstfault.context import Source
from firstfault.correlator import resolve_ranks
from firstfault.diagnosis import rank_ranges
from firstfault.engine import Engine
from firstfault.loader import load_library


def top(engine, *paths):
    report = engine.analyze_paths(list(paths))
    return report, report.diagnoses[0]


def test_cascade_names_the_oom_rank_host_and_line_and_lists_the_collateral(engine):
    report, d = top(engine, EXAMPLES / "oom-cascade" / "train.log")
    assert (d.id, d.initiator.rank, d.initiator.host, d.initiator.line) == ("cuda-oom", 2, "gpu-node-a", 32)
    collateral_ranks = {loc.rank for loc in d.collateral if loc.reference_id == "collective-timeout"}
    assert collateral_ranks == {0, 1, 3, 4, 5, 6, 7}
    assert any("rank 5 (exitcode -6)" in e and "disagrees" in e for e in d.evidence_for)
    timeouts = next(x for x in report.diagnoses if x.id == "collective-timeout")
    assert timeouts.confidence < d.confidence and "collateral" in timeouts.evidence_against[0]


def test_collateral_lifts_a_weak_reading_but_never_a_signature_above_its_own_confidence(engine):
    # A signature's verdict is as sure alone as with lines that fit as its consequences (the log may hold the real
    # start among them): the cascade's OOM stays at 0.6. A SIGKILL that explains twelve peers' lost connections is
    # likelier than one alone, up to that level.
    _, oom = top(engine, EXAMPLES / "oom-cascade" / "train.log")
    _, killed = top(engine, REALRUN / "rank-sigkill.log")
    assert oom.id == "cuda-oom" and oom.collateral and oom.confidence == pytest.approx(0.6)
    assert killed.id == "host-oom-kill" and killed.collateral and killed.confidence == pytest.approx(0.55)


def test_silent_rank_is_the_suspect_when_all_others_time_out(engine):
    _, d = top(engine, REALRUN / "rank-hangs.log")
    assert (d.id, d.initiator.rank, d.undetermined) == ("collective-timeout", 1, False)
    assert any("reports no failure" in e for e in d.evidence_for)
    assert d.headline == "rank 1 stopped responding; rank(s) 0, 2-3 timed out waiting for it"
    # gloo prints no WorkNCCL(SeqNum=...): only the command that reads what this log has is offered.
    assert [c.title for c in d.verify] == ["List every rank's gloo send/recv timeout"]


def test_odd_rank_out_of_mismatched_fingerprints_is_the_culprit(engine):
    _, d = top(engine, REALRUN / "mismatch-detail.log")
    assert (d.id, d.initiator.rank) == ("mismatched-collectives", 1)
    assert any("odd one out" in e for e in d.evidence_for)


def test_when_every_rank_times_out_the_verdict_is_undetermined_with_next_checks(engine):
    _, d = top(engine, REALRUN / "mismatch-plain.log")
    assert d.undetermined and d.initiator is None and d.confidence < 0.5
    # No first line is named, yet the command that lines the ranks up still runs on the log the user gave.
    assert [c.argv[-1] for c in d.verify] == [str(REALRUN / "mismatch-plain.log")] and d.verify[0].complete
    assert any("TORCH_DISTRIBUTED_DEBUG=DETAIL" in c for c in d.next_checks)


def test_restart_attempts_are_split_and_the_last_one_is_diagnosed(engine):
    report, d = top(engine, REALRUN / "restart-then-raise.log")
    assert d.id == "gloo-connect-timeout"
    assert [a.summary for a in report.attempts][0].startswith("Python exception on one rank")
    assert len(report.attempts) == 2 and "2 attempts found" in report.notes[0]


def test_the_agents_restart_line_closes_the_attempt_it_reports_on(engine):
    # At LOGLEVEL=INFO the agent says why it restarts; the line is the first attempt's last, not the next one's.
    path = REALRUN / "restart-then-raise-verbose.log"
    restart = next(n for n, line in enumerate(path.read_text().splitlines(), 1) if "attempts left" in line)
    report, d = top(engine, path)
    assert d.id == "gloo-connect-timeout"
    first, last = report.attempts
    assert (first.last_line, last.first_line) == (restart, restart + 1)
    assert first.summary.startswith("Python exception on one rank")
    # Pasted alone it still says a worker failed, and no more: which one, and why, is above it in the log.
    alone = engine.analyze_text(path.read_text().splitlines()[restart - 1]).diagnoses[0]
    assert (alone.id, alone.undetermined) == ("torchelastic-child-failed", True)


def test_a_launch_that_failed_on_another_host_is_not_an_attempt_that_ended(engine):
    """colossalai run could not log in to the second host, then started torchrun on its own: that banner is the
    other host starting, not a restart: the traceback that follows is in the same attempt. Real lines:
    https://github.com/hpcaitech/ColossalAI/issues/2959 (cut where the poster cut it)."""
    lines = [
        'Error: failed to run torchrun --nproc_per_node=2 --nnodes=2 --node_rank=1 --rdzv_backend=c10d --rdzv_endpoint=VM-48-4-centos:23456 --rdzv_id=colossalai-default-job train_multi_node.py on VM-48-13-centos, is localhost: False, exception: No authentication methods available',
        'WARNING:torch.distributed.run:',
        '*****************************************',
        'Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed.',
        '*****************************************',
        "[19213] Initializing process group with: {'MASTER_ADDR': 'VM-48-13-centos', 'MASTER_PORT': '60734', 'WORLD_SIZE': '4', 'LOCAL_WORLD_SIZE': '2'}",
        "[19214] Initializing process group with: {'MASTER_ADDR': 'VM-48-13-centos', 'MASTER_PORT': '60734', 'WORLD_SIZE': '4', 'LOCAL_WORLD_SIZE': '2'}",
        '[19214] (rank = 3, local_rank = 1) training...',
        '[19213] (rank = 2, local_rank = 0) training...',
        'Traceback (most recent call last):',
        '  File "train_multi_node.py", line 53, in <module>',
        '    run()',
    ]
    report = engine.analyze_text("\n".join(lines))
    assert report.diagnoses[0].id == "deepspeed-ssh-unreachable"
    assert len(report.attempts) == 1


def test_torchrun_root_cause_is_weak_evidence_and_disagreement_is_said(engine):
    _, d = top(engine, REALRUN / "rank-hangs.log")
    remark = [e for e in d.evidence_for if "Root Cause" in e]
    assert remark and "rank 2" in remark[0] and "disagrees" in remark[0]


def test_per_rank_files_missing_rank_is_said(engine, tmp_path):
    source = (REALRUN / "rank-raises.log").read_text().splitlines()
    for rank in (0, 1, 3):
        mine = [line for line in source if line.startswith(f"[rank{rank}]:")]
        (tmp_path / f"rank{rank}.log").write_text("\n".join(mine) + "\n")
    init = ("node1:1234:1300 [0] NCCL INFO ncclCommInitRank comm 0x55d0 rank 0 nranks 4 cudaDev 0 busId 1b000"
            " - Init COMPLETE")
    with (tmp_path / "rank0.log").open("a") as f:
        f.write(init + "\n")
    report = engine.analyze_paths(sorted(tmp_path.glob("rank*.log")))
    assert any("no log was given for rank(s) 2 of 4" in n for n in report.notes)
    assert report.diagnoses[0].initiator.rank == 1


def test_a_silent_ranks_location_is_its_own_last_line(engine, tmp_path):
    """One file per rank (as torchrun --log-dir writes them): the rank that stopped responding is located at the
    last line of its own file, not at the launcher's summary about it."""
    source = (REALRUN / "rank-hangs.log").read_text().splitlines()
    for rank in range(4):
        mine = [line for line in source if line.startswith((f"[rank{rank}]:", f"rank {rank} "))]
        (tmp_path / f"rank{rank}.log").write_text("\n".join(mine) + "\n")
    d = engine.analyze_paths(sorted(tmp_path.glob("rank*.log"))).diagnoses[0]
    assert (d.id, d.initiator.rank, d.silent_rank) == ("collective-timeout", 1, 1)
    assert d.initiator.path.endswith("rank1.log") and d.initiator.text == "rank 1 step 2 ok sum=256"
    assert d.initiator.line == 3 and any(e.startswith("rank 1 was last seen on line 3: ") for e in d.evidence_for)


def test_glued_lines_are_attributed_to_the_right_rank(engine):
    text = ("[rank0]: step 9 ok[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
            "GPU 3 has a total capacity of 79.15 GiB of which 1.12 GiB is free.\n")
    d = engine.analyze_text(text).diagnoses[0]
    assert (d.id, d.initiator.rank) == ("cuda-oom", 3)


def test_a_line_that_lost_its_breaks_has_each_of_its_messages_read(engine):
    # huggingface/open-r1#152, as pasted: torchrun's agent lines glued into one. The SIGTERM lines read as a specific
    # pattern do not silence the worker's exit further along the line, which names the rank.
    glued = ("10:55:55.568000 290975 site-packages/torch/distributed/elastic/multiprocessing/api.py:897] Sending "
             "process 291191 closing signal SIGTERM W0201 10:55:55.570000 290975 site-packages/torch/distributed/"
             "elastic/multiprocessing/api.py:897] Sending process 291193 closing signal SIGTERM W0201 "
             "10:55:55.570000 290975 site-packages/torch/distributed/elastic/multiprocessing/api.py:897] Sending "
             "process 291194 closing signal SIGTERM E0201 10:55:56.239000 290975 site-packages/torch/distributed/"
             "elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: 1 (pid: 291192) of binary: "
             "/home/root123/miniconda3/envs/openr1/bin/python")
    report = engine.analyze_text(glued)
    assert {e.pattern.id for e in report.events} >= {"agent-sends-sigterm", "agent-worker-failed"}
    assert report.diagnoses[0].initiator.rank == 1


def test_precedence_hardware_beats_a_later_device_error_and_oom(engine):
    text = "\n".join([
        "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity",
        "Mar 10 01:33:03 gpu-node-7 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.",
        "[rank4]: RuntimeError: CUDA error: an illegal memory access was encountered",
    ])
    ids = [d.id for d in engine.analyze_text(text).diagnoses]
    assert ids[0] == "xid-79-fallen-off-bus"
    assert set(ids) >= {"cuda-oom", "illegal-memory-access"}


def test_clean_log_has_no_diagnosis(engine):
    text = "\n".join(f"[rank{r}]: step {s} loss 2.1 lr 3e-4" for s in range(50) for r in range(4))
    assert engine.analyze_text(text).diagnoses == ()


def test_a_warning_healthy_runs_also_print_is_a_failure_only_with_what_it_needs(engine):
    """The IPv6 lookup warning repeats while the store client retries; a run whose name resolves later goes on.
    A connection that then fails makes it the DNS failure it reports; an input that ends with the warnings
    (an excerpt, or a job stopped mid-retry) makes it a possible cause; a run that goes on past it is quiet."""
    lines = (REALRUN / "unresolvable-rdzv-host.log").read_text().splitlines()
    warnings = [line for line in lines if "cannot be retrieved (gai error" in line]
    assert len(warnings) > 3
    healthy = (CLEAN / "nccl-info-2node-socket-all-reduce-perf.log").read_text().splitlines()
    went_on = engine.analyze_text("\n".join([*warnings, *healthy]))
    assert went_on.diagnoses == ()
    notes = annotate(went_on, engine.library.references)
    assert {n.kind for per_input in notes.values() for n in per_input} == {"context"}  # no error squiggle
    # Attempts that time out and are retried are still no failure when the run goes on.
    retried = [line for line in lines[:17] if "has timed out" in line]
    assert any("- retrying" in line for line in retried)
    assert engine.analyze_text("\n".join([*warnings, *retried, *healthy])).diagnoses == ()
    excerpt = engine.analyze_text("\n".join(warnings)).diagnoses[0]
    assert (excerpt.id, excerpt.possible) == ("dns-resolution-failure", True) and excerpt.confidence <= 0.35
    assert "not conclusive on its own" in excerpt.evidence_for[0]
    raised = next(line for line in lines if "DistNetworkError: The client socket has timed out" in line)
    verdict = engine.analyze_text("\n".join([*warnings, raised])).diagnoses[0]
    assert (verdict.id, verdict.possible) == ("dns-resolution-failure", False)
    assert "gai error" in verdict.initiator.text


@pytest.mark.parametrize("ranks, text", [([0, 1, 2, 5], "0-2, 5"), ([3], "3"), ([], "")])
def test_rank_ranges(ranks, text):
    assert rank_ranges(ranks) == text


def test_one_rank_against_one_the_rank_behind_is_the_one_waited_for(engine):
    # huggingface/accelerate#934: rank 1 still in the first broadcast while rank 0 is in the next collective.
    lines = ["stderr: [E ProcessGroupNCCL.cpp:821] [Rank 1] Watchdog caught collective operation timeout: "
             "WorkNCCL(SeqNum=1, OpType=BROADCAST, Timeout(ms)=1800000) ran for 1808182 milliseconds before timing out.",
             "stderr: [E ProcessGroupNCCL.cpp:821] [Rank 0] Watchdog caught collective operation timeout: "
             "WorkNCCL(SeqNum=2, OpType=ALLGATHER, Timeout(ms)=1800000) ran for 1808116 milliseconds before timing out."]
    d = engine.analyze_text("\n".join(lines)).diagnoses[0]
    assert (d.id, d.initiator.rank, d.undetermined) == ("collective-timeout", 1, False)
    assert any("behind rank(s) 0" in e for e in d.evidence_for)
    # Sequence numbers alone cannot tell a rank that fell behind from ranks that issued different collectives.
    assert any("different collectives" in e and "TORCH_DISTRIBUTED_DEBUG=DETAIL" in e for e in d.evidence_against)


def test_a_rank_that_completed_the_number_another_is_stuck_in_means_the_sequences_are_out_of_step(engine):
    # meta-pytorch/torchtune#1107: a mid-epoch checkpoint save desynchronised the ranks. Rank 0 completed work 314,
    # so its 313 cannot be the _ALLGATHER_BASE rank 1 is still in: not "rank 1 fell behind".
    lines = ["[rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collective operation timeout: "
             "WorkNCCL(SeqNum=313, OpType=_ALLGATHER_BASE, NumelIn=262668288, NumelOut=525336576, Timeout(ms)=600000) "
             "ran for 600010 milliseconds before timing out.",
             "[rank0]:[E ProcessGroupNCCL.cpp:563] [Rank 0] Watchdog caught collective operation timeout: "
             "WorkNCCL(SeqNum=315, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600095 "
             "milliseconds before timing out.",
             "[rank0]:[E ProcessGroupNCCL.cpp:1537] [PG 0 Rank 0] Timeout at NCCL work: 315, last enqueued NCCL work: "
             "315, last completed NCCL work: 314."]
    d = engine.analyze_text("\n".join(lines)).diagnoses[0]
    assert (d.id, d.undetermined) == ("mismatched-collectives", False)
    assert d.headline == "the ranks' collectives are out of step: rank(s) 0 completed number 313, which rank 1 is still in"
    assert not any("fell behind" in e or "behind rank(s)" in e for e in d.evidence_for)
    assert not any("TORCH_DISTRIBUTED_DEBUG" in e for e in d.evidence_against)
    # Without rank 0's count of completed work nothing contradicts the reading that rank 1 is behind, and the
    # verdict names the reading this thread turned out to be as the alternative, with the check that separates them.
    d = engine.analyze_text("\n".join(lines[:2])).diagnoses[0]
    assert (d.id, d.initiator.rank) == ("collective-timeout", 1)
    assert any("issue different collectives" in e for e in d.evidence_against)


def test_sequence_numbers_of_two_process_groups_are_not_compared(engine):
    # alibaba/Pai-Megatron-Patch#693: global rank 2 times out in its tensor-parallel group (rank 0 there, work 112),
    # rank 3 in another group (rank 1 there, work 27). Each group numbers its own work, so 111 completed on rank 2
    # says nothing about rank 3's 27, and neither rank is behind the other.
    lines = ["Oct 22 03:18:42 [rank2]:[E1022 03:18:42.280385141 ProcessGroupNCCL.cpp:655] [Rank 0] Watchdog caught "
             "collective operation timeout: WorkNCCL(SeqNum=112, OpType=_REDUCE_SCATTER_BASE, NumelIn=2097152, "
             "NumelOut=1048576, Timeout(ms)=7200000) ran for 7200065 milliseconds before timing out.",
             "Oct 22 03:18:42 [rank2]:[E1022 03:18:42.280421593 ProcessGroupNCCL.cpp:2299] [PG ID 5 PG GUID "
             "22(TENSOR_MODEL_PARALLEL_GROUP) Rank 0]  failure detected by watchdog at work sequence id: 112 PG "
             "status: last enqueued work: 112, last completed work: 111",
             "Oct 22 03:18:42 [rank3]:[E1022 03:18:42.286962701 ProcessGroupNCCL.cpp:655] [Rank 1] Watchdog caught "
             "collective operation timeout: WorkNCCL(SeqNum=27, OpType=ALLREDUCE, NumelIn=512, NumelOut=512, "
             "Timeout(ms)=7200000) ran for 7200073 milliseconds before timing out."]
    d = engine.analyze_text("\n".join(lines)).diagnoses[0]
    assert (d.id, d.undetermined) == ("collective-timeout", True)
    assert not any("behind" in e or "odd one out" in e for e in d.evidence_for)


def test_timeouts_in_different_collectives_at_one_sequence_number_are_mismatched_collectives(engine):
    # ecmwf/anemoi-core#1064: a callback stopped some ranks early; rank 0 all-reduces while rank 5 broadcasts.
    lines = ["[rank0]:[E420 19:44:35.569754537 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective operation "
             "timeout: WorkNCCL(SeqNum=4832284, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for "
             "1800051 milliseconds before timing out.",
             "[rank5]:[E420 19:44:36.136978018 ProcessGroupNCCL.cpp:632] [Rank 5] Watchdog caught collective operation "
             "timeout: WorkNCCL(SeqNum=4832284, OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for "
             "1800059 milliseconds before timing out."]
    d = engine.analyze_text("\n".join(lines)).diagnoses[0]
    assert (d.id, d.undetermined) == ("mismatched-collectives", False)
    assert any("rank(s) 0 in ALLREDUCE; rank(s) 5 in BROADCAST" in e for e in d.evidence_for)
    assert d.headline == "the ranks time out in different collectives at sequence number 4832284"


def test_without_sequence_numbers_the_rank_in_another_collective_is_the_odd_one(engine):
    # huggingface/accelerate#157 (PyTorch 1.x prints no SeqNum): rank 5 all-reduces, every other rank broadcasts.
    lines = [f"[E ProcessGroupNCCL.cpp:566] [Rank {rank}] Watchdog caught collective operation timeout: "
             f"WorkNCCL(OpType={op}, Timeout(ms)=1800000) ran for 1801140 milliseconds before timing out."
             for rank, op in [(1, "BROADCAST"), (3, "BROADCAST"), (5, "ALLREDUCE"), (2, "BROADCAST")]]
    d = engine.analyze_text("\n".join(lines)).diagnoses[0]
    assert (d.id, d.initiator.rank, d.undetermined) == ("mismatched-collectives", 5, False)
    assert any("rank(s) 5 in ALLREDUCE; rank(s) 1-3 in BROADCAST" in e for e in d.evidence_for)
    assert d.headline == "rank 5 diverged: the other ranks agree on the collective"


def test_a_line_without_a_time_comes_before_the_timed_lines_after_it(engine):
    # facebookresearch/deit#102: srun names task 5's own exit first, then cancels the step (a timestamped line) and
    # lists the tasks it killed; the killed ones inherit the step's time, task 5's line has none.
    lines = ["srun: error: learnfair0824: task 5: Exited with exit code 1",
             "srun: launch/slurm: _step_signal: Terminating StepId=43575862.0",
             "slurmstepd: error: *** STEP 43575862.0 ON learnfair0824 CANCELLED AT 2021-07-14T08:00:36 ***",
             "srun: error: learnfair0824: tasks 3,7: Killed",
             "srun: error: learnfair0833: task 8: Killed"]
    d = engine.analyze_text("\n".join(lines)).diagnoses[0]
    assert (d.id, d.initiator.line, d.initiator.rank) == ("srun-task-exited", 1, 5)


def test_on_one_node_the_local_rank_is_the_rank(engine):
    # hpcaitech/ColossalAI#3172, torchrun --standalone: the agent names the killed worker by local rank only.
    line = ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 (pid: 2410412) of "
            "binary: /data/zjt/anaconda3/envs/cai/bin/python")
    d = engine.analyze_text(line).diagnoses[0]
    assert (d.id, d.initiator.rank) == ("host-oom-kill", 0)
    # A log whose lines name global ranks keeps them (8 ranks on 2 hosts, local ranks 0-3 on each).
    assert engine.analyze_paths([EXAMPLES / "oom-cascade" / "train.log"]).diagnoses[0].initiator.rank == 2


def test_a_worker_named_by_its_pid_takes_the_rank_its_nccl_lines_carry(engine):
    # TIGER-AI-Lab/Mantis#11: four ranks' NCCL lines give each pid its global rank; torchrun then reports the worker it
    # lost by local rank and pid only.
    paste = [
        "e7497f3c073c:6956:9753 [1] NCCL INFO comm 0x761d313cac20 rank 1 nranks 4 cudaDev 1 nvmlDev 1 busId 4000 "
        "commId 0x273b00670b73d30e - Init COMPLETE",
        "e7497f3c073c:6957:9752 [2] NCCL INFO comm 0x7ed4193cafe0 rank 2 nranks 4 cudaDev 2 nvmlDev 2 busId 5000 "
        "commId 0x273b00670b73d30e - Init COMPLETE",
        "E0715 08:53:42.146000 127238712194880 torch/distributed/elastic/multiprocessing/api.py:826] failed (exitcode: -9)"
        " local_rank: 2 (pid: 6957) of binary: /workspace/miniconda3/envs/Mantis/bin/python",
    ]
    d = engine.analyze_text("\n".join(paste)).diagnoses[0]
    assert (d.id, d.initiator.rank, d.initiator.host, d.initiator.pid) == ("host-oom-kill", 2, "e7497f3c073c", 6957)


def test_a_specific_failure_earlier_in_the_block_beats_the_generic_exception_that_wraps_it(engine):
    # Python prints a chain's first exception first; the generic catch-all matched the wrapper below it.
    # Lines: gloo's pair.cc connect error as PyTorch raised it (a public thread quoting pytorch 1.9), then the
    # chain separator CPython prints, then a plain exception line of the library's own python-exception examples.
    lines = ["RuntimeError: [/opt/conda/conda-bld/pytorch_1623448255797/work/third_party/gloo/gloo/transport/tcp/"
             "pair.cc:799] connect [192.168.0.222]:2226: Connection refused",
             "",
             "The above exception was the direct cause of the following exception:",
             "",
             "Traceback (most recent call last):",
             "KeyError: 'input_ids'"]
    assert engine.analyze_text("\n".join(lines)).diagnoses[0].id == "gloo-connect-timeout"
    # The other way round (the exception first, a collateral report after it) keeps the exception first.
    assert engine.analyze_text("\n".join(lines[::-1])).diagnoses[0].id == "python-exception-one-rank"


def test_a_specific_failure_further_down_the_same_exception_chain_beats_the_catch_all_above_it(engine):
    # nerfstudio-project/nerfstudio#2685, as pasted: the prebuilt module's ImportError, then (while handling it) the
    # JIT build of the same extension failing in ninja. The build is why the import had nothing to load.
    paste = [
        "Traceback (most recent call last):",
        '  File "/home/pablo/micromamba/envs/nerfstudio/lib/python3.10/site-packages/gsplat/cuda/_backend.py", line '
        "56, in <module>",
        "    from gsplat import csrc as _C",
        "ImportError: cannot import name 'csrc' from 'gsplat' (/home/pablo/micromamba/envs/nerfstudio/lib/python3.10/"
        "site-packages/gsplat/__init__.py)",
        "",
        "During handling of the above exception, another exception occurred:",
        "",
        "Traceback (most recent call last):",
        '  File "/home/pablo/micromamba/envs/nerfstudio/lib/python3.10/site-packages/torch/utils/cpp_extension.py", '
        "line 1893, in _run_ninja_build",
        "    subprocess.run(",
        '  File "/home/pablo/micromamba/envs/nerfstudio/lib/python3.10/subprocess.py", line 526, in run',
        "    raise CalledProcessError(retcode, process.args,",
        "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.",
    ]
    d = engine.analyze_text("\n".join(paste)).diagnoses[0]
    assert (d.id, d.initiator.line) == ("torch-extension-build-failed", 13)
    # Without the chain's marker the two tracebacks are two failures, and the first one stays first.
    apart = paste[:5] + paste[7:]
    assert engine.analyze_text("\n".join(apart)).diagnoses[0].id == "python-exception-one-rank"
    # Under PyTorch's rank prefix the chain holds; a marker another rank printed links nothing.
    ranked = [f"[rank0]: {line}" for line in paste]
    assert engine.analyze_text("\n".join(ranked)).diagnoses[0].id == "torch-extension-build-failed"
    ranked[5] = f"[rank1]: {paste[5]}"
    assert engine.analyze_text("\n".join(ranked)).diagnoses[0].id == "python-exception-one-rank"


def test_a_verdict_on_a_catch_all_line_alone_claims_less_than_one_on_a_signature(engine):
    # The lines of the test above: a plain exception says what failed, not why; gloo's connect error is a signature.
    from firstfault.correlator import GENERIC_CONFIDENCE

    generic = engine.analyze_text("Traceback (most recent call last):\nKeyError: 'input_ids'").diagnoses[0]
    assert generic.id == "python-exception-one-rank" and generic.confidence <= GENERIC_CONFIDENCE
    assert any("catch-all" in e for e in generic.evidence_against)
    specific = engine.analyze_text("RuntimeError: [/opt/conda/conda-bld/pytorch_1623448255797/work/third_party/gloo/"
                                   "gloo/transport/tcp/pair.cc:799] connect [192.168.0.222]:2226: Connection refused")
    top = specific.diagnoses[0]
    assert top.id == "gloo-connect-timeout" and top.confidence > GENERIC_CONFIDENCE
    assert not any("catch-all" in e for e in top.evidence_against)


def test_a_wrapper_whose_message_is_below_it_yields_to_the_specific_failure_in_that_message(engine):
    # jaywalnut310/vits#202, as pasted (Windows): mp.spawn's ProcessRaisedException prints its class alone, then the
    # child's traceback as its message; the child's last line says why.
    paste = [
        "    raise ProcessRaisedException(msg, error_index, failed_process.pid)",
        "torch.multiprocessing.spawn.ProcessRaisedException:",
        "",
        "-- Process 0 terminated with the following error:",
        "Traceback (most recent call last):",
        '  File "C:\\Users\\egora\\AppData\\Local\\Programs\\Python\\Python38\\lib\\site-packages\\torch\\multiprocessing'
        '\\spawn.py", line 74, in _wrap',
        "    fn(i, *args)",
        '    raise RuntimeError("Distributed package doesn\'t have NCCL built in")',
        "RuntimeError: Distributed package doesn't have NCCL built in",
    ]
    d = engine.analyze_text("\n".join(paste)).diagnoses[0]
    assert (d.id, d.initiator.line) == ("nccl-not-built", 9)


def test_an_exception_whose_message_is_a_whole_traceback_yields_to_the_failure_at_its_end(engine):
    # kubeflow/kubeflow#2522: an old DataLoader re-raises its worker's error with the formatted traceback as the
    # message; the worker's last line, 13 lines below, is the shared-memory failure.
    paste = [
        'RuntimeError: Traceback (most recent call last):',
        '  File "/opt/conda/lib/python3.6/site-packages/torch/utils/data/dataloader.py", line 138, in _worker_loop',
        '    samples = collate_fn([dataset[i] for i in batch_indices])',
        '  File "/opt/conda/lib/python3.6/site-packages/fastai/torch_core.py", line 117, in data_collate',
        '    return torch.utils.data.dataloader.default_collate(to_data(batch))',
        '  File "/opt/conda/lib/python3.6/site-packages/torch/utils/data/dataloader.py", line 232, in default_collate',
        '    return [default_collate(samples) for samples in transposed]',
        '  File "/opt/conda/lib/python3.6/site-packages/torch/utils/data/dataloader.py", line 232, in <listcomp>',
        '    return [default_collate(samples) for samples in transposed]',
        '  File "/opt/conda/lib/python3.6/site-packages/torch/utils/data/dataloader.py", line 207, in default_collate',
        '    storage = batch[0].storage()._new_shared(numel)',
        '  File "/opt/conda/lib/python3.6/site-packages/torch/storage.py", line 122, in _new_shared',
        '    return cls._new_using_fd(size)',
        'RuntimeError: unable to write to file </torch_1509_1969058146>',
    ]
    d = engine.analyze_text("\n".join(paste)).diagnoses[0]
    assert (d.id, d.initiator.line) == ("dev-shm-too-small", 14)
    # Cut before the frames, the wrapper is still a failure, read as a plain exception.
    assert engine.analyze_text(paste[0]).diagnoses[0].id == "python-exception-one-rank"


def test_a_specific_reading_that_needs_another_line_keeps_the_catch_all_reading_where_that_line_is_missing(engine):
    # pyg-team/pytorch_geometric#5340: CUDA's initialization error inside a DataLoader worker is a fork after the parent
    # initialized CUDA. Without the worker's line the same exception line is still a failure, read as a plain
    # exception, never "No failure found".
    lines = ["RuntimeError: Caught RuntimeError in DataLoader worker process 0.",
             "Original Traceback (most recent call last):",
             "RuntimeError: CUDA error: initialization error"]
    assert engine.analyze_text("\n".join(lines)).diagnoses[0].id == "cuda-fork-reinit"
    assert engine.analyze_text(lines[-1]).diagnoses[0].id == "python-exception-one-rank"
    # kubeflow/trainer#2008: "Connection reset by peer" under init_process_group is the rendezvous store going away;
    # the catch-all exception reading of the same line, kept beside it, does not outrank it.
    lines = ['  File "/opt/conda/lib/python3.6/site-packages/torch/distributed/distributed_c10d.py", line 360, in '
             'init_process_group',
             "    timeout=timeout)",
             "RuntimeError: Connection reset by peer"]
    assert engine.analyze_text("\n".join(lines)).diagnoses[0].id == "rendezvous-store-unreachable"


def test_a_crash_whose_backtrace_is_in_libnccl_is_the_nccl_crash_though_the_signal_line_comes_first(engine):
    # chainer/chainer#7586: Open MPI's signal handler reports the segfault, then its backtrace shows the frames in
    # libnccl. Both references are rank crashes; segfault-one-rank names the libnccl frame as evidence against itself.
    lines = ["*** Process received signal ***",
             "Signal: Segmentation fault (11)",
             "Signal code: Address not mapped (1)",
             "Failing at address: 0x7ff28802233f",
             "[ 0] /lib/x86_64-linux-gnu/libpthread.so.0(+0x11390)[0x7ff32df7d390]",
             "[ 1] /usr/lib/libibverbs/libmlx4-rdmav2.so(+0x1aee)[0x7ff320091aee]",
             "[ 2] /usr/lib/x86_64-linux-gnu/libnccl.so.2(+0x2b136)[0x7ff2bf5c3136]",
             "*** End of error message ***"]
    report = engine.analyze_text("\n".join(lines))
    assert [d.id for d in report.diagnoses[:2]] == ["nccl-library-segfault", "segfault-one-rank"]
    # Without the libnccl frame it is a plain segfault.
    assert engine.analyze_text("\n".join(lines[:6] + lines[7:])).diagnoses[0].id == "segfault-one-rank"


def test_when_every_rank_failed_alike_torchruns_first_observed_failure_is_where_to_start(engine):
    # open-mmlab/mmsegmentation#3106: every worker aborted (-6) in the same second; the summary's Root Cause entry
    # names rank 0. The verdict stays a shared cause, and its first failure is that entry.
    entry = ["  time      : 2023-06-14_22:36:10", "  host      : neptun.informatik.uni-kl.de"]
    lines = ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
             "========================================================", "tools/train.py FAILED",
             "--------------------------------------------------------", "Failures:"]
    for rank, pid in ((1, 2385923), (2, 2385924)):
        lines += [f"[{rank}]:", *entry, f"  rank      : {rank} (local_rank: {rank})",
                  f"  exitcode  : -6 (pid: {pid})", "  error_file: <N/A>",
                  f"  traceback : Signal 6 (SIGABRT) received by PID {pid}"]
    lines += ["--------------------------------------------------------", "Root Cause (first observed failure):",
              "[0]:", *entry, "  rank      : 0 (local_rank: 0)", "  exitcode  : -6 (pid: 2385922)",
              "  error_file: <N/A>", "  traceback : Signal 6 (SIGABRT) received by PID 2385922"]
    d = engine.analyze_text("\n".join(lines)).diagnoses[0]
    assert (d.id, d.initiator.rank, d.initiator.line) == ("torchelastic-child-failed", 0, 26)  # its exitcode line
    assert any("a cause they share" in e for e in d.evidence_for)
    assert any("the first worker torchrun saw exit" in e for e in d.evidence_for)


def test_a_sigkill_torchrun_sent_after_its_grace_period_is_its_teardown_not_the_oom_killer(engine):
    # vllm-project/speculators#1115: rank 3 exited 1; 31 s later torchrun's summary has rank 0 killed by SIGKILL
    # and rank 2 by SIGTERM: the agent's SIGTERM, then its SIGKILL 30 s on. Rank 3's exit is the failure.
    def entry(n, time, rank, exitcode, pid, traceback):
        return [f"[{n}]:", f"  time      : 2026-09-07_{time}", "  host      : localhost",
                f"  rank      : {rank} (local_rank: {rank})", f"  exitcode  : {exitcode} (pid: {pid})",
                "  error_file: <N/A>", f"  traceback : {traceback}"]
    lines = ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
             "============================================================",
             "/root/speculators/scripts/train.py FAILED",
             "------------------------------------------------------------", "Failures:",
             *entry(1, "13:02:58", 3, 1, 14692, "To enable traceback see: "
                                                "https://pytorch.org/docs/stable/elastic/errors.html"),
             *entry(2, "13:03:29", 0, -9, 14689, "Signal 9 (SIGKILL) received by PID 14689"),
             *entry(3, "13:03:29", 2, -15, 14691, "Signal 15 (SIGTERM) received by PID 14691")]
    d = engine.analyze_text("\n".join(lines)).diagnoses[0]
    assert (d.id, d.initiator.rank) == ("torchelastic-child-failed", 3)
    # The same SIGKILL with no earlier failure in the summary is still the OOM killer's.
    alone = lines[:5] + entry(1, "13:03:29", 0, -9, 14689, "Signal 9 (SIGKILL) received by PID 14689")
    assert engine.analyze_text("\n".join(alone)).diagnoses[0].id == "host-oom-kill"


# Dev cases of the real-log benchmark: a line that names the failure without its reason, and the reason beside it.
@pytest.mark.parametrize("lines, verdict", [
    # awslabs/ai-on-eks#240: torchrun's wrapper line, then c10d's own reason: the store's host name does not resolve.
    (["RendezvousConnectionError: The connection to the C10d store has failed.",
      "TCP client failed to connect/validate to host slinky-0:29400 - Name or service not known"],
     ("dns-resolution-failure", 2)),
    # rh-aiservices-bu/llm-on-openshift#57: vLLM's "might not exist, be corrupted or ..." and the loader's answer.
    (["ERROR 04-23 19:30:01 pynccl.py:53] Failed to load NCCL library from libnccl.so.2 .It is expected if you are not "
      "running on NVIDIA/AMD GPUs.Otherwise please set the environment variable VLLM_NCCL_SO_PATH to point to the "
      "correct nccl library path.",
      "INFO 04-23 19:30:01 pynccl_utils.py:17] Failed to import NCCL library: libnccl.so.2: cannot open shared object "
      "file: No such file or directory"],
     ("cuda-library-not-found", 2)),
    # open-mpi/ompi#3778 (the PR that added it): Open MPI's help text on why a direct srun launch cannot work, then
    # MPI_Init's fatal banner.
    (["--------------------------------------------------------------------------",
      "The application appears to have been direct launched using \"srun\",",
      "but OMPI was not built with SLURM's PMI support and therefore cannot",
      "execute. There are several options for building PMI support under",
      "SLURM, depending upon the SLURM version you are using:",
      "",
      "  version 16.05 or later: you can use SLURM's PMIx support. This",
      "  requires that you configure and build SLURM --with-pmix.",
      "",
      "  Versions earlier than 16.05: you must use either SLURM's PMI-1 or",
      "  PMI-2 support. SLURM builds PMI-1 by default, or you can manually",
      "  install PMI-2. You must then build Open MPI using --with-pmi pointing",
      "  to the SLURM PMI library location.",
      "",
      "Please configure as appropriate and try again.",
      "--------------------------------------------------------------------------",
      "*** An error occurred in MPI_Init",
      "*** on a NULL communicator",
      "*** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,"],
     ("mpi-direct-launch-without-pmi", 3)),
], ids=["store-host-unresolved", "nccl-library-missing", "mpi-init-after-its-reason"])
def test_a_failure_named_without_its_reason_yields_to_the_reason_beside_it(engine, lines, verdict):
    d = engine.analyze_text("\n".join(lines)).diagnoses[0]
    assert (d.id, d.initiator.line) == verdict


def test_a_line_that_names_no_rank_takes_it_from_the_same_block(engine):
    # brain-score/vision#950: Slurm's cgroup OOM line names no rank; srun's next line names task (rank) 0.
    lines = ["slurmstepd: error: Detected 1 oom-kill event(s) in StepId=37205392.0. Some of your processes may have "
             "been killed by the cgroup out-of-memory handler.",
             "srun: error: node107: task 0: Out Of Memory"]
    d = engine.analyze_text("\n".join(lines)).diagnoses[0]
    assert (d.id, d.initiator.line, d.initiator.rank) == ("host-oom-kill", 1, 0)
    assert any("line 2 of the same block names rank 0" in e for e in d.evidence_for)


def test_ray_trains_report_of_the_failed_worker_names_the_rank_the_raylet_line_does_not(engine):
    # ray-project/ray#47461: the raylet reports a worker that died; TorchTrainer names it as worker (world rank) 0.
    lines = ['(raylet) A worker died or was killed while executing a task by an unexpected system error. To troubleshoot the problem, check the logs for the dead worker. RayTask ID: ffffffffffffffff3fe85624f7ebc8f28d076a0702000000 Worker ID: fead2dfe78eeee17dd8922f0569f798cf51660782f4222a9acfc8fbe Node ID: 201f2cc4bc593d830338a3ed774649489389d8695222912df0994e79 Worker IP address: 10.0.7.57 Worker port: 10046 Worker PID: 89513 Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of file. There are some potential root causes. (1) The process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop --force is called. (3) The worker is crashed unexpectedly due to SIGSEGV or other unexpected errors.',
             '(TorchTrainer pid=89392) Worker 0 has failed.                                                                                                 ']
    d = engine.analyze_text("\n".join(lines)).diagnoses[0]
    assert (d.id, d.initiator.line, d.initiator.rank) == ("ray-actor-died", 1, 0)


# A first-failure line that names no rank, and the lines of its block that do (all real, as pasted).
# modelscope/ms-swift#8378: a device-side assert glued to a tqdm bar; the traceback below it, which no reference
# explains on its own, is rank 5's.
ASSERT_THEN_TRACEBACK = [
    "Train:   7%|▋         | 82/1218 [18:06:05<227:39:40, 721.46s/it]/pytorch/aten/src/ATen/native/cuda/"
    "TensorCompare.cu:112: _assert_async_cuda_kernel: block: [0,0,0], thread: [0,0,0] Assertion `probability "
    "tensor contains either `inf`, `nan` or element < 0` failed.",
    "[rank5]: Traceback (most recent call last):",
    '[rank5]:   File "/home/cvfa-multimodal-reasoning/zhougaojing/env/ms-swift_official_3/swift/cli/rlhf.py", '
    "line 7, in <module>",
    "[rank5]:     rlhf_main()",
]
# openucx/ucx#9383: Open MPI's banner names no rank, its "reported by process [J,R]" line names rank 0; srun's
# teardown below names tasks 0 and 1.
MPI_BANNER_THEN_SRUN = [
    "[histamine0:1224050] pml_ucx.c:477  Error: Failed to resolve UCX endpoint for rank 1",
    "[histamine0:1224050] *** An error occurred in MPI_Bcast",
    "[histamine0:1224050] *** reported by process [2135184123,0]",
    "[histamine0:1224050] *** on communicator MPI_COMM_WORLD",
    "[histamine0:1224050] *** MPI_ERR_OTHER: known error not in list",
    "srun: error: histamine0: task 0: Exited with exit code 16",
    "srun: error: histamine1: task 1: Killed",
]
# lattice/quda#693 (a dev case of the real-log benchmark): a C++ terminate that names no rank, then srun's report of
# every task: task 0 aborted, the others it killed while aborting the step.
TERMINATE_THEN_SRUN_TEARDOWN = [
    "terminate called after throwing an instance of 'thrust::system::system_error'",
    "  what():  cudaEventSynchronize in future::wait: an illegal memory access was encountered",
    "srun: error: nid03679: task 0: Aborted",
    "srun: Terminating job step 7355455.0",
    "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
    "srun: error: nid05031: task 42: Killed",
    "srun: error: nid06267: task 61: Killed",
]
# NVIDIA/nccl-tests#165: nccl-tests names no rank; mpirun names process [[25735,1],1].
NCCL_TESTS_THEN_MPIRUN = [
    "majidnc24MPTXTH: Test CUDA failure common.cu:892 'invalid device ordinal'",
    " .. majidnc24MPTXTH pid 9972: Test failure common.cu:842",
    "--------------------------------------------------------------------------",
    "Primary job  terminated normally, but 1 process returned",
    "a non-zero exit code. Per user-direction, the job has been aborted.",
    "--------------------------------------------------------------------------",
    "--------------------------------------------------------------------------",
    "mpirun detected that one or more processes exited with non-zero status, thus causing",
    "the job to be terminated. The first process to do so was:",
    "",
    "  Process name: [[25735,1],1]",
    "  Exit code:    2",
    "--------------------------------------------------------------------------",
]


# deepspeedai/DeepSpeed#3869: DeepSpeed's launcher logs the command of the last worker it started; "--local_rank=0"
# there means it started only one, so the OOM above is local rank 0's (one node: rank 0). With "--local_rank=1" the
# failed worker may be either of two (liucongg/ChatGLM-Finetuning#67).
DEEPSPEED_ONE_WORKER = [
    "> torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 978.00 MiB (GPU 0; 4.00 GiB total capacity; "
    "1.68 GiB already allocated; 0 bytes free; 2.72 GiB reserved in total by PyTorch) If reserved memory is >> "
    "allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management "
    "and PYTORCH_CUDA_ALLOC_CONF",
    "> [2023-07-04 17:31:27,755] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 953850",
    "> [2023-07-04 17:31:27,755] [ERROR] [launch.py:321:sigkill_handler] ['/home/pc/miniconda3/envs/Transformers/bin/"
    "python3.11', '-u', 'bloom-inference-scripts/bloom-ds-zero-inference.py', '--local_rank=0', '--name', "
    "'bigscience/mt0-xl', '--batch_size', '8', '--cpu_offload', '--benchmark'] exits with return code = 1",
]
# NVIDIA/cuQuantum#77 (a dev case of the real-log benchmark): a rank's exception, then HPE Cray PALS' mpiexec reporting
# that rank's exit below it: the report lends the rank and is not the exception's message.
EXCEPTION_THEN_PALS = [
    "cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorInvalidResourceHandle: invalid resource handle",
    "x3005c0s37b0n0.hsn.cm.polaris.alcf.anl.gov: rank 1 exited with code 1",
]

# sgl-project/sglang#15235 (a dev case): SGLang's launcher names the scheduler that died, then its exit status; and
# ai-dynamo/dynamo#5048, Dynamo's worker printing both on one line.
SGLANG_SCHEDULER_DEAD = [
    "[12-16 14:27:08] Rank 0 scheduler is dead. Please check if there are relevant logs.",
    "[12-16 14:27:10] Exit code: -9",
]
DYNAMO_SCHEDULER_DEAD = ["Error: Rank 0 scheduler is dead. Exit code: -6 (SIGABRT)"]


@pytest.mark.parametrize("paste, verdict", [
    (DEEPSPEED_ONE_WORKER, ("cuda-oom", 1, 0)),
    ([*DEEPSPEED_ONE_WORKER[:2], DEEPSPEED_ONE_WORKER[2].replace("--local_rank=0", "--local_rank=1")],
     ("cuda-oom", 1, None)),
    (ASSERT_THEN_TRACEBACK, ("illegal-memory-access", 1, 5)),
    # Two ranks' lines nearby name no single rank: none is lent.
    (ASSERT_THEN_TRACEBACK + ["[rank2]: Traceback (most recent call last):"], ("illegal-memory-access", 1, None)),
    # The rank the failing process names under its own "[host:pid]" wins over a launcher's teardown that names others.
    (MPI_BANNER_THEN_SRUN, ("mpi-ucx-peer-unreachable", 1, 0)),
    # The task that ended on its own, not one srun killed while aborting the step; with only killed tasks, none.
    (TERMINATE_THEN_SRUN_TEARDOWN, ("illegal-memory-access", 2, 0)),
    ([line for line in TERMINATE_THEN_SRUN_TEARDOWN if "task 0" not in line], ("illegal-memory-access", 2, None)),
    (NCCL_TESTS_THEN_MPIRUN, ("invalid-device-ordinal", 1, 1)),
    (EXCEPTION_THEN_PALS, ("python-exception-one-rank", 1, 1)),
    (SGLANG_SCHEDULER_DEAD, ("host-oom-kill", 2, 0)),
    (DYNAMO_SCHEDULER_DEAD, ("unrecognised-failure", 1, 0)),
], ids=["deepspeed-one-worker", "deepspeed-last-of-two", "unexplained-traceback", "two-ranks-nearby",
        "own-block-before-teardown", "task-that-ended-before-srun-teardown", "only-torn-down-tasks",
        "launcher-names-process", "launcher-report-below", "launcher-names-dead-scheduler",
        "dead-scheduler-and-status-on-one-line"])
def test_a_first_failure_that_names_no_rank_takes_it_from_its_block(engine, paste, verdict):
    d = engine.analyze_text("\n".join(paste)).diagnoses[0]
    assert (d.id, d.initiator.line, d.initiator.rank) == verdict


def test_a_mismatch_report_naming_a_rank_past_the_lowest_names_the_odd_rank(engine):
    # modelscope/ms-swift#9443: rank 1 against rank 0, either could be the odd one.
    first = ("[rank1]: RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: "
             "CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE, TensorShape=[195812480], TensorDtypes=BFloat16)"
             ", but Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE, "
             "TensorShape=[51123456], TensorDtypes=BFloat16).")
    d = engine.analyze_text(first).diagnoses[0]
    assert d.id == "mismatched-collectives" and not any("names rank" in e for e in d.evidence_for)
    # A public write-up quoting a DETAIL run (cut where it was quoted): rank 0 compared rank 1, then named rank 2.
    named = ("RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running collective: "
             "CollectiveFingerPrint(OpType=ALLGATHER, TensorShape=[4], TensorDtypes=Float, TensorDeviceTypes="
             "TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_gr ad=false (default), "
             "pinned_memory=false (default), memory_format=(nullopt))), but Rank 2 is running collective: "
             "CollectiveFingerPrint(OpTyp")
    d = engine.analyze_text(named).diagnoses[0]
    assert (d.id, d.initiator.rank) == ("mismatched-collectives", 2)


def test_last_seen_finds_a_ranks_last_prefixed_line_in_an_interleaved_log():
    from firstfault.context import Source
    from firstfault.inputs import text_input
    from firstfault.lastline import last_seen

    text = (REALRUN / "rank-raises.log").read_text()
    lines = text.splitlines()
    want = max(i for i, line in enumerate(lines) if line.startswith("[rank3]:")) + 1
    item = text_input(text, "rank-raises.log")
    seen = last_seen(3, [(item.chunks, item.size)], [Source()])
    assert (seen.input_index, seen.line, seen.text) == (0, want, lines[want - 1])
    assert last_seen(9, [(item.chunks, item.size)], [Source()]) is None


def test_a_rank_below_the_highest_that_never_reports_is_the_silent_one(engine):
    # InternLM/xtuner#768, as pasted: ranks 1-3 time out in the first collective while rank 0 (mapping the
    # dataset for hours) prints nothing; the log names no world size.
    paste = [
        "06/14 09:11:55 - mmengine - INFO - xtuner_dataset_timeout = 2:00:00",
        "[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, "
        "OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800584 milliseconds before timing out.",
        "[E ProcessGroupNCCL.cpp:475] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, "
        "OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800605 milliseconds before timing out.",
        "[E ProcessGroupNCCL.cpp:475] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, "
        "OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800608 milliseconds before timing out.",
    ]
    d = engine.analyze_text("\n".join(paste)).diagnoses[0]
    assert (d.id, d.initiator.rank, d.undetermined) == ("collective-timeout", 0, False)
    assert d.headline.startswith("rank 0 stopped responding")
    # Two ranks reporting are too few to tell a silent rank from a gap in the paste.
    two = engine.analyze_text("\n".join(paste[:1] + paste[2:])).diagnoses[0]
    assert two.undetermined and two.initiator is None


def test_srun_lists_only_the_tasks_that_died_so_the_first_is_named_not_a_shared_cause(engine):
    # vwxyzjn/cleanba#5, as pasted: srun prints a line per task that ended, earliest first.
    paste = ["srun: error: ip-26-0-141-178: task 15: Segmentation fault",
             "srun: error: ip-26-0-141-217: task 16: Segmentation fault",
             "srun: error: ip-26-0-141-217: task 17: Segmentation fault"]
    d = engine.analyze_text("\n".join(paste)).diagnoses[0]
    assert (d.id, d.initiator.rank, d.initiator.line) == ("srun-task-exited", 15, 1)
    assert not any("a cause they share" in e for e in d.evidence_for)


# desihub/desispec#2744, as pasted: Slurm cancels the step for a task failure and srun reports every task it had to
# stop; the one task it did not stop had already ended.
SPARED_TASK = ["[2026-04-29T23:36:37.809] error: *** STEP 52222788.0 ON nid002888 CANCELLED AT 2026-04-29T23:36:37 "
               "DUE TO TASK FAILURE ***",
               "srun: error: nid002888: tasks 0-57,59-63: Terminated",
               "srun: Force Terminated StepId=52222788.0"]


def test_the_one_task_srun_did_not_have_to_terminate_is_the_one_that_failed(engine):
    d = engine.analyze_text("\n".join(SPARED_TASK)).diagnoses[0]
    assert (d.id, d.initiator.rank, d.initiator.line) == ("srun-task-exited", 58, 2)
    assert any("task 58 is the only one missing" in e for e in d.evidence_for)


@pytest.mark.parametrize("tasks, spared", [
    ("0-57,59-63", 58), ("[0-57,59-63]", 58), ("8-11,13-15", 12), ("59-63,0-57", 58),
    ("0-63", None),        # nothing left out
    ("0-3,6-7", None),     # two left out: either may have failed
    ("0-3,5-7,9", None),   # two gaps
    ("0,2", None),         # no range: a cyclic layout leaves gaps on every node
    ("0-3,3-5", None),     # overlapping: not srun's list
    ("0-99999999999,2", None),
])
def test_only_a_single_task_left_out_of_a_ranged_list_is_named(engine, tasks, spared):
    lines = [SPARED_TASK[0], f"srun: error: nid002888: tasks {tasks}: Terminated"]
    d = engine.analyze_text("\n".join(lines)).diagnoses[0]
    assert d.initiator.rank == spared


def test_two_srun_lists_that_each_leave_a_task_out_name_no_one_rank(engine):
    # The same format on two nodes: two tasks had ended before the step was stopped, and nothing orders them.
    lines = [SPARED_TASK[0], "srun: error: nid002888: tasks 0-3,5-7: Terminated",
             "srun: error: nid002889: tasks 8-10,12-15: Terminated"]
    d = engine.analyze_text("\n".join(lines)).diagnoses[0]
    assert d.initiator.rank is None
    assert any("4, 11" in e for e in d.evidence_for)


def test_a_network_fallback_on_one_host_is_no_failure(engine):
    # aws/deep-learning-containers#2675: one g5.12xlarge without EFA, 4 local ranks bootstrapping over loopback; the
    # aws-ofi-nccl plugin fails to initialise and NCCL uses sockets, which a single-node job never needs.
    lines = ["16d2d618f560:123:890 [0] ofi_init:1355 NCCL WARN NET/OFI aws-ofi-nccl initialization failed",
             "16d2d618f560:123:890 [0] NCCL INFO NET/IB : No device found.",
             "16d2d618f560:123:890 [0] NCCL INFO Using network Socket",
             "16d2d618f560:125:125 [2] NCCL INFO Bootstrap : Using lo:127.0.0.1<0>"]
    assert engine.analyze_text("\n".join(lines)).diagnoses == ()
    # Without the loopback bootstrap (a multi-node job) the same fallback is the failure.
    assert [d.id for d in engine.analyze_text("\n".join(lines[:3])).diagnoses][:1] == ["efa-ofi-init-failed"]


def test_one_collective_of_another_size_at_one_sequence_number_is_the_odd_one(engine):
    # PKU-YuanGroup/MoE-LLaVA#20 (ZeRO-3, MoE): every rank times out in _ALLGATHER_BASE at SeqNum 202558, rank 0 with
    # a different size: it gathers another parameter, a different call.
    lines = [f"[E ProcessGroupNCCL.cpp:467] [Rank {rank}] Watchdog caught collective operation timeout: "
             f"WorkNCCL(SeqNum=202558, OpType=_ALLGATHER_BASE, NumelIn={numel}, NumelOut={out}, Timeout(ms)=1800000) "
             f"ran for {ran} milliseconds before timing out."
             for rank, numel, out, ran in [(6, 2359296, 18874368, 1800376), (1, 2359296, 18874368, 1800392),
                                           (2, 2359296, 18874368, 1800436), (0, 75264, 602112, 1800709)]]
    d = engine.analyze_text("\n".join(lines)).diagnoses[0]
    assert (d.id, d.initiator.rank, d.undetermined) == ("mismatched-collectives", 0, False)
    assert any("rank(s) 0 in _ALLGATHER_BASE of 75264 elements" in e for e in d.evidence_for)


def test_a_collective_name_cut_by_the_terminal_is_the_same_collective(engine):
    # modelscope/ms-swift#5409, pasted from a terminal that wrapped at 168 columns and wrote its scroll marker over
    # rank 2's OpType: rank 2's "_ALLGATHER_BA[451/1919]" (its size wrapped to the next line) names no collective, so
    # nothing says the two ranks are in different ones.
    lines = ["[rank2]:[E816 00:34:01.133910474 ProcessGroupNCCL.cpp:629] [Rank 2] Watchdog caught collective operation "
             "timeout: WorkNCCL(SeqNum=137429, OpType=_ALLGATHER_BA[451/1919]",
             "n=71552, NumelOut=572416, Timeout(ms)=600000) ran for 600004 milliseconds before timing out.",
             "[rank0]:[E816 00:34:01.151101643 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught collective operation "
             "timeout: WorkNCCL(SeqNum=137429, OpType=_ALLGATHER_BASE, NumelI",
             "n=71552, NumelOut=572416, Timeout(ms)=600000) ran for 600021 milliseconds before timing out."]
    assert [d.id for d in engine.analyze_text("\n".join(lines)).diagnoses][:1] == ["collective-timeout"]
    # Whole names that differ are still two collectives.
    other = [lines[0].replace("_ALLGATHER_BA[451/1919]", "BROADCAST, NumelIn=1"), lines[2]]
    assert engine.analyze_text("\n".join(other)).diagnoses[0].id == "mismatched-collectives"


def test_the_one_rank_a_horovod_stall_warning_leaves_out_is_the_one_the_others_wait_for(engine):
    # horovod/horovod#215 (32 ranks): Horovod 0.9-0.13 listed the ranks that had submitted each stalled tensor; rank 16
    # is the only one below the highest that is not there.
    # (the paste cut before "Stalled ops:", as pastes are)
    line = ("Stalled ops: training/SGD/DistributedSGD_Allreduce/HorovodAllreduce_training_SGD_gradients_conv1_1_B"
            "iasAdd_grad_BiasAddGrad_0 [ready ranks: 21, 25, 26, 27, 28, 29, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 1"
            ", 3, 0, 15, 17, 18, 20, 22, 23, 24, 31, 8, 19, 2, 30], training/SGD/DistributedSGD_Allreduce/Horovod"
            "Allreduce_training_SGD_gradients_AddN_335_0 [ready ranks: 21, 25, 26, 27, 28, 29, 4, 5, 6, 7, 9, 10,"
            " 11, 12, 13, 14, 1, 3, 0, 15, 17, 18, 20, 22, 23, 24, 31, 8, 19, 2, 30]")
    d = engine.analyze_text(line).diagnoses[0]
    assert (d.id, d.initiator.rank, d.undetermined) == ("horovod-stall-missing-ranks", 16, False)
    # horovod/horovod#334 (8 ranks, 0 and 6 missing): two gaps single out no rank
    two_gaps = ("WARNING: One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks "
                "and are waiting for remainder of ranks for more than 60 seconds. This may indicate that different "
                "ranks are trying to submit different tensors or that only subset of ranks is submitting tensors, "
                "which will cause deadlock. Stalled ops: allreduce.conv1.weight [ready ranks: 5, 1, 4, 7, 2, 3], "
                "allreduce.bn1.weight [ready ranks: 5, 1, 4, 7, 2, 3], allreduce.bn1.bias [ready ranks: 5, 1, 4, 7, "
                "2, 3],")
    assert engine.analyze_text(two_gaps).diagnoses[0].initiator is None


def test_a_stall_warning_names_the_rank_its_list_leaves_out_even_when_the_list_is_short(engine):
    # horovod/horovod#100 (two ranks, Horovod 0.9), as pasted: the warning, then one stalled tensor a line, each ready
    # on rank 1 only. The stall is the verdict and rank 0, the one every tensor waits for, is where it started.
    paste = [
        "This may indicate that different ranks are trying to submit different tensors or that only subset of ranks "
        "is submitting tensors, which will cause deadlock.",
        "",
        "Stalled ops: ",
        "model/model/DistributedAdamOptimizer_Allreduce/HorovodAllgather_model_model_gradients_concat_0 "
        "[ready ranks: 1], ",
        "model/model/DistributedAdamOptimizer_Allreduce/HorovodAllgather_model_model_gradients_concat_1_0 "
        "[ready ranks: 1], ",
    ]
    d = engine.analyze_text("\n".join(paste)).diagnoses[0]
    assert (d.id, d.initiator.rank, d.undetermined) == ("horovod-stall-missing-ranks", 0, False)
    assert d.headline.startswith("rank 0 never joined")


def test_a_stall_list_after_rank_0s_warning_names_the_rank_that_started_it(engine):
    # horovod/horovod#1666 (mpirun --tag-output): rank 0's coordinator warns, then lists rank 2 as the one that never
    # submitted the broadcasts. Rank 0 only reports the wait; the first failure is rank 2, at the line naming it.
    paste = [
        "[1,0]<stderr>:[2020-01-14 13:48:07.704032: W horovod/common/stall_inspector.cc:105] One or more tensors were "
        "submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks "
        "for more than 60 seconds. This may indicate that different ranks are trying to submit different tensors or "
        "that only subset of ranks is submitting tensors, which will cause deadlock. ",
        "[1,0]<stderr>:Stalled ranks:",
        "[1,0]<stderr>:2: [HorovodBroadcast_Variable_0, HorovodBroadcast_Variable_1_0, HorovodBroadcast_Variable_2_0]",
    ]
    d = engine.analyze_text("\n".join(paste)).diagnoses[0]
    assert (d.id, d.initiator.rank, d.initiator.line) == ("horovod-stall-missing-ranks", 2, 3)


def test_mpiruns_first_process_block_keeps_its_header_and_is_not_its_own_collateral(engine):
    # NVIDIA/nccl-tests#294: Open MPI names the first process to exit a few lines below its header. The header is where
    # the failure starts, the rank comes from the process name, and the block is one report, not a failure and its
    # collateral.
    paste = [
        "--------------------------------------------------------------------------",
        "mpirun detected that one or more processes exited with non-zero status, thus causing",
        "the job to be terminated. The first process to do so was:",
        "",
        "  Process name: [[12167,1],10]",
        "  Exit code:    3",
    ]
    d = engine.analyze_text("\n".join(paste)).diagnoses[0]
    assert (d.id, d.initiator.rank, d.initiator.line) == ("mpirun-rank-signal", 10, 2)
    # The rank is the block's own statement, not one lent from a nearby line, and the naming line is not collateral.
    assert "line 5 names rank 10: Process name: [[12167,1],10]" in d.evidence_for
    assert not d.collateral


# Lightning's rank announcements (https://github.com/Lightning-AI/pytorch-lightning/issues/4389): once per process.
ANNOUNCED = ["initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/8", "initializing ddp: GLOBAL_RANK: 1, MEMBER: 2/8",
             "initializing ddp: GLOBAL_RANK: 2, MEMBER: 3/8", "initializing ddp: GLOBAL_RANK: 3, MEMBER: 4/8"]


@pytest.mark.parametrize("lines, verdict", [
    (ANNOUNCED, None),  # one node's four ranks, each once: a healthy start
    (ANNOUNCED + [line.replace(" 0,", " 4,").replace(" 1/8", " 5/8") for line in ANNOUNCED[:1]], None),
    (ANNOUNCED + ANNOUNCED, "duplicate-global-rank"),  # both nodes claim ranks 0-3
    (ANNOUNCED + ANNOUNCED[1:2], "duplicate-global-rank"),
], ids=["each-once", "distinct-ranks", "two-nodes-alike", "one-rank-twice"])
def test_a_rank_announced_twice_is_a_duplicate_rank(engine, lines, verdict):
    diagnoses = engine.analyze_text("\n".join(lines)).diagnoses
    assert (diagnoses[0].id if diagnoses else None) == verdict


# Slurm's cgroup peak, printed by jobs that finish too (galaxyproject/galaxy#2309), and bash's line for a killed step
# (ArjunaCluster/ArjunaUsers#52).
SLURM_PEAK = "slurmstepd: error: Exceeded step memory limit at some point. Step may have been partially swapped out to disk."
BASH_KILLED = ("/var/spool/slurmd/job00191/slurm_script: line 28:  8156 Killed                  python3 main.py "
               "--prop hform --epochs 400")


@pytest.mark.parametrize("lines, verdict", [
    ([SLURM_PEAK], None),  # alone: no failure, not even a possible one (standalone = false)
    ([SLURM_PEAK, BASH_KILLED], "host-oom-kill"),
], ids=["alone", "beside-a-kill"])
def test_a_line_that_cannot_stand_alone_is_context_until_what_it_needs_shows(engine, lines, verdict):
    diagnoses = engine.analyze_text("\n".join(lines)).diagnoses
    assert (diagnoses[0].id if diagnoses else None) == verdict


# vLLM's shm-broadcast wait (vllm-project/vllm#44185, two data-parallel engine cores): printed once during a slow
# start-up it is a question; printed on to the end of an excerpt it is a hang.
SHM_WAIT = [f"(EngineCore_DP{dp} pid={pid}) INFO 05-28 {time} [shm_broadcast.py:681] No available shared memory "
            "broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing "
            "some time-consuming work (e.g. compilation, weight/kv cache quantization)."
            for dp, pid, time in [(1, 1455, "14:44:28"), (0, 1454, "14:45:27"), (1, 1455, "14:45:28")]]


@pytest.mark.parametrize("lines, verdict", [
    (SHM_WAIT[:1], None),
    (SHM_WAIT, "vllm-shm-broadcast-hang"),
], ids=["once", "on-and-on"])
def test_a_warning_that_must_repeat_to_stand_alone(engine, lines, verdict):
    diagnoses = engine.analyze_text("\n".join(lines)).diagnoses
    assert (diagnoses[0].id if diagnoses else None) == verdict
    if verdict:
        assert diagnoses[0].possible and "3 times" in diagnoses[0].evidence_for[0]


# NCCL's Init START lines of vLLM's data-parallel ranks (vllm-project/vllm#18567, as pasted): all on busId 6000.
INIT_START = [f"h14-01:{pid}:{pid} [0] NCCL INFO ncclCommInitRank comm {comm} rank {rank} nranks 4 cudaDev 0 nvmlDev 0 "
              f"busId 6000 commId 0xf6ea94b67ac8f09d - Init START"
              for pid, comm, rank in [(2025026, "0x55fcba0c5700", 0), (2025028, "0x55d6abfb2820", 2)]]


@pytest.mark.parametrize("lines, verdict", [
    (INIT_START, "duplicate-gpu"),  # two ranks of one communicator on one GPU of one host
    (INIT_START[:1], None),
    ([INIT_START[0], INIT_START[1].replace("busId 6000", "busId 7000")], None),  # two GPUs
    ([INIT_START[0], INIT_START[1].replace("h14-01", "h14-02")], None),  # the same bus id on another host
    ([INIT_START[0], INIT_START[1].replace("commId 0xf6ea94b67ac8f09d", "commId 0x1a2b")], None),  # two jobs
], ids=["one-gpu", "one-line", "two-gpus", "two-hosts", "two-communicators"])
def test_two_ranks_of_one_communicator_on_one_gpu_are_a_duplicate_gpu(engine, lines, verdict):
    diagnoses = engine.analyze_text("\n".join(lines)).diagnoses
    assert (diagnoses[0].id if diagnoses else None) == verdict


# ultralytics/yolov5#820: the command line pasted above the output places this node: one process on node 1 is rank 1.
LAUNCH_NODE_1 = [
    "python -m torch.distributed.launch --nproc_per_node 1 --nnodes 2 --node_rank 1 --master_addr \"10.188"
    ".192.11\" --master_port 12394 train.py --batch 16 --data coco128.yaml --epochs 300 --weights yolov5s."
    "pt --device 0",
    "RuntimeError: CUDA error: invalid device ordinal",
]


@pytest.mark.parametrize("lines, rank", [
    (LAUNCH_NODE_1, 1),
    ([LAUNCH_NODE_1[0].replace("--nproc_per_node 1", "--nproc_per_node 2"), LAUNCH_NODE_1[1]], None),  # which of two
    ([LAUNCH_NODE_1[0].replace("--node_rank 1", "--node_rank 0"), LAUNCH_NODE_1[1]], 0),
    (LAUNCH_NODE_1[1:], None),
    # another node's command, quoted by ColossalAI's launcher, places nothing here (hpcaitech/ColossalAI#5213)
    (["Error: failed to run torchrun --nproc_per_node=2 --nnodes=2 --node_rank=1 --master_addr=192.168.1.11 "
      "--master_port=29508 pretrain.py on 192.168.1.12, is localhost: False, exception: not a valid RSA private key "
      "file", LAUNCH_NODE_1[1]], None),
], ids=["node-1", "two-per-node", "node-0", "no-command", "another-nodes-command"])
def test_a_launch_command_in_the_paste_places_its_node(engine, lines, rank):
    d = engine.analyze_text("\n".join(lines)).diagnoses[0]
    assert (d.id, d.initiator.rank) == ("invalid-device-ordinal", rank)


def test_a_rank_that_lost_its_peer_and_names_it_names_the_first_failure(engine):
    # InternLM/xtuner#692: rank 2 reached the monitored barrier, lost its connection to rank 0, and names rank 0.
    lines = ["[rank2]: RuntimeError: Rank 2 successfully reached monitoredBarrier, but received errors while waiting "
             "for send/recv from rank 0. Please check rank 0 logs for faulty rank.",
             "[rank2]:  Original exception: ",
             "[rank2]: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [172.17.0.2]:23260"]
    d = engine.analyze_text("\n".join(lines)).diagnoses[0]
    assert (d.id, d.initiator.rank, d.undetermined) == ("peer-connection-lost", 0, False)
    assert d.headline.startswith("rank 0 left or failed")
    # Without the line that names it, the peer is not in the log.
    d = engine.analyze_text("\n".join(lines[2:])).diagnoses[0]
    assert (d.initiator, d.undetermined) == (None, True)


def test_in_a_world_of_one_the_failure_is_rank_0s(engine):
    # EasonXiao-888/MambaTree#14: the script announces a world of one, so the only process is rank 0.
    lines = ["RANK and WORLD_SIZE in environ: 0/1",
             "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1201, internal error, "
             "NCCL version 2.14.3",
             "ncclInternalError: Internal check failed.",
             "Last error:",
             "Bootstrap : no socket interface found"]
    d = engine.analyze_text("\n".join(lines)).diagnoses[0]
    assert (d.id, d.initiator.rank) == ("wrong-socket-ifname", 0)
    # Without the announcement nothing says which rank this process was.
    assert engine.analyze_text("\n".join(lines[1:])).diagnoses[0].initiator.rank is None


@pytest.mark.parametrize("command", [
    "[manuel@nhri mpi]$ ~/openMPI/bin/mpirun -np 1 mpi_test ",  # NVIDIA/nccl#20, as pasted
    "$ mpirun -np 1 ./sendrecv.exe",  # pmodels/mpich#4832
])
def test_mpirun_with_one_process_is_a_world_of_one(engine, command):
    # NVIDIA/nccl#20: Open MPI's report of a segmentation fault under the command that started one process.
    report = ["[nhri:08445] *** Process received signal ***",
              "[nhri:08445] Signal: Segmentation fault (11)",
              "[nhri:08445] Signal code: Address not mapped (1)",
              "[nhri:08445] Failing at address: (nil)",
              "[nhri:08445] *** End of error message ***"]
    d = engine.analyze_text("\n".join([command, *report])).diagnoses[0]
    assert (d.id, d.initiator.rank) == ("segfault-one-rank", 0)
    # Without the command nothing says how many processes there were.
    assert engine.analyze_text("\n".join(report)).diagnoses[0].initiator.rank is None
    # Two processes (openucx/ucx#8469's command): either could be the one that crashed.
    two = ("$ mpirun -np 2 --npernode 2 --mca btl ^openib,smcuda --mca pml ucx --mca pml_ucx_devices any "
           "--mca pml_ucx_tls any -x LD_LIBRARY_PATH $PWD/a.out")
    assert engine.analyze_text("\n".join([two, *report])).diagnoses[0].initiator.rank is None


def test_torchrun_with_one_process_on_one_node_is_a_world_of_one(engine):
    # meta-llama/llama#436: the command, then the traceback (cut by the poster) of the one process it started.
    command = "torchrun --nproc_per_node 1 example_chat_completion.py \\"
    traceback = ["Traceback (most recent call last):",
                 '  File "/home/bsp/OpenAiBase/MetaAI/llama/example_chat_completion.py", line 104, in <module>',
                 "    fire.Fire(main)"]
    assert engine.analyze_text("\n".join([command, *traceback])).diagnoses[0].initiator.rank == 0
    assert engine.analyze_text("\n".join(traceback)).diagnoses[0].initiator.rank is None
    # ultralytics/yolov5#820: one process on each of two nodes is not a world of one; the node rank places it.
    two_nodes = ('python -m torch.distributed.launch --nproc_per_node 1 --nnodes 2 --node_rank 1 --master_addr '
                 '"10.188.192.11" --master_port 12394 train.py --batch 16 --data coco128.yaml --epochs 300 '
                 '--weights yolov5s.pt --device 0')
    assert engine.analyze_text("\n".join([two_nodes, *traceback])).diagnoses[0].initiator.rank == 1


def test_a_bus_error_with_nccl_frames_is_dev_shm_not_an_nccl_crash(engine):
    # deepspeedai/DeepSpeed#2693 (8-way tensor parallel in a container), as pasted: UCX's backtrace through
    # ncclGroupEnd, then its SIGBUS line. NCCL frames under a segmentation fault would be nccl-library-segfault's.
    paste = [
        " 2 0x000000000007587d ncclGroupEnd()  ???:0",
        " 3 0x000000000006b246 ncclGroupEnd()  ???:0",
        " 4 0x0000000000008609 start_thread()  ???:0",
        "=================================",
        "c664db21f8dd:90422:94332 [6] NCCL INFO Connected all trees",
        "[c664db21f8dd:90422:0:95362] Caught signal 7 (Bus error: nonexistent physical address)",
    ]
    d = engine.analyze_text("\n".join(paste)).diagnoses[0]
    assert (d.id, d.initiator.line) == ("dev-shm-too-small", 6)
    d = engine.analyze_text("\n".join(paste[:4])).diagnoses[0]
    assert d.id == "nccl-library-segfault"


def test_invalid_usage_without_nccls_reason_offers_two_ranks_on_one_gpu_next(engine):
    # facebookresearch/fairseq#3704, the whole paste: 'invalid usage' when torch.distributed.run creates the
    # communicator, and no NCCL_DEBUG output to say why.
    line = "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:911, invalid usage, NCCL version 2.7.8"
    first, second = engine.analyze_text(line).diagnoses[:2]
    assert (first.id, second.id) == ("nccl-error-without-detail", "duplicate-gpu")
    assert second.confidence < first.confidence and "Duplicate GPU detected" in second.evidence_against[0]
    # a failed system call suggests the container's /dev/shm; a CUDA error suggests nothing
    system = line.replace("invalid usage", "unhandled system error")
    assert [d.id for d in engine.analyze_text(system).diagnoses] == ["nccl-error-without-detail", "dev-shm-too-small"]
    other = line.replace("invalid usage", "unhandled cuda error")
    assert [d.id for d in engine.analyze_text(other).diagnoses] == ["nccl-error-without-detail"]


def test_a_deepspeed_launcher_that_killed_its_workers_without_a_word_from_them_leads_with_the_oom_killer(engine):
    # deepspeedai/DeepSpeed#3938 (resuming: the launcher kills all four workers while rank 0 loads its optimizer
    # state, no traceback) and 2U1/Qwen-VL-Series-Finetune#135, whose dmesg showed the OOM killer.
    killing = ["[2023-07-25 00:38:05,103] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 230",
               "[2023-07-25 00:38:08,243] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 231"]
    first, second = engine.analyze_text("\n".join(killing)).diagnoses[:2]
    assert (first.id, first.possible, first.suggested) == ("host-oom-kill", True, True)
    assert (second.id, second.undetermined) == ("deepspeed-launcher-child-failed", True)
    assert first.confidence > second.confidence
    # The worker's exit code says otherwise (1: a Python exception that the excerpt does not reach): no suggestion.
    code = ("[2024-03-20 20:31:29,269] [ERROR] [launch.py:321:sigkill_handler] ['/data/anaconda3/envs/llama/bin/python',"
            " '-u', 'src/train_bash.py', '--local_rank=4', '--stage', 'sft'] exits with return code = 1")
    assert [d.id for d in engine.analyze_text("\n".join([*killing, code])).diagnoses] == [
        "deepspeed-launcher-child-failed"]


def test_a_ray_worker_that_vanished_offers_the_oom_killer_next(engine):
    # OpenRLHF/OpenRLHF#187, the whole paste: Ray's own list of causes starts with the OOM killer.
    line = ("The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: "
            "Worker unexpectedly exits with a connection error code 2. End of file. There are some potential root "
            "causes. (1) The process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop --force "
            "is called. (3) The worker is crashed unexpectedly due to SIGSEGV or other unexpected errors.")
    first, second = engine.analyze_text(line).diagnoses[:2]
    assert (first.id, second.id, second.possible) == ("ray-actor-died", "host-oom-kill", True)
    # an actor that died with a Python exception of its own (USER_ERROR) suggests nothing
    user = "The actor is dead because its worker process has died. Worker exit type: USER_ERROR"
    assert [d.id for d in engine.analyze_text(user).diagnoses] == ["ray-actor-died"]


def test_an_insufficient_driver_also_offers_a_driver_that_is_not_there_at_all(engine):
    # CUDA's error 35 as PyTorch raises it (the reference's own example); NVIDIA/nvidia-docker#24: a container without
    # the NVIDIA runtime gets the same message. The old driver stays first, the missing one is offered with its check.
    line = "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version"
    first, second = engine.analyze_text(line).diagnoses[:2]
    assert (first.id, second.id, second.possible, second.suggested) == (
        "cuda-driver-too-old", "nvidia-driver-not-found", True, True)
    assert second.confidence < first.confidence and "nvidia-smi" in second.evidence_against[0]
    # PyTorch's own "driver too old" names the found version: nothing else is offered
    old = ("RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU "
           "driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx")
    assert [d.id for d in engine.analyze_text(old).diagnoses] == ["cuda-driver-too-old"]


def test_a_verdict_whose_lines_fit_a_common_alternative_as_well_is_not_held_with_confidence(engine):
    # microsoft/onnxruntime#16307: ONNX Runtime's BFCArena refuses a buffer. The CUDA provider's arena most often, but
    # the CPU provider's fails with the same words (HaxyMoly/Pangu-Weather-ReadyToGo#11 ran out of RAM), so the GPU
    # reading leads below 0.6 with the host reading next, however often the line repeats.
    line = ("Non-zero status code returned while running ReduceSum node. onnxruntime::BFCArena::AllocateRawInternal "
            "Failed to allocate memory for requested buffer of size 939524096")
    for text in (line, "\n".join([line] * 3)):
        first, second = engine.analyze_text(text).diagnoses[:2]
        assert (first.id, second.id, second.suggested) == ("cuda-oom", "host-allocation-failed", True)
        assert second.confidence < first.confidence < 0.6
    # PyTorch's own out-of-memory line names the GPU: nothing else is offered and the verdict keeps its confidence.
    torch_oom = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 336.00 MiB. GPU  has a total capacity of "
                 "79.15 GiB of which 141.25 MiB is free. Process 2109115 has 78.99 GiB memory in use.")
    only = engine.analyze_text(torch_oom).diagnoses
    assert [d.id for d in only] == ["cuda-oom"] and only[0].confidence >= 0.6


REFERENCE = REFERENCE_HEAD + """
[[patterns]]
id = "{id}-line"
literals = ["{literal}"]
regex = '{literal}'
role = "cause"
emitter = "other"
match = ["{literal}", "MemoryError: {literal}"]
near_miss = ["nothing alike"]
"""


def test_two_readings_of_one_line_are_ordered_by_where_they_match_not_by_the_library_order(tmp_path):
    # RAPIDS' device OOM raised as a C++ bad_alloc (rapidsai/cugraph#2769): the detail that names the cause comes
    # after the generic class name. The generic reading's file sorts first; the reading further along still leads.
    (tmp_path / "a-host.toml").write_text(REFERENCE.format(id="a-host", literal="std::bad_alloc"))
    (tmp_path / "b-device.toml").write_text(REFERENCE.format(id="b-device", literal="out_of_memory: RMM failure"))
    engine = Engine(load_library([tmp_path], include_builtin=False))
    line = ("MemoryError: std::bad_alloc: out_of_memory: RMM failure at:/conda/envs/rapids-22.10/include/rmm/mr/device/"
            "pool_memory_resource.hpp:193: Maximum pool s")
    assert [d.id for d in engine.analyze_text(line).diagnoses][0] == "b-device"


# pengzhiliang/MAE-pytorch#101: the end of argparse's usage text, the error line under it lost from the paste.
USAGE_TAIL = ["                               [--device DEVICE] [--seed SEED] [--resume RESUME] [--auto_resume]",
              "                               [--world_size WORLD_SIZE] [--local_rank LOCAL_RANK] [--dist_on_itp]",
              "                               [--dist_url DIST_URL]"]


def test_a_usage_text_that_lists_only_local_rank_with_an_underscore(engine):
    alone = engine.analyze_text("\n".join(USAGE_TAIL)).diagnoses[0]
    assert (alone.id, alone.possible) == ("local-rank-argument", True)
    # microsoft/LoRA#79: under PyTorch 2.0's launcher, whose warning names the "--local-rank" it passes, it is the cause.
    launched = ["If your script expects `--local-rank` argument to be set, please",
                "change it to read from `os.environ['LOCAL_RANK']` instead. See ",
                "usage: gpt2_ft.py [-h] [--platform PLATFORM] [--local_rank LOCAL_RANK] [--rank RANK] [--device DEVICE] "
                "[--world_size WORLD_SIZE]"]
    d = engine.analyze_text("\n".join(launched)).diagnoses[0]
    assert (d.id, d.possible, d.initiator.line) == ("local-rank-argument", False, 3)
    # argparse naming another argument it rejected (AstarLight/Keras-image-classifer-framework#5's error line, put
    # under the usage above) is what went wrong instead.
    other = "train.py: error: the following arguments are required: -dtest/--dataset_test, -dtrain/--dataset_train, -m/--model"
    assert engine.analyze_text("\n".join([*USAGE_TAIL, other])).diagnoses[0].id != "local-rank-argument"


# jax-ml/jax#40831: process 1 enters the reduce-scatter 40 s late; process 0's gloo read times out after 30 s and it
# closes the pair, so process 1 fails at once with "Connection closed by peer".
GLOO_TIMEOUT_THEN_CLOSED = [
    "process 0: second psum_scatter FAILED after 30.0 s: UNKNOWN: Gloo ReduceScatter failed: "
    "[external/xla++third_party_ext+gloo/gloo/transport/tcp/buffer.cc:72] Read timeout [::1]:38624",
    "process 1: second psum_scatter FAILED after 0.0 s: UNKNOWN: Gloo ReduceScatter failed: "
    "[external/xla++third_party_ext+gloo/gloo/transport/tcp/pair.cc:547] Connection closed by peer [::1]:2475",
]


@pytest.mark.parametrize("paste, verdict", [
    (GLOO_TIMEOUT_THEN_CLOSED, "collective-timeout"),
    # The connection closed first: a peer went away and a later timeout is its consequence.
    (GLOO_TIMEOUT_THEN_CLOSED[::-1], "peer-connection-lost"),
], ids=["timeout-first", "closed-first"])
def test_a_connection_closed_after_a_timeout_in_the_same_log_is_that_timeouts_consequence(engine, paste, verdict):
    assert engine.analyze_text("\n".join(paste)).diagnoses[0].id == verdict


def test_collateral_printed_before_the_first_failure_is_not_called_later(engine):
    # A failed cudaMalloc, then the illegal access it led to (NVIDIA/multi-gpu-programming-models#14): the device fault
    # outranks the OOM by precedence, and the report must not say the OOM line came after it.
    text = ('ERROR: CUDA RT call "cudaMalloc(&a_new, nx * ny * sizeof(real))" in line 378 of file jacobi.cpp failed '
            'with out of memory (2).\n'
            'ERROR: CUDA RT call "cudaDeviceSynchronize()" in line 385 of file jacobi.cpp failed with an illegal '
            'memory access was encountered (700).\n')
    d = engine.analyze_text(text, "paste.log").diagnoses[0]
    assert d.id == "illegal-memory-access" and d.initiator.line == 2
    assert any("1 line(s), 1 of them printed before it, are explained as its collateral" in e for e in d.evidence_for)
    assert not any("later line(s)" in e for e in d.evidence_for)


# NVIDIA/nccl-tests#273: one nccl-tests process (pid 7622) drives eight GPUs, so it holds eight ranks, one per device.
ONE_PROCESS_EIGHT_GPUS = [
    "dc02-p21-t208-n012:7622:7640 [4] NCCL INFO ncclCommInitRank comm 0x55555b048e40 rank 4 nranks 8 cudaDev 4 nvmlDev 4 "
    "busId 9a000 commId 0xb1a317b2c0f1498c - Init COMPLETE",
    "dc02-p21-t208-n012:7622:7636 [0] NCCL INFO ncclCommInitRank comm 0x55555af62920 rank 0 nranks 8 cudaDev 0 nvmlDev 0 "
    "busId 18000 commId 0xb1a317b2c0f1498c - Init COMPLETE",
]


@pytest.mark.parametrize("lines, device, rank", [(2, 4, 4), (2, 0, 0), (2, 2, None), (2, None, None), (1, None, 4)])
def test_a_process_holding_ranks_on_several_gpus_lends_a_line_the_rank_of_its_gpu(engine, lines, device, rank):
    # The process's lines on GPU 4 and 0 name ranks 4 and 0. A line of that process that names no rank (here the first
    # line with its rank taken away, moved to `device`) takes the rank of its own GPU, and none on a GPU no line placed
    # or where it names no GPU; where the process holds one rank (only the first line), a line naming no GPU takes it.
    events = [e for i, line in enumerate(ONE_PROCESS_EIGHT_GPUS[:lines], 1)
              for e in engine.matcher.read_line(line, i, "paste.log", 0, Source())]
    anonymous = attrs.evolve(events[0], line=3, source=attrs.evolve(events[0].source, rank=None, device=device))
    assert resolve_ranks([*events, anonymous])[-1].source.rank == rank


# PKU-YuanGroup/Open-Sora-Plan#386: four local ranks print their shared-memory connections, then rank 0's NCCL kernel
# launch runs out of memory; no line of the paste is an init line with the rank.
CONNECTIONS_THEN_WARN = [
    "ins-7df6eojsifuykig9:3018451:3024010 [0] NCCL INFO Channel 00 : 0[1020] -> 2[1040] via SHM/direct/direct",
    "ins-7df6eojsifuykig9:3018451:3024010 [0] NCCL INFO Channel 01 : 0[1020] -> 2[1040] via SHM/direct/direct",
    "ins-7df6eojsifuykig9:3018454:3024009 [3] NCCL INFO Channel 00 : 3[1050] -> 2[1040] via SHM/direct/direct",
    "ins-7df6eojsifuykig9:3018451:3018451 [0] enqueue.cc:1085 NCCL WARN Cuda failure 'out of memory'",
]


def test_a_process_takes_the_rank_its_nccl_connection_lines_name_as_their_printer(engine):
    d = engine.analyze_text("\n".join(CONNECTIONS_THEN_WARN)).diagnoses[0]
    assert (d.id, d.initiator.rank, d.initiator.pid) == ("cuda-oom", 0, 3018451)
    # The connection lines themselves name no rank of their own: a "Channel" rank is the communicator's.
    events = engine.matcher.read_line(CONNECTIONS_THEN_WARN[0], 1, "paste.log", 0, Source())
    assert [e.source.rank for e in events] == [None]


def test_connection_lines_naming_two_ranks_for_one_process_lend_none(engine):
    # The same process in a second communicator (NVIDIA/nccl#1808's line, moved onto rank 0's host, pid and GPU): its
    # ranks disagree, so the WARN keeps no rank rather than the last one read.
    events = [e for i, line in enumerate(CONNECTIONS_THEN_WARN, 1)
              for e in engine.matcher.read_line(line, i, "paste.log", 0, Source())]
    other = engine.matcher.read_line("2025-08-12 09:37:14.267026 worker-9 >> :166:1835 [0] NCCL INFO Channel 00/0 : "
                                     "80[0] -> 87[7] via P2P/CUMEM", 5, "paste.log", 0, Source())[0]
    moved = attrs.evolve(other, source=events[0].source)
    assert resolve_ranks(events)[-1].source.rank == 0
    assert resolve_ranks([*events, moved])[-2].source.rank is None


@pytest.mark.parametrize("line, reference", [
    # rosinality/stylegan2-pytorch#233 and microsoft/Swin-Transformer#267: torch.distributed.launch raises with `cmd`
    # left over from its launch loop, the last worker it started, whichever worker died.
    ("subprocess.CalledProcessError: Command '['/public/home/anaconda3/envs/stylegan/bin/python', '-u', 'train.py', "
     "'--local_rank=1', '--batch', '16', './data/']' died with <Signals.SIGSEGV: 11>.", "segfault-one-rank"),
    ("_subprocess.CalledProcessError: Command '['/usr/bin/python3', '-u', 'main.py', '--local_rank=3', '--cfg', "
     "'configs/swin/swin_tiny_patch4_window7_224.yaml']' died with <Signals.SIGKILL: 9>.", "host-oom-kill"),
])
def test_the_legacy_launchers_command_does_not_name_the_rank_that_died(engine, line, reference):
    top = engine.analyze_text(line).diagnoses[0]
    assert top.id == reference and top.initiator.rank is None
