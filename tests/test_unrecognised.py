"""Error lines no reference explains: a verdict of their own when nothing else failed, listed beside the
verdict when something else did. Every line here was printed by real software (sources in the comments)."""

import pytest

from conftest import REALRUN
from firstfault.annotations import annotate
from firstfault.lsp.convert import _severity
from firstfault.matcher import Extent
from firstfault.model import UNRECOGNISED
from lsprotocol import types

# NCCL on A800s, its own allocation failing on one GPU: lines 3-6 of the paste in NVIDIA/nccl#1485 (the CUDA error above
# them, which names the cause, left out as a selection would).
NCCL_CALLOC = [
    "node2:24881:25568 [2] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 10485760 bytes",
    "node2:24881:25568 [2] NCCL INFO transport/p2p.cc:204 -> 1",
    "node2:24881:25568 [2] NCCL INFO transport/p2p.cc:605 -> 1",
    "node2:24881:25568 [2] NCCL INFO proxy.cc:1303 -> 1",
]
# google/nccl-fastsocket#4, as pasted: the plugin's WARN lines, then it connects and the job runs.
PLUGIN_RETRIES = [
    "full-debug2-test-1:4024:4048 [0] net_fastsocket.cc:765 NCCL WARN Cannot get incoming CPU.",
    "",
    "full-debug2-test-0:4300:4325 [0] net_fastsocket.cc:785 NCCL WARN Maximum retry reached for accept 3.",
    "",
    "full-debug2-test-1:4024:4055 [0] net_fastsocket.cc:674 NCCL WARN Maximum retry reached for connect 3.",
    "full-debug2-test-0:4300:4325 [0] NCCL INFO accept qid: 3, rqid: 3",
    "full-debug2-test-0:4300:4325 [0] NCCL INFO accept incoming cpu: 0",
    "full-debug2-test-0:4300:4325 [0] NCCL INFO NET/FastSocket : Connected after 1000 retries.",
    "full-debug2-test-0:4300:4325 [0] NCCL INFO NET/FastSocket : Accepted data socket 3",
    "",
    "full-debug2-test-0:4300:4348 [0] net_fastsocket.cc:652 NCCL WARN Cannot get incoming CPU.",
    "full-debug2-test-1:4024:4055 [0] NCCL INFO connect incoming cpu: 0",
    "full-debug2-test-1:4024:4055 [0] NCCL INFO connect qid: 3, rqid: 3",
    "full-debug2-test-1:4024:4055 [0] NCCL INFO NET/FastSocket : Connected after 1000 retries.",
]
# A traceback cut before its last line, as pasted (vLLM v1 worker, snowflakedb/ArcticInference#37).
CUT_TRACEBACK = [
    "(VllmWorker rank=0 pid=2480291) INFO 05-07 19:18:17 [loader.py:458] Loading weights took 3.07 seconds",
    "(VllmWorker rank=0 pid=2480291) Process SpawnProcess-1:1:",
    "(VllmWorker rank=0 pid=2480291) Traceback (most recent call last):",
]


# intel/ipex-llm#9288, as pasted: two of eight ranks waiting in the store-based barrier, then a traceback the paste
# cuts before its exception line (the thread's title has it: the barrier timed out).
BARRIER_THEN_CUT_TRACEBACK = [
    '2023-10-26 14:48:55,606 - INFO - Waiting in store based barrier to initialize process group for rank: 1, key: store_based_barrier_key:2 (world_size=8, worker_count=2, timeout=0:30:00)',
    '2023-10-26 14:49:05,483 - INFO - Waiting in store based barrier to initialize process group for rank: 0, key: store_based_barrier_key:2 (world_size=8, worker_count=2, timeout=0:30:00)',
    '2023-10-26 14:49:05,613 - INFO - Waiting in store based barrier to initialize process group for rank: 1, key: store_based_barrier_key:2 (world_size=8, worker_count=2, timeout=0:30:00)',
    '2023-10-26 14:49:15,492 - INFO - Waiting in store based barrier to initialize process group for rank: 0, key: store_based_barrier_key:2 (world_size=8, worker_count=2, timeout=0:30:00)',
    '2023-10-26 14:49:15,622 - INFO - Waiting in store based barrier to initialize process group for rank: 1, key: store_based_barrier_key:2 (world_size=8, worker_count=2, timeout=0:30:00)',
    'Traceback (most recent call last):',
    '  File "/home/ywang30/workspace_bigdl_QloRA/bigdl-qlora-alpaca/finetune.py", line 310, in <module>',
    '    fire.Fire(train)',
    '  File "/home/ywang30/miniconda3/envs/bigdl_qlora/lib/python3.9/site-packages/fire/core.py", line 141, in Fire',
    '    component_trace = _Fire(component, args, parsed_flag_args, context, name)',
]


@pytest.mark.parametrize("lines, line, text", [
    (NCCL_CALLOC, 1, "Failed to CUDA calloc 10485760 bytes"),
    # A site's submit filter refusing the job in its own words (outerloop-science/outerloop#176, as pasted)
    (["sbatch: error: *** Error partition 'h200_courant' is not valid for this job",
      "sbatch: error: *** Error: CPU job setup is not valid"], 1, "is not valid for this job"),
    (["terminate called after throwing an instance of 'c10::Error'"], 1, "c10::Error"),
    # The shell's line for a child that died on a signal (jbwang1997/OBBDetection#178; PaddlePaddle/ERNIE#375, as
    # pasted)
    (["frame #24: __libc_start_main + 0xf0 (0x7f34e9db0840 in /lib/x86_64-linux-gnu/libc.so.6)",
      "frame #25: python() [0x548e9e]", "", "Aborted (core dumped)"], 4, "Aborted (core dumped)"),
    (["I1126 10:30:02.339908 733376 build_strategy.cc:340] SeqOnlyAllReduceOps:0, num_trainers:1",
      "Floating point exception (core dumped)"], 2, "Floating point exception"),
    # glibc's heap check (yxlijun/Pelee.Pytorch#20, as pasted), before glibc 2.26 (MendelXu/SAN#6)
    (["free(): invalid pointer", "Aborted (core dumped)"], 1, "free(): invalid pointer"),
    (["[04/05 09:08:31 d2.engine.train_loop]: [Starting training from iteration 0",
      "*** Error in `/home/anaconda3/envs/guangrui_cuda11/bin/python': double free or corruption (!prev): "
      "0x000055bbaca66830 ***"], 2, "double free or corruption"),
    # PyCharm's console (isl-org/Open3D-PointNet2-Semantic3D#66, as pasted)
    (["free(): invalid pointer", "", "Process finished with exit code 134 (interrupted by signal 6: SIGABRT)"], 1,
     "free(): invalid pointer"),
    (["Process finished with exit code 1"], 1, "exit code 1"),
    # A logger's error level after its timestamp (ray-project/ray#30333)
    (["2022-11-15 19:26:36,618\tERROR tune.py:773 -- Trials did not complete: [TorchTrainer_96bfe_00000]"], 1,
     "Trials did not complete"),
    # TensorRT-LLM's check throwing, repeated by the executor's logger, its native stack below (NVIDIA/TensorRT-LLM#5389,
    # the paste's first lines)
    (["[06/21/2025-01:30:42] [TRT-LLM] [RANK 0] [I] [Autotuner]: Autotuning process ends",
      "[06/21/2025-01:30:42] [TRT-LLM] [RANK 0] [E] Failed to initialize executor on rank 0: [TensorRT-LLM][ERROR] "
      "Assertion failed: Error occurred when running GEMM! (/src/tensorrt_llm/cpp/tensorrt_llm/kernels/trtllmGenKernels/"
      "batchedGemm/KernelRunner.cpp:180)",
      "1       0x7fac7ac778fd tensorrt_llm::common::throwRuntimeError(char const*, int, char const*) + 97",
      "2       0x7fac7ac7f699 /usr/local/lib/python3.12/dist-packages/tensorrt_llm/libs/libtensorrt_llm.so(+0x1d5e699) "
      "[0x7fac7ac7f699]"], 2, "Assertion failed: Error occurred when running GEMM!"),
])
def test_error_lines_no_reference_explains_are_an_unrecognised_failure(engine, lines, line, text):
    report = engine.analyze_text("\n".join(lines))
    top = report.diagnoses[0]
    assert (top.id, top.initiator.line) == (UNRECOGNISED, line)
    assert text in top.initiator.text and report.failed
    assert top.next_checks and not top.undetermined and top.confidence <= 0.3


