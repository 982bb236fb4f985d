import pytest

from firstfault.context import (Source, flattened_entry_source, message_end, message_start, parse_line, parse_time,
                                source_from_path, summary_entry_source)
from firstfault.matcher import starts_a_line


@pytest.mark.parametrize("line, source", [
    ("[rank3]: RuntimeError: boom", Source(rank=3)),
    # Prefixes launchers and engines print (issue threads: vllm#17527-style v1 workers, sglang schedulers,
    # Open MPI --tag-output, Horovod's launcher).
    ("(VllmWorker rank=0 pid=2480291) Traceback (most recent call last):", Source(rank=0, pid=2480291)),
    ("(VllmWorker TP1 pid=22110) ERROR 11-14 22:48:02 [multiproc_executor.py:596] File", Source(rank=1, pid=22110)),
    ("[2025-01-24 04:52:54 TP1] Scheduler hit an exception: Traceback (most recent call last):", Source(rank=1)),
    # SGLang with data and expert parallelism: the DP and EP tags around the TP rank (sgl-project/sglang#6624, #9582)
    ("[2025-05-26 07:48:17 DP1 TP2] Scheduler hit an exception: Traceback (most recent call last):", Source(rank=2)),
    ("[2025-08-24 20:28:03 DP0 TP0 EP0] TpModelWorkerClient hit an exception: Traceback (most recent call last):",
     Source(rank=0)),
    ("[1,3]<stderr>:RuntimeError: boom", Source(rank=3)),
    # TensorRT-LLM's logger (ai-dynamo/dynamo#4299), SkyPilot's node prefix (skypilot-org/skypilot#3217), OLMo's
    # logger (allenai/OLMo#552)
    ("[11/17/2025-14:46:33] [TRT-LLM] [RANK 0] [E] Failed to initialize executor on rank 0: Failed, NCCL error "
     "../tensorrt_llm/common/opUtils.cpp:125 'invalid usage (run with NCCL_DEBUG=WARN for details)'", Source(rank=0)),
    ("(worker1, rank=1, pid=20075, ip=10.164.15.193) 10.164.15.192,10.164.15.193", Source(rank=1, pid=20075)),
    ("[2024-04-18 19:10:41] CRITICAL [olmo.util:158, rank=0] Uncaught OLMoThreadError: generator thread data thread 3 "
     "failed", Source(rank=0)),
    ("2023-12-16T09:36:24.652173Z  INFO shard-manager: text_generation_launcher: Shard terminated rank=1", Source(rank=1)),
    ("[3]<stderr>:python: can't open file '/home/projects/fujitsu_challenge/template.py': [Errno 2", Source(rank=3)),
    ("[default5]:[W1202 16:11:27.667376956 socket.cpp:1028] x", Source(local_rank=5)),
    # the bracket cut off where the poster's excerpt starts mid-line (pytorch/torchtitan#864)
    ("rank5]: ValueError: For row-wise scaling, the leading dims of A_scale must match the leading dims of A",
     Source(rank=5)),
    ("3: Traceback (most recent call last):", Source(rank=3)),
    # torchrun under TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE="[${rank}]:" (GoogleCloudPlatform/container-engine-accelerators#414)
    ("[5]:ncclInternalError: Internal check failed.", Source(rank=5)),
    ("[1,2]<stdout>:smc-gpu-03:29880:30398 [0] init.cc:497 NCCL WARN Duplicate GPU detected",
     Source(rank=2, host="smc-gpu-03", pid=29880, device=0)),
    ("node-2:5776:5902 [0] transport/net_ib.cc:1296 NCCL WARN NET/IB : Got completion",
     Source(host="node-2", pid=5776, device=0)),
    ("[2026-03-03 12:11:38] tpgds-aihub0007:185303:186751 [1] transport/net_ib.cc:2453 NCCL WARN x",
     Source(host="tpgds-aihub0007", pid=185303, device=1)),
    ("[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout", Source(rank=1)),
    ("[rank1]:[E626 06:24:44.906457629 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 1] x",
     Source(rank=1)),
    ("E1202 16:08:33.840000 16309 torch/distributed/elastic/multiprocessing/api.py:1002] failed",
     Source(pid=16309)),
    ("(RayWorkerVllm pid=7046) [2024-04-16 00:03:25,080 E 7046 7269] logging.cc:361: x", Source(pid=7046)),
    ("Mar 10 01:33:03 gpu-node-7 kernel: NVRM: Xid (PCI:0000:3b:00): 79", Source(host="gpu-node-7")),
    # vllm-project/vllm#34259 (expert parallelism), Lightning-AI/pytorch-lightning#20542 (rank_prefixed_message)
    ("(Worker_TP0_EP0 pid=1760334) ERROR 02-10 17:01:40 [multiproc_executor.py:863] RuntimeError: Triton Error",
     Source(rank=0, pid=1760334)),
    # vllm-project/vllm#27440: DP 4 x TP 2 with expert parallelism, the EP rank counts across both
    ('(Worker_DP3_TP0_EP6 pid=11528) ERROR 10-23 04:29:35 [multiproc_executor.py:671]     return self.runnable(*args, '
     '**kwargs)', Source(rank=6, pid=11528)),
    ("[rank: 0] Received SIGTERM: 15", Source(rank=0)),
    # NVIDIA-Merlin/HugeCTR#287 (3.3) and #429 (4.x)
    ("[HUGECTR][08:46:21][WARNING][RANK0]: The model name is not specified when creating the solver.", Source(rank=0)),
    ("[HCTR][06:21:10.185][ERROR][RK0][main]: Runtime error: invalid argument", Source(rank=0)),
    # openucx/ucx#9383: Open MPI's "[host:pid]" on its error banners, and UCX's "[seconds] [host:pid:thread]"
    ("[histamine0:1224050] pml_ucx.c:477  Error: Failed to resolve UCX endpoint for rank 1",
     Source(host="histamine0", pid=1224050)),
    ("[1695332443.361791] [histamine0:1224050:0]            sock.c:323  UCX  ERROR   connect(fd=42, "
     "dest_addr=172.17.0.1:54351) failed: Connection refused", Source(host="histamine0", pid=1224050)),
    # NVIDIA-NeMo/RL#834: a Ray worker's own name carries its training rank
    ("(MegatronPolicyWorker[rank=0] pid=4182) [f676f732498b:4182 :0:4182] Caught signal 11 (Segmentation fault: "
     "address not mapped to object at address 0x3121dc10)", Source(rank=0, pid=4182)),
    # mosaicml/llm-foundry#1501: LLM Foundry's logging format names the global rank and the pid after the time
    ("2024-08-30 11:06:12,920: rank0[208865][MainThread]: INFO: llmfoundry.command_utils.train: Building trainer...",
     Source(rank=0)),
    ("plain line", Source()),
], ids=["torchrun-rank", "vllm-v1-rank", "vllm-v1-tp", "sglang-tp", "sglang-dp-tp", "sglang-dp-tp-ep", "openmpi-tag",
        "trtllm-rank", "skypilot-rank", "olmo-rank", "tgi-rank-field", "horovod-tag",
        "torchrun-tee-local-rank", "torchrun-rank-cut", "srun-label", "torchrun-rank-template", "mpirun-and-nccl", "nccl",
        "nccl-timestamped", "watchdog-rank", "pg-rank", "elastic-glog-pid", "ray-pid", "syslog-host", "vllm-v1-tp-ep",
        "vllm-v1-dp-tp-ep", "lightning-rank", "hugectr-3", "hugectr-4", "openmpi-host-pid", "ucx-host-pid",
        "nemo-rl-worker", "llm-foundry-rank", "none"])