@pytest.mark.parametrize("lines, line", [
    # facebookresearch/mae#119, rcgsheffield/sheffield_hpc#1042, microsoft/nnfusion#520 (as pasted)
    (["sbatch: unrecognized option '--gpus-per-node=8'",
      "sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)"], 2),
    (["srun: error: Unable to allocate resources: Requested node configuration is not available"], 1),
    (["srun: error: invalid partition specified: AE",
      "srun: error: Unable to allocate resources: Invalid partition name specified"], 1),
])
def test_slurm_not_accepting_the_job_is_named_not_left_unrecognised(engine, lines, line):
    top = engine.analyze_text("\n".join(lines)).diagnoses[0]
    assert (top.id, top.initiator.line) == ("slurm-submission-rejected", line)


# Ray's report of an actor whose constructor raised, as logged: vllm-project/vllm#22677 (the paste ends at the
# caret lines under it), blshao84/ray-deploy-repro's README (the constructor's traceback below it)
RAY_CREATION_TASK = [
    "(DPEngineCoreActor pid=3551736) Exception raised in creation task: The actor died because of an error raised in "
    "its creation task, ray::DPEngineCoreActor.init() (pid=3551736, ip=10.0.2.109, "
    "actor_id=7b9995853ad2be757c1825e501000000, repr=<vllm.v1.engine.core.DPEngineCoreActor object at 0x7f916f5331a0>)",
    "(DPEngineCoreActor pid=3551736)            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
]
RAY_CREATION_TASK_RAISED = [
    "2021-12-13 18:12:33,052 ERROR worker.py:431 -- Exception raised in creation task: The actor died because of an "
    "error raised in its creation task, ray::SERVE_REPLICA::Api#qNWYOu:RayServeWrappedReplica.__init__ (pid=94370, "
    "ip=127.0.0.1)",
    '  File "/Users/baolins/.conda/envs/smoketest/lib/python3.8/concurrent/futures/_base.py", line 432, in result',
    "    return self.__get_result()",
    '  File "/Users/baolins/.conda/envs/smoketest/lib/python3.8/concurrent/futures/_base.py", line 388, in '
    "__get_result",
    "    raise self._exception",
    '  File "/Users/baolins/.conda/envs/smoketest/lib/python3.8/site-packages/ray/serve/replica.py", line 48, in '
    "__init__",
    "    deployment_def = cloudpickle.loads(serialized_deployment_def)",
    "ModuleNotFoundError: No module named 'foo'",
    ":actor_name:Api",
]


def test_an_actor_whose_constructor_raised_is_a_failure_and_its_exception_says_why(engine):
    alone = engine.analyze_text("\n".join(RAY_CREATION_TASK)).diagnoses[0]
    assert (alone.id, alone.initiator.line) == (UNRECOGNISED, 1)
    raised = engine.analyze_text("\n".join(RAY_CREATION_TASK_RAISED)).diagnoses[0]
    assert raised.id != UNRECOGNISED and raised.initiator.line == 8


def test_hydras_wrapper_leaves_the_verdict_to_the_exception_below_it(engine):
    # Hydra's line and the traceback's head from xichenpan/ARLDM#19, an exception line from THUDM/GLM#173 below them
    lines = ["Error executing job with overrides: []", "Traceback (most recent call last):",
             '  File "/home/houyi/projects/ARLDM/main.py", line 489, in <module>', "    main()",
             "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1191, unhandled system "
             "error, NCCL version 2.10.3"]
    top = engine.analyze_text("\n".join(lines)).diagnoses[0]
    assert top.id != UNRECOGNISED and top.initiator.line == 5
    assert engine.analyze_text(lines[0]).diagnoses[0].id == UNRECOGNISED


def test_a_warn_that_nccl_recovers_from_is_no_failure(engine):
    assert engine.analyze_text("\n".join(PLUGIN_RETRIES)).diagnoses == ()


def test_a_lone_warn_that_ends_a_paste_is_a_possible_unrecognised_failure(engine):
    # NVIDIA/nccl#2101 (vLLM on a vGPU guest): the WARN line alone, as people paste it.
    line = ("[2026-04-13 19:52:24] pais-modelendpoint-c3dea45f-4e72-4a34-8888-7c855e768973-8579zt8:508:508 [0] "
            "init.cc:426 NCCL WARN Cuda failure 'operation not supported'")
    top = engine.analyze_text(line).diagnoses[0]
    assert (top.id, top.initiator.line, top.possible) == (UNRECOGNISED, 1, True)


def test_an_unexplained_error_line_does_not_silence_a_possible_cause_the_excerpt_ends_with(engine):
    # git's "fatal:" when a fetch cannot read its remote (git's connect.c; an error line no reference explains) above
    # OpenSSH's refused connection, which alone is a possible cause (it counts for sure only beside a launcher's own
    # ssh failure; a line that deepspeed-ssh-unreachable.toml cites from BAAI-WuDao/EVA#3 or deepspeedai/DeepSpeed#438).
    git = "fatal: Could not read from remote repository."
    ssh = "ssh: connect to host 175.24.121.148 port 22: No route to host"
    top = engine.analyze_text("\n".join([git, ssh])).diagnoses[0]
    assert (top.id, top.possible, top.initiator.line) == ("deepspeed-ssh-unreachable", True, 2)
    assert any("the only failure evidence a reference explains" in e for e in top.evidence_for)
    # without the ssh line the error line is the verdict, as before
    assert engine.analyze_text(git).diagnoses[0].id == UNRECOGNISED


def test_a_traceback_cut_before_its_exception_line_leaves_the_warning_above_it_where_the_excerpt_ends(engine):
    top = engine.analyze_text("\n".join(BARRIER_THEN_CUT_TRACEBACK)).diagnoses[0]
    assert (top.id, top.possible) == ("store-based-barrier-timeout", True)
    assert any("then a traceback cut before its exception line" in e for e in top.evidence_for)


def test_only_a_traceback_without_its_exception_line_is_cut():
    assert Extent.of_paste(BARRIER_THEN_CUT_TRACEBACK, 1, 10).cut_traceback == 6
    # A whole one (real torchrun run: rank 1's traceback ends with its ValueError) is what the paste says.
    whole = (REALRUN / "rank-raises.log").read_text().splitlines()[20:27]
    assert whole[-1].endswith("ValueError: bad batch at step 3 on rank 1")
    extent = Extent.of_paste(whole, 21, 7)
    assert (extent.cut_traceback, extent.last) == (None, 27)
    # Behind Horovod's "[0]<stderr>:" label (ludwig-ai/ludwig#1803, the end of the paste): cut after two frames' lines.
    horovod = [
        '[0]<stderr>:Traceback (most recent call last):',
        '[0]<stderr>:  File "/Users/justinzhao/ludwig/tests/integration_tests/scripts/run_train_horovod.py", line 80, in <module>',
        '[0]<stderr>:    test_horovod_intent_classification(',
    ]
    assert Extent.of_paste(horovod, 1, 3).cut_traceback == 1