def test_line_sources(line, source):
    assert parse_line(line).source_at(len(line) - 1) == source
    if line.rsplit(" ", 1)[-1].startswith("rank="):  # a trailing field names the rank of the whole line
        assert parse_line(line).source_at(0) == source


def test_glued_lines_from_two_ranks_keep_their_own_source():
    line = "[rank3]: step 1 ok[rank2]: RuntimeError: boom"
    ctx = parse_line(line)
    assert ctx.source_at(line.index("step")) == Source(rank=3)
    assert ctx.source_at(line.index("RuntimeError")) == Source(rank=2)


@pytest.mark.parametrize("line, clock, order_key", [
    ("[E1202 16:11:27.667376956 socket.cpp:1028] x", "wall", (12, 2, 16, 11, 27.667376956)),
    ("E1202 16:08:33.840000 16309 api.py:1002] x", "wall", (12, 2, 16, 8, 33.84)),
    ("[2024-05-13 10:11:12,345] [INFO] [logging.py:96:log_dist] [Rank 0] x", "wall", (5, 13, 10, 11, 12.345)),
    ("  time      : 2026-12-02_18:27:09", "wall", (12, 2, 18, 27, 9.0)),
    ("INFO 02-22 08:52:08 __init__.py:190] Automatically detected platform cuda.", "wall", (2, 22, 8, 52, 8.0)),
    ("Mar 10 01:33:03 cpu-6-2 kernel: Out of memory", "wall", (3, 10, 1, 33, 3.0)),
    # Real lines from January to September: PyTorch's logger writes the month without a leading zero.
    ("[rank7]:[E626 05:14:36.393067540 ProcessGroupNCCL.cpp:1743] [PG ID 0 PG GUID 0(default_pg) Rank 7] x",
     "wall", (6, 26, 5, 14, 36.393067540)),
    ("[rank0]:[E129 10:00:01.1 ProcessGroupNCCL.cpp:1484] x", "wall", (1, 29, 10, 0, 1.1)),
    ("I0626 05:14:36.393067 12345 glog.cc:1] x", "wall", (6, 26, 5, 14, 36.393067)),
], ids=["c10d-glog", "python-glog", "deepspeed", "elastic-summary", "vllm", "syslog", "c10d-one-digit-month",
        "c10d-january", "glog-zero-padded"])
def test_timestamps(line, clock, order_key):
    time, found_clock, _ = parse_time(line)
    mo, d, h, mi, s = order_key
    assert found_clock == clock
    assert time == pytest.approx(((mo * 31 + d) * 24 + h) * 3600 + mi * 60 + s)


def test_dmesg_time_is_its_own_clock():
    time, clock, _ = parse_time("[ 1843.308145] NVRM: Xid (PCI:0000:44:00): 79")
    assert (time, clock) == (1843.308145, "boot")


def test_summary_entry_source_reads_rank_host_and_root_cause_heading():
    above = ["  exitcode  : 1 (pid: 2237) ", "  rank      : 1 (local_rank: 1)", "  host      : node7",
             "  time      : 2026-12-02_18:27:09", "[0]:", "Root Cause (first observed failure):"]
    assert summary_entry_source(above) == (Source(rank=1, local_rank=1, host="node7"), True)
    assert summary_entry_source(above[:5] + ["Failures:"]) == (Source(rank=1, local_rank=1, host="node7"), False)


def test_summary_entry_under_a_launchers_label_reads_the_same():
    # DeepSpeed's pdsh runner and `docker compose logs` put a label before every line the node prints
    above = ["  exitcode  : 1 (pid: 2237) ", "  rank      : 1 (local_rank: 1)", "  host      : node7",
             "  time      : 2026-12-02_18:27:09", "[0]:", "Root Cause (first observed failure):"]
    for label in ("worker-1: ", "trainer-1  | "):
        assert summary_entry_source([label + line for line in above]) == (
            Source(rank=1, local_rank=1, host="node7"), True)


# Entries that lost their line breaks or alignment in a paste or a log console (AMVUR#2, litData#340).
@pytest.mark.parametrize("line, source", [
    ("  | 2024-08-23T22:22:58.879Z | [2]: time : 2024-08-23_22:22:58 host : algo-2 rank : 2 (local_rank: 2) exitcode "
     ": -6 (pid: 189) error_file: <N/A> traceback : Signal 6 (SIGABRT) received by PID 189",
     Source(rank=2, local_rank=2, host="algo-2")),
    ("rank2 (local rank: 2)exitcode: -9 (pid: 36071)error file: <N/A>", Source(rank=2, local_rank=2)),
    ("failed (exitcode: 1) local_rank: 1 (pid: 2237) of binary: /usr/bin/python", Source()),
])
def test_flattened_summary_entry_names_its_rank(line, source):
    assert flattened_entry_source(line) == source