def test_a_specific_reading_of_a_line_printed_as_an_error_is_a_possible_cause_not_an_unrecognised_one(engine):
    # NVIDIA-NeMo/Speech#8637, as pasted: "CUDA error: initialization error" is the fork (cuda-fork-reinit) only beside
    # a DataLoader worker's line; here C++'s terminate prints it as an error, with lines after it.
    paste = [
        "terminate called after throwing an instance of 'c10::Error'",
        "  what():  CUDA error: initialization error",
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be "
        "incorrect.",
        "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.",
        "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
        "",
    ]
    top = engine.analyze_text("\n".join(paste)).diagnoses[0]
    assert (top.id, top.possible, top.initiator.line) == ("cuda-fork-reinit", True, 2)
    assert any("line 2 prints it as an error" in e for e in top.evidence_for)


def test_a_failure_the_software_says_it_recovered_from_is_context_and_one_after_it_counts(engine):
    # ggml-org/llama.cpp#26297, as pasted: the pipeline-parallel compute buffer did not fit on CUDA1, llama.cpp
    # retried without pipeline parallelism and the server went on loading.
    oom = ("1.06.520.077 E ggml_backend_cuda_buffer_type_alloc_buffer: allocating 51748.72 MiB on device 1: "
           "cudaMalloc failed: out of memory")
    retry = ("1.06.520.107 W sched_reserve: compute buffer allocation failed, retrying without pipeline "
             "parallelism")
    going_on = "1.07.304.130 I srv    load_model: initializing, n_slots = 1, n_ctx_slot = 50176, kv_unified = 'false'"
    assert not engine.analyze_text("\n".join([oom, retry, going_on])).diagnoses
    # the same allocation failing after the retry is the verdict
    top = engine.analyze_text("\n".join([oom, retry, oom])).diagnoses[0]
    assert (top.id, top.initiator.line) == ("cuda-oom", 3)


def test_a_retry_that_then_succeeded_is_not_even_a_possible_cause(engine):
    # srun prints both lines (SchedMD/slurm src/srun/libsrun/launch.c): the wait alone at the end of an excerpt may be
    # why the job never started; the step created after it says the wait ended.
    waiting = "srun: Job 63426764 step creation temporarily disabled, retrying (Requested nodes are busy)"
    top = engine.analyze_text(waiting).diagnoses[0]
    assert (top.id, top.possible) == ("slurm-step-creation-failed", True)
    assert not engine.analyze_text("\n".join([waiting, "srun: Step created for job 63426764"])).diagnoses


def test_nccl_error_trace_without_its_warn_is_a_possible_unrecognised_failure(engine):
    # NVIDIA/nccl#1381, as pasted: NCCL_DEBUG=INFO on sockets, the log ends in the error trace and no WARN says why.
    paste = [
        "c39f5cf046aa:4533:4667 [0] NCCL INFO NET/Socket : Using [0]eth0:172.17.0.3<0>",
        "c39f5cf046aa:4533:4667 [0] NCCL INFO Using network Socket",
        "c39f5cf046aa:4533:4667 [0] NCCL INFO misc/socket.cc:568 -> 2",
        "c39f5cf046aa:4534:4588 [1] NCCL INFO misc/socket.cc:568 -> 2",
        "c39f5cf046aa:4533:4667 [0] NCCL INFO misc/socket.cc:619 -> 2",
    ]
    top = engine.analyze_text("\n".join(paste)).diagnoses[0]
    assert (top.id, top.initiator.line, top.possible) == (UNRECOGNISED, 3, True)
    # with the WARN there, the WARN is what the verdict shows, and the trace is not listed as unexplained
    top = engine.analyze_text("\n".join(NCCL_CALLOC)).diagnoses[0]
    assert top.initiator.line == 1 and not top.possible


def test_a_recognised_failure_wins_and_the_rest_is_listed_as_unexplained(engine):
    # pytorch/pytorch#15592's gloo failure, then the allocation WARN of another job's NCCL: two families.
    lines = ["terminate called after throwing an instance of 'gloo::IoException'",
             "  what():  [/opt/conda/conda-bld/pytorch_1544084119927/work/third_party/gloo/gloo/transport/tcp/"
             "pair.cc:724] connect [127.0.1.1]:3210: Connection refused",
             *NCCL_CALLOC]
    report = engine.analyze_text("\n".join(lines))
    assert [d.id for d in report.diagnoses] == ["gloo-connect-timeout"]
    assert len(report.diagnoses[0].unexplained) == 1
    assert "Failed to CUDA calloc" in report.diagnoses[0].unexplained[0]
    notes = annotate(report, engine.library.references)[0]
    assert {n.kind for n in notes if n.event.reference_id == UNRECOGNISED} == {"context"}


def test_repeated_lines_collapse_into_one_template(engine):
    # NVIDIA/TensorRT-LLM#4238, as pasted: the same NCCL WARN from two devices beside the recognised NCCL error.
    paste = [
        "[1] enqueue.cc:1500 NCCL WARN Cuda failure 1 'invalid argument'",
        "[1] NCCL INFO group.cc:242 -> 1",
        "[1] NCCL INFO group.cc:470 -> 1",
        "[1] NCCL INFO group.cc:573 -> 1",
        "[1] NCCL INFO enqueue.cc:2229 -> 1",
        "Failed, NCCL error /home/jenkins/agent/workspace/LLM/main/L0_Test-x86_64/tensorrt_llm/cpp/tensorrt_llm/thop/"
        "allreduceOp.cpp:308 'unhandled cuda error (run with NCCL_DEBUG=INFO for details)'",
        "",
        "[0] enqueue.cc:1500 NCCL WARN Cuda failure 1 'invalid argument'",
    ]
    top = engine.analyze_text("\n".join(paste)).diagnoses[0]
    assert top.id != UNRECOGNISED
    assert top.unexplained == ("NCCL WARN Cuda failure 1 'invalid argument' ×2 (line 1)",)


def test_a_coloured_error_line_is_quoted_from_where_its_message_starts(engine):
    # huggingface/text-generation-inference#467: the launcher's coloured error line (the columns of the line the file
    # holds count the escapes; the quote is cut from the line without them).
    paste = ["\x1b[2m2023-06-16T12:57:41.398047Z\x1b[0m \x1b[31mERROR\x1b[0m \x1b[2mtext_generation_launcher\x1b[0m"
             "\x1b[2m:\x1b[0m Shard 3 failed to start:",
             "Error: ShardCannotStart"]
    top = engine.analyze_text("\n".join(paste)).diagnoses[0]
    assert top.id == UNRECOGNISED
    assert top.evidence_for[0].endswith("line 1 on rank 3: text_generation_launcher: Shard 3 failed to start:")


def test_the_editor_shows_an_unrecognised_first_failure_as_a_warning(engine):
    report = engine.analyze_text("\n".join(NCCL_CALLOC))
    first = next(n for n in annotate(report, engine.library.references)[0] if n.kind == "initiator")
    assert _severity(first) == types.DiagnosticSeverity.Warning


def test_the_editor_shows_a_possible_cause_as_a_warning(engine):
    from conftest import REALRUN

    lines = (REALRUN / "unresolvable-rdzv-host.log").read_text().splitlines()
    report = engine.analyze_text("\n".join(line for line in lines if "cannot be retrieved (gai error" in line))
    first = next(n for n in annotate(report, engine.library.references)[0] if n.kind == "initiator")
    assert _severity(first) == types.DiagnosticSeverity.Warning and first.message.startswith("Possible cause")


def test_the_editor_shows_a_suggested_cause_as_a_warning(engine):
    # deepspeedai/DeepSpeed#3938: the launcher killing its workers, nothing else; the OOM killer is only the usual cause.
    report = engine.analyze_text("\n".join([
        "[2023-07-25 00:38:05,103] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 230",
        "[2023-07-25 00:38:08,243] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 231"]))
    first = next(n for n in annotate(report, engine.library.references)[0] if n.kind == "initiator")
    assert _severity(first) == types.DiagnosticSeverity.Warning and first.message.startswith("Possible cause")


def test_the_initiator_carries_pid_and_device_but_a_device_is_no_rank(engine):
    report = engine.analyze_text("\n".join(NCCL_CALLOC))
    initiator = report.to_json()["diagnoses"][0]["initiator"]
    assert (initiator["host"], initiator["pid"], initiator["device"], initiator["rank"]) == ("node2", 24881, 2, None)
    assert "local_rank" not in initiator


def test_only_the_consequence_in_the_input_names_it_and_says_the_cause_is_missing(engine):
    # snowflakedb/ArcticInference#37, as pasted: the vLLM executor reports a dead worker; the worker's own error
    # never made it into the paste.
    paste = [
        "(VllmWorker rank=0 pid=2480291) INFO 05-07 19:18:17 [loader.py:458] Loading weights took 3.07 seconds",
        "(VllmWorker rank=0 pid=2480291) Process SpawnProcess-1:1:",
        "CRITICAL 05-07 19:18:17 [ulysses.py:230] MulitprocExecutor got fatal signal from worker processes, shutting "
        "down. See stack trace above for root cause issue.",
        "CRITICAL 05-07 19:18:17 [core_client.py:359] Got fatal signal from worker processes, shutting down. See stack "
        "trace above for root cause issue.",
        "(VllmWorker rank=0 pid=2480291) Traceback (most recent call last):",
        "Killed",
    ]
    top = engine.analyze_text("\n".join(paste)).diagnoses[0]
    assert top.id == "vllm-worker-died"
    assert any("does not reach the cause" in e for e in top.evidence_against) and top.confidence <= 0.35
    # The worker whose own traceback begins in the paste is the one that died: its rank is named.
    assert (top.undetermined, top.initiator.rank, top.initiator.line) == (False, 0, 5)
    assert top.headline.startswith("rank 0 failed first with an error of its own")
    without_traceback = engine.analyze_text("\n".join(paste[:4] + paste[5:])).diagnoses[0]
    assert (without_traceback.undetermined, without_traceback.initiator.rank) == (True, None)


def test_the_reason_nccl_gives_on_the_line_after_last_error_is_quoted_not_called_missing(engine):
    # hiyouga/LlamaFactory#6161, as pasted (the terminal wrapped the DistBackendError line).
    paste = [
        "[rank1]:     work = group.barrier(opts=opts)",
        "[rank1]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, un",
        "handled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5",
        "[rank1]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.",
        "[rank1]: Last error:",
        "[rank1]: Failed to open libnvidia-ml.so.1",
    ]
    top = engine.analyze_text("\n".join(paste)).diagnoses[0]
    assert top.id == "nccl-error-without-detail" and top.initiator.rank == 1
    assert top.evidence_for[0].endswith(": Failed to open libnvidia-ml.so.1")
    assert top.headline == "the reason given: Failed to open libnvidia-ml.so.1"


def test_hovers_say_possible_and_unrecognised_instead_of_started_the_failure(engine):
    from conftest import REALRUN
    from firstfault.hovertext import line_markdown

    report = engine.analyze_text("\n".join(NCCL_CALLOC))
    note = next(n for n in annotate(report, engine.library.references)[0] if n.kind == "initiator")
    text = line_markdown(report, note.event, note.kind, report.diagnoses[0], engine.library.references)
    assert "earliest error line no reference explains" in text and "started the failure" not in text
    lines = (REALRUN / "unresolvable-rdzv-host.log").read_text().splitlines()
    report = engine.analyze_text("\n".join(line for line in lines if "cannot be retrieved (gai error" in line))
    note = next(n for n in annotate(report, engine.library.references)[0] if n.kind == "initiator")
    text = line_markdown(report, note.event, note.kind, report.diagnoses[0], engine.library.references)
    assert text.startswith("**firstfault: possible cause**")


@pytest.mark.parametrize("lines, line, rank", [
    (CUT_TRACEBACK, 3, 0),
    # SkyworkAI/SkyReels-V3#3, as pasted: rank 0's traceback, the excerpt ending inside torch's frames
    (["[rank0]: Traceback (most recent call last):",
      '[rank0]:   File "/SkyReels-V3/generate_video.py", line 289, in <module>',
      "[rank0]:     video_out = pipe.generate_video(args.ref_imgs, args.prompt, args.duration, args.seed, "
      "resolution=args.resolution)",
      '[rank0]:   File "/lib/python3.10/site-packages/torch/utils/_contextlib.py", line 120, in decorate_context',
      "[rank0]:     return func(*args, **kwargs)"], 1, 0),
])
def test_a_traceback_cut_before_its_exception_is_an_exception_whose_message_is_missing(engine, lines, line, rank):
    d = engine.analyze_text("\n".join(lines)).diagnoses[0]
    assert (d.id, d.initiator.line, d.initiator.rank, d.confidence) == ("python-exception-one-rank", line, rank, 0.3)
    assert "cuts before its exception line" in d.evidence_for[0]
    assert "not in the input" in d.evidence_against[0] and d.verify


def test_a_cut_traceback_names_the_deepest_call_the_input_shows(engine):
    # huggingface/peft#2603, the paste as shown: rank 1's traceback stops in peft's frames, before the exception.
    paste = [
        "[rank1]: Traceback (most recent call last):",
        '[rank1]:   File "/mnt/data/lb/6.5/UniWorld-V1/create_ema_zero3_lora.py", line 249, in <module>',
        "[rank1]:     ema_model = create_ema_model(",
        "[rank1]:                 ^^^^^^^^^^^^^^^^^",
        '[rank1]:   File "/mnt/data/lb/6.5/UniWorld-V1/create_ema_zero3_lora.py", line 196, in create_ema_model',
        "[rank1]:     model = get_peft_model(model, lora_config)",
        "[rank1]:             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        '[rank1]:   File "/usr/local/lib/python3.11/site-packages/peft/mapping_func.py", line 113, in get_peft_model',
        "[rank1]:     return PeftModel(",
        "[rank1]:            ^^^^^^^^^^",
        '[rank1]:   File "/usr/local/lib/python3.11/site-packages/peft/peft_model.py", line 134, in __init__',
        "[rank1]:     self.set_additional_trainable_modules(peft_config, adapter_name)",
        '[rank1]:   File "/usr/local/lib/python3.11/site-packages/peft/peft_model.py", line 978, in '
        "set_additional_trainable_modules",
        "[rank1]:     _set_trainable(",
    ]
    d = engine.analyze_text("\n".join(paste)).diagnoses[0]
    assert d.id == "python-exception-one-rank"
    assert d.evidence_for[1] == (
        "the exception was raised in the deepest call the input shows or below it (line 13): "
        'File "/usr/local/lib/python3.11/site-packages/peft/peft_model.py", line 978, in set_additional_trainable_modules')
    # Without a frame there is no call to name.
    bare = engine.analyze_text("\n".join(CUT_TRACEBACK)).diagnoses[0]
    assert not any("deepest call" in e for e in bare.evidence_for)