def test_summary_field_under_a_flattened_rank_line_takes_its_rank():
    above = ["traceback : signal 9 (SIGKILL) received by PID 36071",
             "rank2 (local rank: 2)exitcode: -9 (pid: 36071)error file: <N/A>", "ding-X10DRG"]
    assert summary_entry_source(above) == (Source(rank=2, local_rank=2), False)


@pytest.mark.parametrize("path, source, attempt", [
    ("logs/rank3.log", Source(rank=3), None),
    ("logs/train_rank-12.out", Source(rank=12), None),
    ("slurm-4242/node007.out", Source(host="node007"), None),
    ("/tmp/nccl.gpu-a17.12345", Source(host="gpu-a17"), None),
    ("run/abc/attempt_1/5/stderr.log", Source(local_rank=5), 1),
    ("slurm-123456.out", Source(), None),
], ids=["rankN", "rank-dash", "node-name", "nccl-debug-file", "torchrun-log-dir", "slurm-job"])
def test_sources_from_file_names(path, source, attempt):
    assert source_from_path(path) == (source, attempt)


@pytest.mark.parametrize("line, message", [
    # snowflakedb/ArcticInference#175: vLLM v1 worker tag and logger stamp
    ("(VllmWorker rank=0 pid=104) ERROR 09-09 02:24:28 [multiproc_executor.py:522] ValueError: output tensor size "
     "must be equal to world_size times input tensor size", "ValueError: output tensor size"),
    # NVIDIA/nccl#1247: vLLM v0 on Ray, the logger stamp without its opening bracket
    ("(RayWorkerVllm pid=7602) ERROR 04-07 00:57:46 ray_utils.py:45] torch.distributed.DistBackendError: NCCL error",
     "torch.distributed.DistBackendError"),
    # OEvortex/unsloth#6: PyTorch's c10 logger (glog format)
    ("E0801 12:06:44.742000 18684 torch/distributed/elastic/multiprocessing/api.py:874] failed (exitcode: 1) "
     "local_rank: 0 (pid: 18758) of binary: /home/ubuntu/pythonn3.11/bin/python3", "failed (exitcode: 1)"),
    # sgl-project/sglang#5602: torchrun's --tee prefix, then the c10 logger
    ("[rank3]:[E421 04:13:43.426633564 ProcessGroupGloo.cpp:143] Rank 3 successfully reached monitoredBarrier",
     "Rank 3 successfully"),
    ("Traceback (most recent call last):", "Traceback"),
    ("rank5]: ValueError: For row-wise scaling, the leading dims of A_scale must match the leading dims of A",
     "ValueError: For row-wise"),
    # Lightning-AI/pytorch-lightning#20542: Lightning's rank prefix
    ("[rank: 0] Received SIGTERM: 15", "Received SIGTERM"),
    # A paste's Markdown around the line: bold (CoinCheung/BiSeNet#70), a quote (triton-inference-server/server#5681)
    ("**RuntimeError: Default process group has not been initialized, please make sure to call init_process_group.**",
     "RuntimeError: Default"),
    ("> tritonclient.utils.InferenceServerException: Failed to increase the shared memory pool size for key "
     "'triton_python_backend_shm_region_2' to 67108864 bytes.", "tritonclient.utils"),
    # Slurm's --label task number (pytorch/PiPPy#260), pdsh's host in DeepSpeed's multi-node runner
    # (hiyouga/LlamaFactory#2470, THUDM/GLM#173)
    ("14: RuntimeError: CUDA error: device-side assert triggered", "RuntimeError: CUDA error"),
    ("gpu004: Traceback (most recent call last):", "Traceback"),
    ("192.168.83.245: RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1191, unhandled "
     "system error, NCCL version 2.10.3", "RuntimeError: NCCL error"),
    # TorchX's local scheduler (facebookresearch/dlrm#256)
    ("dlrm_main/0 [0]:File fbgemm_gpu_py.so not found", "File fbgemm_gpu_py.so"),
    # Ray 1.x's worker tag without the actor's name (ray-project/ray#15388)
    ("(pid=329) TypeError: 'float' object cannot be interpreted as an integer", "TypeError"),
    # Ray's coloured task tag with the ESC bytes lost in the paste (huggingface/lighteval#841)
    ("[36m(run_inference_one_model pid=2816485)[0m ValueError: Current node has no GPU available.",
     "ValueError: Current node"),
    # CloudWatch's console pasted as a table (Lightning-AI/litData#340)
    ("  | 2024-08-23T22:22:58.880Z | ----------------------------------------------------", "-----"),
    # PyTorch's CircleCI step output, a month-day-time stamp on every line (pytorch/pytorch#30676)
    ("Dec 03 17:59:26 RuntimeError: Address already in use", "RuntimeError: Address"),
    # Jenkins' timestamper, the time alone (pytorch/pytorch#11364); SkyPilot's logger (skypilot-org/skypilot#7168)
    ("02:21:53 RuntimeError: Broken pipe", "RuntimeError: Broken pipe"),
    ("I 09-12 22:49:49 recovery_strategy.py:501] sky.exceptions.NoClusterLaunchedError: No cluster name found in the "
     "pool.", "sky.exceptions"),
    # pytest's explanation of a failed test (facebookresearch/fairscale#124)
    ("E       RuntimeError: baddbmm for CUDA tensors only supports floating-point types. Try converting the tensors "
     "with .float() at /private/home/", "RuntimeError: baddbmm"),
    # `docker compose logs`' service name (AbdBarho/stable-diffusion-webui-docker#420) and `docker service logs`' task
    # (horovod/horovod#3568)
    ("webui-docker-auto-1  | Traceback (most recent call last):", "Traceback"),
    ("microservice_distributedtraining.1.lclmxgm94n89@template-maquina-learning-1 | ray.exceptions.OwnerDiedError: "
     "Failed to retrieve object 0084dccab86986a08bfb38ae278b2ccc11f06e8e0100000002000000.", "ray.exceptions"),
    # torch.compile's compile id after PyTorch's logger prefix (pytorch/ao#1065), and a paste that starts inside that
    # prefix, at its file and line (deepspeedai/DeepSpeed#6719)
    ("[rank1]:E1012 00:28:45.382967 507 site-packages/torch/_inductor/select_algorithm.py:1322] [0/0] Exception out of "
     "resource: shared memory, Required: 163840, Hardware limit: 101376.", "Exception out of resource"),
    ("site-packages/torch/_subclasses/fake_tensor.py:2017] RuntimeError: Attempting to broadcast a dimension of length 0 "
     "at -1! Mismatching argument at index 1 had torch.Size([0]); but expected shape should be broadcastable to "
     "[100, 120]", "RuntimeError: Attempting"),
    # torchrun's log_line_prefix_template, the one its docs give (GoogleCloudPlatform/container-engine-accelerators#414)
    # and a host:rank one (huggingface/evaluate#481)
    ("[5]:torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, internal "
     "error - please report this issue to the NCCL developers, NCCL version 2.21.5", "torch.distributed.DistBackendError"),
    ("[node1:4]:ValueError: Couldn't acquire lock on /.hf_cache/metrics/accuracy/default/exp-16-rdv.lock from process 4.",
     "ValueError: Couldn't"),
    # horovodrun's stream tag without the rank (microsoft/XPretrain#34)
    ("<stderr>:ImportError: cannot import name 'CLIPTokenizerFast' from 'transformers' "
     "(/usr/local/lib/python3.7/dist-packages/transformers/__init__.py)", "ImportError: cannot"),
    # LLM Foundry's format after the time (mosaicml/llm-foundry#1501)
    ("2024-08-30 11:06:12,920: rank0[208865][MainThread]: INFO: llmfoundry.command_utils.train: Building trainer...",
     "INFO: llmfoundry"),
    # torch 1.9's error handler logs the worker's error record as JSON when no error file is set
    # (ultralytics/yolov5#12357): the exception line is the inner "message" value
    ('    "message": "RuntimeError: Address already in use",', "RuntimeError: Address already in use"),
    # a service's output through journalctl: time, host, program[pid] (Janrupf/stable-diffusion-webui-nix#9)
    ("Oct 04 15:02:41 llm sd-webui-forge-start[394]: RuntimeError: CUDA error: no kernel image is available for "
     "execution on the device", "RuntimeError: CUDA error"),
])
def test_message_start_skips_launcher_and_logger_prefixes(line, message):
    assert line[message_start(line):].startswith(message)