def test_the_message_logged_above_a_cut_traceback_is_part_of_it(engine):
    # LMCache/LMCache#3339, the paste's last lines: vLLM's logger.exception prints its message, then the traceback,
    # each line behind the same prefix; the excerpt stops at the first frame.
    prefix = "(Worker_TP0_EP0 pid=987) ERROR 05-20 03:47:17 [multiproc_executor.py:962]"
    paste = [
        f"{prefix} WorkerProc hit an exception.",
        f"{prefix} Traceback (most recent call last):",
        f'{prefix}   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/executor/multiproc_executor.py", line 957, '
        "in worker_busy_loop",
    ]
    d = engine.analyze_text("\n".join(paste)).diagnoses[0]
    assert (d.id, d.initiator.line, d.initiator.rank, d.confidence) == ("python-exception-one-rank", 1, 0, 0.3)
    assert "at line 2 (rank 0), logged under line 1's message" in d.evidence_for[0]
    assert "only what was logged with it" in d.evidence_against[0]


def test_hydras_wrapper_above_a_cut_traceback_is_part_of_it(engine):
    # hydra-ecosystem/hydra#2989, the paste's first lines: Hydra prints its wrapper, then the job's traceback; the
    # excerpt stops in Hydra's own frames, before the exception line.
    paste = [
        "Error executing job with overrides: ['model.litmodule.loss=SIGLIP', 'datamodule.seed=4224422', 'launcher=icb']",
        "Traceback (most recent call last):",
        ' File "/ictstr01/home/icb/ghaith.mqawass/projs/phenoclip/experiments/pretrain/./experiment.py", line 85, in '
        "<module>",
        "  main()",
    ]
    d = engine.analyze_text("\n".join(paste)).diagnoses[0]
    assert (d.id, d.confidence) == ("python-exception-one-rank", 0.3)
    assert "cuts before its exception line" in d.evidence_for[0]
    # Alone, the wrapper says only that the job failed.
    assert engine.analyze_text(paste[0]).diagnoses[0].id == "unrecognised-failure"


PYNCCL = "/usr/local/lib/python3.12/dist-packages/vllm/distributed/device_communicators/pynccl_wrapper.py"
KV_UTILS = "/usr/local/lib/python3.12/dist-packages/vllm/v1/core/kv_cache_utils.py"


@pytest.mark.parametrize("lines, reference", [
    # gpustack/gpustack#3567, the paste's last lines: cut inside vLLM's NCCL_CHECK, whose only raise is NCCL's error.
    ([f'(EngineCore_DP0 pid=163)   File "{PYNCCL}", line 324, in ncclCommInitRank',
      '(EngineCore_DP0 pid=163)     self.NCCL_CHECK(self._funcs["ncclCommInitRank"](ctypes.byref(comm),',
      f'(EngineCore_DP0 pid=163)   File "{PYNCCL}", line 291, in NCCL_CHECK'], "nccl-error-without-detail"),
    # vllm-project/vllm#36861, the paste's last lines: cut inside the KV-cache memory check.
    ([f'(EngineCore_DP0 pid=38456) ERROR 03-11 11:58:53 [core.py:1100]   File "{KV_UTILS}", line 1572, in '
      'get_kv_cache_configs',
      "(EngineCore_DP0 pid=38456) ERROR 03-11 11:58:53 [core.py:1100]     _check_enough_kv_cache_memory(",
      f'(EngineCore_DP0 pid=38456) ERROR 03-11 11:58:53 [core.py:1100]   File "{KV_UTILS}", line 623, in '
      '_check_enough_kv_cache_memory',
      "(EngineCore_DP0 pid=38456) ERROR 03-11 11:58:53 [core.py:1100]     raise ValueError("], "vllm-kv-cache-too-small"),
])
def test_a_traceback_cut_inside_a_function_that_raises_one_error_is_that_error_as_a_possible_cause(engine, lines,
                                                                                                  reference):
    d = engine.analyze_text("\n".join(lines)).diagnoses[0]
    assert (d.id, d.confidence <= 0.35) == (reference, True)
    assert d.evidence_for[0].startswith("this line is not conclusive on its own")


def test_the_frame_of_nccl_check_does_not_outrank_the_warn_that_says_why(engine):
    # vllm-project/vllm#17176 (DP serve under uv), as pasted: the WARN naming the duplicate GPU,
    # then the engine core's traceback through NCCL_CHECK.
    paste = [
        "myhost:2292596:2292596 [0] init.cc:943 NCCL WARN Duplicate GPU detected : rank 0 and rank 1 both on CUDA "
        "device 53000",
        '(EngineCore_0 pid=2292596)     self.NCCL_CHECK(self._funcs["ncclCommInitRank"](ctypes.byref(comm),',
        '(EngineCore_0 pid=2292596)   File "/ephnvme/colin/code/prizetrain/.venv/lib/python3.12/site-packages/vllm/'
        'distributed/device_communicators/pynccl_wrapper.py", line 256, in NCCL_CHECK',
    ]
    assert engine.analyze_text("\n".join(paste)).diagnoses[0].id == "duplicate-gpu"


def test_a_paste_from_the_middle_of_a_traceback_is_a_failure_not_nothing(engine):
    # vllm-project/vllm#15598, as pasted: frames only, the header above the excerpt and the exception below it.
    paste = [
        "(RayWorkerWrapper pid=206994, ip=192.168.10.25) ERROR 03-27 10:29:13 [worker_base.py:620]   File "
        "\"/root/anaconda3/envs/vllm/lib/python3.12/site-packages/vllm/compilation/decorators.py\", line 172, in __call__",
        "(RayWorkerWrapper pid=206994, ip=192.168.10.25) ERROR 03-27 10:29:13 [worker_base.py:620]     return "
        "self.forward(*args, **kwargs)",
        "(RayWorkerWrapper pid=206994, ip=192.168.10.25) ERROR 03-27 10:29:13 [worker_base.py:620]   File "
        "\"/root/anaconda3/envs/vllm/lib/python3.12/site-packages/vllm/model_executor/models/deepseek_v2.py\", line "
        "646, in forward",
    ]
    report = engine.analyze_text("\n".join(paste))
    # vLLM's logger prefixes each line of the traceback with ERROR: the lines are still the traceback's, cut on both
    # sides, not error lines of their own.
    assert report.failed and report.diagnoses[0].id == "python-exception-one-rank"
    assert report.diagnoses[0].initiator.line == 1 and report.diagnoses[0].confidence == 0.3


def test_an_exception_behind_a_worker_tag_and_logger_stamp_is_recognised(engine):
    # snowflakedb/ArcticInference#175, as pasted (three TP workers' tracebacks interleaved; rank 0 raised).
    paste = [
        "(VllmWorker rank=1 pid=105) ERROR 09-09 02:24:28 [multiproc_executor.py:522]            ^^^^^^^^^^^^^^^^^^^^^",
        "(VllmWorker rank=0 pid=104) ERROR 09-09 02:24:28 [multiproc_executor.py:522] ValueError: output tensor size "
        "must be equal to world_size times input tensor size",
    ]
    top = engine.analyze_text("\n".join(paste)).diagnoses[0]
    assert (top.id, top.initiator.rank, top.initiator.line) == ("python-exception-one-rank", 0, 2)