@pytest.mark.parametrize("line, message", [
    # `docker compose logs` puts the service name before the line as printed
    # (AbdBarho/stable-diffusion-webui-docker#162): a traceback's frame keeps its indentation, as without the label
    ('webui-docker-auto-1  |   File "/stable-diffusion-webui/repositories/stable-diffusion/../../webui.py", line 137, '
     'in <module>', '  File "/stable-diffusion-webui/'),
    # torchrun's rank prefix and the one space after it; the frame's own two spaces stay (meta-llama/llama-cookbook#949)
    ('[rank1]:   File "/Volume1/ocr/codes/finetuning_llama/finetuning2.py", line 8, in <module>', '  File "/Volume1/'),
])
def test_a_prefix_keeps_the_indentation_of_the_line_it_precedes(line, message):
    assert line[message_start(line):].startswith(message)


@pytest.mark.parametrize("line, message", [
    # The bold a paste put around the shell's report (InternLandMark/LandMark#61) and around an exception
    # (CoinCheung/BiSeNet#70): the message ends before the closing marker.
    ("**Killed**", "Killed"),
    ("**RuntimeError: Default process group has not been initialized, please make sure to call init_process_group.**",
     "RuntimeError: Default process group has not been initialized, please make sure to call init_process_group."),
    # No opening marker: a trailing one is part of the text.
    ("Killed**", "Killed**"),
])
def test_message_end_drops_the_closing_markdown_of_an_opened_wrapper(line, message):
    start = message_start(line)
    assert line[start:message_end(line, start)] == message