def test_the_launchers_teardown_alone_is_its_consequence_not_an_unrecognised_traceback(engine):
    # OEvortex/unsloth#6, as pasted: torchrun's agent reports local rank 0 failed and stops the others; its own
    # traceback (ChildFailedError, cut before the exception line) follows.
    paste = [
        "W0801 12:06:43.813000 18684 torch/distributed/elastic/multiprocessing/api.py:900] Sending process 18759 "
        "closing signal SIGTERM",
        "E0801 12:06:44.742000 18684 torch/distributed/elastic/multiprocessing/api.py:874] failed (exitcode: 1) "
        "local_rank: 0 (pid: 18758) of binary: /home/ubuntu/pythonn3.11/bin/python3",
        "Traceback (most recent call last):",
        "  File \"/home/ubuntu/pythonn3.11/bin/torchrun\", line 10, in <module>",
        "    sys.exit(main())",
    ]
    top = engine.analyze_text("\n".join(paste)).diagnoses[0]
    assert (top.id, top.initiator.rank) == ("torchelastic-child-failed", 0)
    assert any("does not reach the cause" in e for e in top.evidence_against)


def test_torchruns_report_in_pythons_logging_format_is_torchruns_not_an_unrecognised_error_line(engine):
    # yangjianxin1/Firefly#221, as pasted: torch 1.x/2.0 log the agent's report through Python's logging
    # ("ERROR:name:message"), which the catch-all for logged errors also reads; the ChildFailedError traceback under
    # it is cut before its exception line.
    paste = [
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 1 (pid: 2589) of binary: "
        "/home/powerop/work/conda/envs/firefly/bin/python",
        "Traceback (most recent call last):",
        "  File \"/home/powerop/work/conda/envs/firefly/bin/torchrun\", line 8, in <module>",
        "    sys.exit(main())",
    ]
    top = engine.analyze_text("\n".join(paste)).diagnoses[0]
    assert (top.id, top.initiator.rank, top.initiator.line) == ("torchelastic-child-failed", 1, 1)
    assert any("does not reach the cause" in e for e in top.evidence_against)
    assert top.unexplained == ()


def test_the_reason_after_last_error_outranks_nccls_bare_result_code(engine):
    # NVIDIA/nccl#1514, as pasted: NCCL 2.14's internal error, whose reason is a peer that closed the socket.
    paste = [
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, "
        "internal error, NCCL version 2.14.3",
        "ncclInternalError: Internal check failed.",
        "Last error:",
        "Net : Connection closed by remote peer user<50260>",
    ]
    ids = [d.id for d in engine.analyze_text("\n".join(paste)).diagnoses]
    assert ids[0] == "peer-connection-lost" and "nccl-error-without-detail" in ids


def test_the_legacy_launchers_called_process_error_is_the_launcher_not_a_python_exception(engine):
    # Z-Zheng/FarSeg#1, the whole issue body: torch.distributed.launch (before 1.9) reporting a failed worker.
    line = ("subprocess.CalledProcessError: Command '['/home/ps/anaconda3/envs/farseg/bin/python', '-u', "
            "'apex_train.py', '--local_rank=1', '--config_path=configs.isaid.farseg50', "
            "'--model_dir=./log/isaid_segm/farseg50', '--opt_level=O']' returned non-zero exit status 1.")
    assert engine.analyze_text(line).diagnoses[0].id == "deepspeed-launcher-child-failed"


def test_a_vllm_workers_oom_gets_vllm_advice_and_a_training_oom_keeps_training_advice(engine):
    # vllm-project/vllm#14095, as pasted (the line is cut at the paste's edge here only by length).
    vllm = ("(VllmWorkerProcess pid=195295) ERROR 03-02 19:49:43 [multiproc_worker_utils.py:242] "
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 2 has a total capacity of "
            "14.62 GiB of which 3.31 MiB is free.")
    top = engine.analyze_text(vllm).diagnoses[0]
    assert (top.id, top.fix_framework) == ("cuda-oom", "vllm")
    assert any("--gpu-memory-utilization" in f for f in top.fix) and not any("checkpointing" in f for f in top.fix)
    assert top.to_json()["fix_framework"] == "vllm"
    # deepspeedai/DeepSpeedExamples#279: the same failure in a training job keeps the general advice.
    training = ("OutOfMemoryError: CUDA out of memory. Tried to allocate 786.00 MiB (GPU 0; 39.56 GiB total capacity; "
                "38.49 GiB already allocated; 96.56 MiB free; 38.78 GiB reserved in total by PyTorch)")
    top = engine.analyze_text(training).diagnoses[0]
    assert (top.id, top.fix_framework) == ("cuda-oom", None) and top.fix == top.reference.fix


def test_an_amrex_codes_gpu_oom_gets_amrex_advice(engine):
    # BLAST-WarpX/warpx#5366: AMReX's arena out of device memory, behind amrex::Abort.
    top = engine.analyze_text("amrex::Abort::1::Out of gpu memory. Free: 2293760 Asked: 8388608 !!!").diagnoses[0]
    assert (top.id, top.fix_framework) == ("cuda-oom", "amrex")
    assert any("amrex.the_arena_init_size" in f for f in top.fix) and not any("ZeRO" in f for f in top.fix)


def test_sglangs_kv_cache_refusal_gets_sglang_advice(engine):
    # sgl-project/sglang#4330: the weights left no room for the KV-cache pool.
    top = engine.analyze_text("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.").diagnoses[0]
    assert (top.id, top.fix_framework) == ("vllm-kv-cache-too-small", "sglang")
    assert any("--mem-fraction-static" in f for f in top.fix) and not any("--gpu-memory-utilization" in f for f in top.fix)


def test_tgis_warm_up_refusal_gets_tgi_advice(engine):
    # predibase/lorax#354 (a fork of TGI), as pasted: the warm-up batch does not fit; the launcher's flag is the fix.
    lines = [">RuntimeError: Not enough memory to handle 1024 prefill tokens. You need to decrease "
             "`--max-batch-prefill-tokens`",
             "2024-03-20T07:57:45.050465Z ERROR warmup{max_input_length=1024 max_prefill_tokens=1024 "
             "max_total_tokens=2048}:warmup: lorax_client: router/client/src/lib.rs:34: Server error: Not enough memory "
             "to handle 1024 prefill tokens. You need to decrease `--max-batch-prefill-tokens`",
             'Error: Warmup(Generation("Not enough memory to handle 1024 prefill tokens. You need to decrease '
             '`--max-batch-prefill-tokens`"))',
             "2024-03-20T07:57:45.117908Z ERROR lorax_launcher: Webserver Crashed",
             "2024-03-20T07:57:45.117934Z  INFO lorax_launcher: Shutting down shards"]
    top = engine.analyze_text("\n".join(lines)).diagnoses[0]
    assert (top.id, top.fix_framework, top.initiator.line) == ("cuda-oom", "tgi", 1)
    assert any("--max-batch-prefill-tokens" in f for f in top.fix) and not any("ZeRO" in f for f in top.fix)