@pytest.mark.parametrize("line", [
    "RuntimeError: CUDA error: device-side assert triggered",
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275",
    "UserWarning: TypedStorage is deprecated.",
])
def test_an_exception_class_is_no_launcher_label(line):
    assert message_start(line) == 0


def test_a_pattern_anchored_at_the_message_reads_a_ci_stamped_line(engine):
    # pytorch/pytorch#30676: CircleCI's month-day-time stamp before PyTorch 1.x's bare TCPStore bind error.
    report = engine.analyze_text("Dec 03 17:59:26 RuntimeError: Address already in use\n")
    assert report.diagnoses[0].id == "port-in-use"


def test_a_pattern_that_reads_to_the_end_of_the_line_fits_a_bold_paste(engine):
    # InternLandMark/LandMark#61: the shell's report of a SIGKILL, put in bold by the poster.
    assert engine.analyze_text("**Killed**").diagnoses[0].id == "host-oom-kill"
    assert engine.analyze_text("Killed**").diagnoses == ()


@pytest.mark.parametrize("regex, anchored", [
    # cudnn-status-execution-failed: cuDNN's own error log is one branch of three
    (r"(?:(?i:cudnn error)|^[Ee]! +Error|XlaRuntimeError: [A-Z_]+): (?P<status>CUDNN_STATUS_EXECUTION_FAILED)", True),
    (r"(?:^\s*|\] +|\.\w+:\d+: )Check failed: (?P<message>\S.*)", True),  # glog-check-failed
    (r"^\s*(?P<signal>Aborted|Illegal instruction)", True),
    # carets that anchor nothing: a negated class, an escaped caret
    (r"(?<![^\s:])(?P<rank>\d+): \[", False),
    (r"Call to (?P<op>recv) from (?P<peer>[^\s<%\"]+)", False),
    (r"x\^y", False),
])
def test_a_regex_anchored_in_any_branch_is_tried_again_after_the_prefixes(regex, anchored):
    assert starts_a_line(regex) is anchored