def test_frameworks_are_recognised_by_their_tags_and_paths():
    import re

    from firstfault.context import Source
    from firstfault.frameworks import frameworks_in
    from firstfault.matcher import Event
    from firstfault.model import Pattern

    def event(text: str, emitter: str = "pytorch") -> Event:
        pattern = Pattern("p", ("x",), re.compile("x"), "cause", emitter)
        return Event(pattern, 0, "x", 1, 0, 1, text, Source(), None, "wall", False, {}, 1)

    # DeepSpeed's launcher (the library's example from deepspeed-launcher-child-failed)
    ds = ("[2023-07-10 04:26:35,999] [ERROR] [launch.py:324:sigkill_handler] ['/global/D1/homes/sushant/sushanta/venv/"
          "bin/python3.10', '-u', 'trainCLM.py', '--local_rank=1', '--deepspeed', '/home/sushant/D1/sushanta/try/"
          "nepaligpt/clm/config/deepspeed_config.json'] exits with return code = -11")
    assert frameworks_in([event(ds)]) == {"deepspeed"}
    assert frameworks_in([event("(VllmWorker rank=0 pid=2480291) Traceback (most recent call last):")]) == {"vllm"}
    assert frameworks_in([event("anything", emitter="vllm")]) == {"vllm"}
    assert frameworks_in([event("[rank0]: Traceback (most recent call last):")]) == set()
    # Ascend: CANN's error codes as vllm-project/vllm-ascend#486 and vllm-project/afd-plugin#229 print them;
    # a glog time stamp (torchelastic's, from the library's host-oom-kill examples) is no CANN code
    assert frameworks_in([event("Communication_Error_Get_Socket(EI0006)")]) == {"ascend"}
    assert frameworks_in([event("[rank1]: EI0006: [PID: 1292363] 2025-04-08-18:07:20.444.436 Getting socket times "
                                "out.")]) == {"ascend"}
    assert frameworks_in([event("E1202 18:27:51.827000 2390 torch/distributed/elastic/multiprocessing/api.py:1002] "
                                "failed (exitcode: -9) local_rank: 2 (pid: 2395) of binary: /usr/bin/python")]) == set()


def test_a_collective_timeout_on_ascend_gets_hccl_advice(engine):
    top = engine.analyze_text("Communication_Error_Get_Socket(EI0006)").diagnoses[0]
    assert (top.id, top.fix_framework) == ("collective-timeout", "ascend")
    assert any("HCCL_CONNECT_TIMEOUT" in f for f in top.fix)


def test_a_wrapped_exception_message_is_read_with_its_next_line(engine):
    # aws-samples/aws-do-eks#51, as pasted: gloo's enforce failure puts its reason on the line after the
    # RuntimeError; the specific reason, not the bare exception class, is the verdict.
    paste = ["RuntimeError: [enforce fail at .../gloo/transport/tcp/device.cc:84]",
             "  ifa != nullptr. Unable to find address for: ^lo"]
    top = engine.analyze_text("\n".join(paste)).diagnoses[0]
    assert top.id == "wrong-socket-ifname"


def test_an_indented_error_field_of_a_banner_is_no_error_line(engine):
    # KhiopsML/khiops#307: Open MPI's help banner for a libfabric call it then falls back from; the command goes on
    # and prints its version.
    banner = ["Open MPI failed an OFI Libfabric library call (fi_endpoint).  This is highly",
              "unusual; your job may behave unpredictably (and/or abort) after this.",
              "",
              "  Local host: ...",
              "  Location: mtl_ofi_component.c:513",
              "  Error: Invalid argument (22)",
              "--------------------------------------------------------------------------",
              "Khiops 10.2.2-b.3"]
    assert engine.analyze_text("\n".join(banner)).diagnoses == ()
    # At the start of a line it is an error line (text-generation-inference's launcher, from the library's examples).
    assert [d.id for d in engine.analyze_text("Error: ShardCannotStart").diagnoses] == [UNRECOGNISED]


def test_gits_complaint_about_a_missing_repository_is_no_error_line(engine):
    # open-mmlab/mmgeneration#206, as pasted: the training code stamps its log with the git hash, git fails, training
    # goes on.
    log = ["2022-01-06 23:05:39,304 - mmgen - INFO - Set random seed to 2021, deterministic: False",
           "fatal: not a git repository (or any parent up to mount point /home/ma-user)",
           "Stopping at filesystem boundary (GIT_DISCOVERY_ACROSS_FILESYSTEM not set).",
           "2022-01-06 23:08:41,239 - mmgen - INFO - FID: Adopt Inception in pytorch style"]
    report = engine.analyze_text("\n".join(log))
    assert report.diagnoses == () and not report.failed


def test_an_error_level_glog_line_is_an_error_line_but_not_tensorflows_start_up_noise(engine):
    # XLA on GPU (EnzymeAD/Enzyme-JAX#623): abseil's E-level prefix with seconds since the epoch.
    xla = ("E0000 00:00:1743713172.513857  698835 pjrt_stream_executor_client.cc:3072] Execution of replica 0 failed: "
           "DEADLINE_EXCEEDED: GetKeyValue() timed out with key: devices=[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,"
           "18,19,20,21,22,23,24,25,26,27,28,29]; stream=0")
    assert engine.analyze_text(xla).diagnoses
    # TensorFlow 2.15+ start-up, healthy (bmaltais/kohya_ss#3320, openxla/xla#20803).
    noise = ["E0000 00:00:1751448150.986970   10148 cuda_dnn.cc:8579] Unable to register cuDNN factory: Attempting to "
             "register factory for plugin cuDNN when one has already been registered",
             "2023-10-09 13:36:23.355674: E tensorflow/compiler/xla/stream_executor/cuda/cuda_fft.cc:609] Unable to "
             "register cuFFT factory: Attempting to register factory for plugin cuFFT when one has already been "
             "registered"]
    assert engine.analyze_text("\n".join(noise)).diagnoses == ()


def test_an_error_level_glog_line_from_a_cpp_file_is_read_in_a_paste(engine):
    # kvcache-ai/Mooncake#2177 and PR #1067 (glog 0.7's year in the prefix), each pasted alone.
    for line in ["E0521 16:22:21.694042   162 transfer_metadata.cpp:877] Local segment descriptor not found",
                 "E20251112 17:02:55.861567 33158 tcp_transport.cpp:480] TcpTransport::startTransfer encountered an "
                 "ASIO exception. Slice details - source_addr: 0x12d11ac40000, length: 32768, opcode: 0, target_id: "
                 "1. Exception: resolve: Host not found (authoritative)"]:
        top = engine.analyze_text(line).diagnoses[0]
        assert (top.id, top.initiator.line) == (UNRECOGNISED, 1)
    # The large logs' scan does not look for ".cpp:" at all (every c10 warning line holds it).
    assert ".cpp:" not in engine.matcher.literals()


def test_a_paste_only_catch_all_yields_to_a_specific_reading_of_its_line(engine):
    # Mooncake's registration failure under SGLang (sgl-project/sglang#6894) is known; the error-level prefix adds nothing.
    line = "E0605 10:48:27.885119 10136 rdma_context.cpp:203] Failed to register memory 0x7b375b400000: Invalid argument [22]"
    report = engine.analyze_text(line)
    assert report.diagnoses[0].id == "ib-gpu-memory-registration-failed"
    assert [e.pattern.id for e in report.events if e.pattern.id == "glog-error-line-cpp"] == []


def test_a_cuda_check_that_names_its_source_file_is_read_by_what_the_file_is(engine):
    # FlashAttention's CHECK_CUDA prints file, line and the CUDA error, then exits; in xformers' bundled FlashAttention-3
    # kernels on an RTX 50xx that names the cause (Haoming02/sd-webui-forge-classic#115, as pasted).
    paste = ("CUDA error (C:/a/xformers/xformers/third_party/flash-attention/hopper\\flash_fwd_launch_template.h:188): "
             "invalid argument\nPress any key to continue . . .")
    report = engine.analyze_text(paste)
    assert report.diagnoses[0].id == "flash-attn-unsupported-gpu" and report.diagnoses[0].initiator.line == 1
    assert any("uninstall xformers" in f for f in report.diagnoses[0].fix)


def test_an_exception_python_ignored_and_went_on_from_is_no_failure(engine):
    # rapidsai/cugraph#4182: a run that finished, then CPython's unraisable-exception reports at exit.
    ignored = ["0.04763150215148926",
               "Exception ignored in: <function Future.__del__ at 0x7f1d1c7e9e50>",
               "Traceback (most recent call last):",
               '  File "/root/miniconda3/envs/cugraph/lib/python3.9/site-packages/distributed/client.py", line 511, in '
               "__del__",
               "TypeError: 'NoneType' object is not callable"]
    assert engine.analyze_text("\n".join(ignored)).diagnoses == ()
    # An exception raised after the ignored one's traceback ended is a failure again (the library's example line).
    d = engine.analyze_text("\n".join([*ignored, "KeyError: 'input_ids'"])).diagnoses[0]
    assert (d.id, d.initiator.line) == ("python-exception-one-rank", 6)
    # The ignored exception may be a bare class name (multiprocessing's EOFError at exit, LucaOne/LucaOne#29).
    assert engine.analyze_text("\n".join([*ignored[:-1], "EOFError"])).diagnoses == ()


def test_an_unrecognised_first_failure_takes_its_rank_from_the_launchers_report_beside_it(engine):
    # yangjianxin1/Firefly-LLaMA2-Chinese#9, the paste's first lines: bitsandbytes' error, then torchrun's report of
    # the worker that failed, by local rank on a single node.
    paste = [
        "Error operation not supported at line 351 in file /home/tim/git/bitsandbytes/csrc/pythonInterface.c",
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 31779) of binary: "
        "/root/miniconda3/envs/chatglm_ft/bin/python",
    ]
    top = engine.analyze_text("\n".join(paste)).diagnoses[0]
    assert (top.id, top.initiator.rank) == ("unrecognised-failure", 0)


def test_cuda_shutting_down_at_exit_is_no_failure_line(engine):
    # NVIDIA/DIGITS#1145: Caffe's CUDA check at process exit after a training that finished (error 29).
    line = "ERROR: Check failed: error == cudaSuccess (29 vs. 0) driver shutting down"
    assert engine.analyze_text(line).diagnoses == ()
    # hpcaitech/ColossalAI#1427, as pasted: the same at exit inside a C++ terminate, which still says the process
    # aborted.
    lines = ["terminate called after throwing an instance of \u2018c10::CUDAError\u2019",
             "  what():  CUDA error: driver shutting down"]
    assert engine.analyze_text("\n".join(lines)).diagnoses[0].id == UNRECOGNISED


# sgl-project/sglang#2561, as pasted: the end of an earlier backtrace, then the store client's error and its retry
# warning, whose message carries the C++ backtrace of the exception it caught; the paste ends in that backtrace.
STORE_RETRY_WITH_BACKTRACE = [
    "frame #56: __libc_start_main + 0x85 (0x7f6ce331c305 in /lib/x86_64-linux-gnu/libc.so.6)",
    "frame #57: _start + 0x21 (0x6297b1 in sglang::scheduler)",
    "",
    "[E1226 15:44:25.497183572 socket.cpp:1011] [c10d] The client socket has timed out after 600000ms while trying to "
    "connect to (sws-8h100grid-05, 8000).",
    "[W1226 15:44:25.497497753 TCPStore.cpp:358] [c10d] TCP client failed to connect/validate to host "
    "sws-8h100grid-05:8000 - retrying (try=0, timeout=600000ms, delay=82879ms): The client socket has timed out after "
    "600000ms while trying to connect to (sws-8h100grid-05, 8000).",
    "Exception raised from throwTimeoutError at ../torch/csrc/distributed/c10d/socket.cpp:1013 (most recent call "
    "first):",
    "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f68c796c446 in "
    "/NS/venvs/work/afkhan/slurm_sglang_env/lib/python3.11/site-packages/torch/lib/libc10.so)",
    "frame #1: <unknown function> + 0x15e04c6 (0x7f68b273c4c6 in "
    "/NS/venvs/work/afkhan/slurm_sglang_env/lib/python3.11/site-packages/torch/lib/libtorch_cpu.so)",
    "frame #2: <unknown function> + 0x6029d95 (0x7f68b7185d95 in "
    "/NS/venvs/work/afkhan/slurm_sglang_env/lib/python3.11/site-packages/torch/lib/libtorch_cpu.so)",
]


@pytest.mark.parametrize("lines, said, last", [
    (STORE_RETRY_WITH_BACKTRACE, 2, 5),
    (STORE_RETRY_WITH_BACKTRACE[3:5], 2, 2),
    (STORE_RETRY_WITH_BACKTRACE[5:], 0, 4),
])
def test_a_pastes_extent_leaves_out_blank_lines_and_cpp_backtraces(lines, said, last):
    extent = Extent.of_paste(lines, 1, len(lines))
    assert (extent.lines, extent.said, extent.last) == (len(lines), said, last)


def test_a_warning_whose_cpp_backtrace_ends_the_paste_ends_it(engine):
    top = engine.analyze_text("\n".join(STORE_RETRY_WITH_BACKTRACE)).diagnoses[0]
    assert (top.id, top.possible, top.initiator.line) == ("rendezvous-store-unreachable", True, 5)
    assert any("excerpt (2 lines that say something" in e for e in top.evidence_for)
    # the same retry with the run going on after it (Megatron-LM's tutorial log, tests/fixtures/clean) is no verdict
    going_on = [
        " [2025-04-13 23:41:12] iteration       10/    1000 | consumed samples:          160 | elapsed time per "
        "iteration (ms): 1147.6 | learning rate: 0.000000E+00 | global batch size:    16 | loss scale: 8388608.0",
        "[Rank 0] (after 10 iterations) memory (MB) | allocated: 1464.33154296875 | max allocated: 1464.3408203125 | "
        "reserved: 1576.0 | max reserved: 1576.0",
        "Setting rerun_state_machine.current_iteration to 0...",
    ]
    assert engine.analyze_text("\n".join(STORE_RETRY_WITH_BACKTRACE + going_on)).diagnoses == ()


def test_a_go_programs_fatal_line_is_a_failure_whatever_follows_it(engine):
    # ome-projects/ome#140, as pasted: zap's Fatal logs, prints its stack and exits; the stack's lines come after it.
    log = ["2025-07-07T02:34:31.680Z\tINFO\tmodel-agent/main.go:175\tInitialized Prometheus metrics",
           "2025-07-07T02:34:31.685Z\tFATAL\tmodel-agent/main.go:333\tFailed to initialize components: failed to "
           "create scout: couldn't find shape  in the shape mapping",
           "main.runCommand",
           "\t/workspace/cmd/model-agent/main.go:333"]
    top = engine.analyze_text("\n".join(log)).diagnoses[0]
    assert (top.id, top.initiator.line) == (UNRECOGNISED, 2)


def test_a_pytest_traceback_cut_before_its_exception_still_says_a_failure_was_printed(engine):
    # deepspeedai/DeepSpeed#6656, the CI log's first lines: pytest's short frames ("<path>:<line>: in <function>").
    log = ["[2024-10-23T03:04:17.778Z]     import deepspeed",
           "[2024-10-23T03:04:17.778Z] /home/users/xxx/.local/lib/python3.10/site-packages/deepspeed/__init__.py:25: "
           "in <module>",
           "[2024-10-23T03:04:17.779Z]     from . import ops"]
    report = engine.analyze_text("\n".join(log))
    assert report.failed and report.diagnoses[0].initiator.line == 2
