"""Stack dumps read as where each process stands (stackdumps.py). The py-spy frames are real dumps: a
Megatron-DeepSpeed rank in broadcast and its peers back in train() (bigscience's notes, quoted in
https://github.com/stas00/ml-engineering/blob/master/debug/torch-distributed-hanging-solutions.md), and a ZeRO-3 rank
in all_gather_coalesced (https://github.com/huggingface/accelerate/issues/3104); a paste of several is put together
the way people paste one dump per rank. The faulthandler dumps are pastes as posted."""

import pytest


IN_BROADCAST = [
    'Thread 835995 (active): "MainThread"',
    "    broadcast (torch/distributed/distributed_c10d.py:1191)",
    "    _aggregate_total_loss (deepspeed/runtime/pipe/engine.py:540)",
    "    train_batch (deepspeed/runtime/pipe/engine.py:330)",
    "    train_step (megatron/training.py:436)",
    "    train (megatron/training.py:851)",
    "    pretrain (megatron/training.py:187)",
    "    <module> (pretrain_gpt.py:239)",
]
IN_TRAIN = [
    'Thread 835990 (active): "MainThread"',
    "    train (megatron/training.py:915)",
    "    pretrain (megatron/training.py:187)",
    "    <module> (pretrain_gpt.py:239)",
]
IN_ALL_GATHER = [
    'Thread 3293 (active): "MainThread"',
    "    all_gather_coalesced (deepspeed/runtime/zero/partition_parameters.py:1254)",
    "    wrapped_fn (deepspeed/utils/nvtx.py:18)",
    "    __all_gather_params_ (deepspeed/runtime/zero/partitioned_param_coordinator.py:464)",
    "    __all_gather_params (deepspeed/runtime/zero/partitioned_param_coordinator.py:435)",
    "    wrapped_fn (deepspeed/utils/nvtx.py:18)",
    "    fetch_sub_module (deepspeed/runtime/zero/partitioned_param_coordinator.py:386)",
    "    decorate_context (torch/utils/_contextlib.py:116)",
    "    wrapped_fn (deepspeed/utils/nvtx.py:18)",
    "    _fn (torch/_dynamo/eval_frame.py:600)",
    "    pre_sub_module_forward_function (deepspeed/runtime/zero/parameter_offload.py:449)",
    "    decorate_context (torch/utils/_contextlib.py:116)",
    "    _pre_forward_module_hook (deepspeed/runtime/zero/parameter_offload.py:275)",
    "    wrapped_fn (deepspeed/utils/nvtx.py:18)",
    "    _call_impl (torch/nn/modules/module.py:1592)",
    "    _wrapped_call_impl (torch/nn/modules/module.py:1553)",
    "    forward (transformers/models/mixtral/modeling_mixtral.py:676)",
]


def test_one_dump_in_a_collective_is_a_lead_that_names_the_call_and_where_the_code_made_it(engine):
    d = engine.analyze_text("\n".join(IN_ALL_GATHER)).diagnoses[0]
    assert (d.id, d.possible, d.initiator.line, d.initiator.pid) == ("collective-timeout", True, 1, 3293)
    assert d.confidence <= 0.35
    assert "all_gather_coalesced, called from forward (transformers/models/mixtral/modeling_mixtral.py:676)" in \
        d.evidence_for[0]
    assert [tuple(c.argv[:4]) for c in d.verify] == [("rg", "-n", "-A", "3")]


def test_the_process_that_is_not_in_the_collective_is_the_one_the_others_wait_for(engine):
    paste = "\n".join([*IN_BROADCAST, "", *IN_TRAIN])
    d = engine.analyze_text(paste).diagnoses[0]
    assert (d.id, d.initiator.line, d.initiator.pid) == ("collective-timeout", 10, 835990)
    assert d.headline == ("process 835990 is not in the collective the others wait in: it is at "
                          "train (megatron/training.py:915)")
    assert d.evidence_for[0].startswith("waiting in a collective: process 835995 in broadcast (from "
                                        "_aggregate_total_loss (deepspeed/runtime/pipe/engine.py:540)); process 835990 "
                                        "is elsewhere")


def test_dumps_taken_through_a_launcher_read_the_same(engine):
    # `pdsh -w node[1-2] py-spy dump ...` and `srun --label py-spy dump ...` put the host or task before every line
    for label in ("node1: ", "0: "):
        paste = "\n".join(label + line if line else line for line in [*IN_BROADCAST, "", *IN_TRAIN])
        d = engine.analyze_text(paste).diagnoses[0]
        assert (d.id, d.initiator.line, d.initiator.pid) == ("collective-timeout", 10, 835990)


def test_processes_waiting_in_different_collectives_took_different_paths(engine):
    d = engine.analyze_text("\n".join([*IN_BROADCAST, "", *IN_ALL_GATHER])).diagnoses[0]
    assert (d.id, d.possible) == ("mismatched-collectives", True)
    assert "broadcast" in d.headline and "all_gather_coalesced" in d.headline
    # the command offered lines up the dumps' main threads, not the mismatch checker's report these inputs lack
    assert d.verify and all("MainThread" in c.command for c in d.verify)


def test_processes_waiting_for_their_gpu_are_a_lead_too(engine):
    # py-spy output recorded in https://github.com/hdimmfh/xpu-monitor-agent (its py-spy profiler's documentation and
    # tests): a process blocked in torch.cuda.synchronize, with py-spy's process header above it.
    dump = ["Process 206450: python torch_test.py", "Python v3.12.3 (/usr/bin/python3.12)", "",
            'Thread 206450 (active): "MainThread"', "    synchronize (torch/cuda/__init__.py:1219)",
            "    <module> (torch_test.py:28)"]
    d = engine.analyze_text("\n".join(dump)).diagnoses[0]
    assert (d.id, d.possible, d.initiator.pid, d.initiator.line) == ("collective-timeout", True, 206450, 4)
    assert d.headline == "process 206450 waits for the GPU"
    assert "synchronize, from <module> (torch_test.py:28)" in d.evidence_for[0]


def test_a_process_of_another_program_idling_elsewhere_is_not_the_one_waited_for(engine):
    # A vLLM engine core busy in its scheduler (vllm-project/vllm#25890) is no peer of a Megatron rank in broadcast:
    # only processes that share the waiting ones' entry frame are compared with them.
    engine_core = ["Process 1829647: VLLM::EngineCore", "Python v3.12.9 (envs/vllm/bin/python3.12)", "",
                   'Thread 1829647 (active+gil): "MainThread"',
                   "    get_num_common_prefix_blocks (vllm/v1/core/single_type_kv_cache_manager.py:288)",
                   "    get_num_common_prefix_blocks (vllm/v1/core/kv_cache_coordinator.py:138)"]
    d = engine.analyze_text("\n".join([*engine_core, "", *IN_BROADCAST])).diagnoses[0]
    assert (d.id, d.initiator.pid) == ("collective-timeout", 835995)
    assert d.headline == "process 835995 waits in broadcast"
    assert not engine.analyze_text("\n".join(engine_core)).diagnoses


# torchtitan's rank 0 at a checkpoint save (https://github.com/pytorch/torchtitan/issues/168), the excerpt ending inside
# the main thread's stack: a tensorboard writer thread, then the main thread in scatter.
WRITER_THREAD = [
    "[rank0]:Thread 0x00007f07a6ffd640 (most recent call first):",
    '[rank0]:  File "/home/gchauhan/my_envs/llm-amd/lib/python3.11/threading.py", line 324 in wait',
    '[rank0]:  File "/home/gchauhan/my_envs/llm-amd/lib/python3.11/queue.py", line 180 in get',
    '[rank0]:  File "/home/gchauhan/my_envs/llm-amd/lib/python3.11/site-packages/tensorboard/summary/writer/'
    'event_file_writer.py", line 269 in _run',
    '[rank0]:  File "/home/gchauhan/my_envs/llm-amd/lib/python3.11/site-packages/tensorboard/summary/writer/'
    'event_file_writer.py", line 244 in run',
    '[rank0]:  File "/home/gchauhan/my_envs/llm-amd/lib/python3.11/threading.py", line 1038 in _bootstrap_inner',
    '[rank0]:  File "/home/gchauhan/my_envs/llm-amd/lib/python3.11/threading.py", line 995 in _bootstrap',
]
MAIN_IN_SCATTER = [
    "[rank0]:Thread 0x00007f13c65f5400 (most recent call first):",
    '[rank0]:  File "/home/gchauhan/my_envs/llm-amd/lib/python3.11/site-packages/torch/distributed/'
    'distributed_c10d.py", line 3230 in scatter',
]


def test_a_faulthandler_dump_of_a_rank_in_a_collective_is_a_lead_on_that_rank(engine):
    d = engine.analyze_text("\n".join([*WRITER_THREAD, "[rank0]:", *MAIN_IN_SCATTER])).diagnoses[0]
    assert (d.id, d.possible, d.initiator.rank, d.initiator.line) == ("collective-timeout", True, 0, 9)
    assert d.headline == "rank 0 waits in scatter"
    assert [c.argv[-2] for c in d.verify] == ["Thread 0x[0-9a-fA-F]+ \\(most recent call first\\):"]


def test_a_thread_that_threading_started_is_not_a_main_thread(engine):
    assert not engine.analyze_text("\n".join(WRITER_THREAD)).diagnoses


def test_a_dump_under_a_fatal_error_leaves_the_verdict_to_the_error(engine):
    # sglang's scheduler crashing in all_reduce (https://github.com/sgl-project/sglang/issues/3745): the segfault is the
    # failure, the dump only says where the thread was.
    paste = "\n".join([
        "Fatal Python error: Segmentation fault", "",
        "Thread 0x00007f2e93fff640 (most recent call first):",
        '  File "/XXXX/sglang/python/sglang/srt/managers/scheduler.py", line 462 in watchdog_thread',
        '  File "/usr/lib/python3.10/threading.py", line 953 in run',
        '  File "/usr/lib/python3.10/threading.py", line 1016 in _bootstrap_inner',
        '  File "/usr/lib/python3.10/threading.py", line 973 in _bootstrap', "",
        "Current thread 0x00007f2ea0870640 (most recent call first):",
        '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py", line 2501 in '
        'all_reduce',
        '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/c10d_logger.py", line 83 in wrapper'])
    d = engine.analyze_text(paste).diagnoses[0]
    assert (d.id, d.possible, d.initiator.line) == ("segfault-one-rank", False, 1)


def test_a_dump_of_native_frames_only_names_the_nccl_call_the_thread_is_in(engine):
    # huggingface/text-generation-inference#2099, as pasted: `py-spy dump --native` of a hung shard, the excerpt ending
    # above the Python frames; the main thread spins inside NCCL's all-reduce.
    dump = [
        'Thread 1302975 (active): "MainThread"',
        "    sched_yield (libc.so.6)",
        "    ncclLaunchKernelBefore_NoUncapturedCuda (enqueue.cc:968)",
        "    doLaunches (group.cc:161)",
        "    groupLaunch (group.cc:339)",
        "    ncclGroupEndInternal (group.cc:418)",
        "    ncclGroupEndInternal (group.cc:368)",
        "    ncclEnqueueCheck (enqueue.cc:1981)",
        "    ncclAllReduce (collectives.cc:49)",
    ]
    top = engine.analyze_text("\n".join(dump)).diagnoses[0]
    assert (top.id, top.possible is not None, top.headline) == (
        "collective-timeout", True, "process 1302975 waits in ncclAllReduce")
    # Native frames without an NCCL call in them say nothing about a collective.
    assert engine.analyze_text("\n".join(dump[:3])).diagnoses == ()


# Native dumps (nativeframes.py), as pasted in dev-split threads of the benchmark: a bare gdb `bt` of a process stuck in
# ncclCommAbort (NVIDIA/nccl#863), thread 1 of `thread apply all bt` in ProcessGroupNCCL::abort (NVIDIA/nccl#1777, the
# line numbers "XXX" are the poster's), lldb's thread in the same wait (pytorch/pytorch#149153), NCCL's proxy threads
# of a hung FasterTransformer rank (NVIDIA/nccl#901) and a cuda-gdb `bt` of a rank in communicator set-up
# (NVIDIA/nccl#1774).
GDB_IN_ABORT = [
    "#0  0x00007fc349513d2d in __GI___pthread_timedjoin_ex (threadid=140471077381888, thread_return=0x0, abstime=0x0, "
    "block=<optimized out>) at pthread_join_common.c:89",
    "#1  0x00007fc204d33e27 in commReclaim(ncclComm*) () from XXX",
    "#2  0x00007fc204d345fd in ncclCommAbort () from XXX",
]
GDB_THREAD_IN_ABORT = [
    'Thread 1 (Thread 0x7feb810ff640 (LWP 23530) "python"):',
    "#0  0x00007ff0b872aa1f in syscall () from /lib64/libc.so.6",
    "#1  0x00007fefe4a7fe62 in c10d::ProcessGroupNCCL::waitForFutureOrTimeout() at ProcessGroupNCCL.cpp:XXX",
    "#2  0x00007fefe4a7fe62 in c10d::ProcessGroupNCCL::abort() at ProcessGroupNCCL.cpp:XXX",
    "#3  0x00007fefe4a7fe62 in c10d::ProcessGroupNCCL::abortCommsFromMap() at ProcessGroupNCCL.cpp:XXX",
    "#4  0x00007fefe4a7fe62 in ncclCommAbort() at init.cc:XXX",
]
LLDB_IN_ABORT = [
    "  thread #16, name = 'python', stop reason = signal SIGSTOP",
    "    frame #0: 0x00007fb0b7f0792d libc.so.6`syscall + 29",
    "    frame #1: 0x00007fb08faef142 libstdc++.so.6`std::__atomic_futex_unsigned_base::_M_futex_wait_until_steady("
    "this=<unavailable>, __addr=0x00007fac98000b00, __val=2147483648, __has_timeout=true, __s=<unavailable>, "
    "__ns=(__r = 711393434)) at futex.cc:217:18",
    "    frame #2: 0x00007fb090db0b85 libtorch_cuda.so`c10d::ProcessGroupNCCL::waitForFutureOrTimeout(std::future<bool>&, "
    "std::chrono::duration<long, std::ratio<1l, 1000l>> const&, std::__cxx11::basic_string<char, "
    "std::char_traits<char>, std::allocator<char>> const&, c10d::C10dLoggingData&, bool) + 725",
    "    frame #3: 0x00007fb090db1068 libtorch_cuda.so`c10d::ProcessGroupNCCL::abort() + 664",
]
PROXY_THREADS = [
    "(gdb) thread apply all bt",
    "",
    "Thread 10 (Thread 0x7f535e7fb000 (LWP 500879)):",
    "#0  futex_wait_cancelable (private=<optimized out>, expected=0, futex_word=0x7f535ebfc158) at "
    "../sysdeps/nptl/futex-internal.h:183",
    "#1  __pthread_cond_wait_common (abstime=0x0, clockid=0, mutex=0x7f535ebfc108, cond=0x7f535ebfc130) at "
    "pthread_cond_wait.c:508",
    "#2  __pthread_cond_wait (cond=cond@entry=0x7f535ebfc130, mutex=mutex@entry=0x7f535ebfc108) at pthread_cond_wait.c:647",
    "#3  0x00007f539f454740 in ncclProxyGetPostedOps (added=<synthetic pointer>, proxyState=0x55d847bc00c0) at "
    "proxy.cc:713",
    "#4  ncclProxyProgress (proxyState_=0x55d847bc00c0) at proxy.cc:868",
    "#5  0x00007f539f3ba609 in start_thread (arg=<optimized out>) at pthread_create.c:477",
    "#6  0x00007f539ef93133 in clone () at ../sysdeps/unix/sysv/linux/x86_64/clone.S:95",
    "",
    "Thread 9 (Thread 0x7f53817fd000 (LWP 500875)):",
    "#0  0x00007f539ef8699f in __GI___poll (fds=fds@entry=0x7f53817f09e0, nfds=nfds@entry=65, timeout=timeout@entry=500) "
    "at ../sysdeps/unix/sysv/linux/poll.c:29",
    "#1  0x00007f539f454da7 in poll (__timeout=500, __nfds=65, __fds=0x7f53817f09e0) at "
    "/usr/include/x86_64-linux-gnu/bits/poll2.h:46",
    "#2  ncclProxyService (_args=0x55d847bc00c0) at proxy.cc:1437",
]
CUDA_GDB_IN_INIT = [
    'Thread 1 "python" received signal SIGINT, Interrupt.',
    "0x00007f68194a8adf in clock_nanosleep () from /lib/x86_64-linux-gnu/libc.so.6",
    "(cuda-gdb) bt",
    "#0  0x00007f68194a8adf in clock_nanosleep () from /lib/x86_64-linux-gnu/libc.so.6",
    "#1  0x00007f68194b5a27 in nanosleep () from /lib/x86_64-linux-gnu/libc.so.6",
    "#2  0x00007f68194e572c in usleep () from /lib/x86_64-linux-gnu/libc.so.6",
    "#3  0x00007f67471b224b in ?? () from /lib/x86_64-linux-gnu/libnccl.so.2",
    "#4  0x00007f67471b31e1 in ?? () from /lib/x86_64-linux-gnu/libnccl.so.2",
    "#5  0x00007f67471b474d in ?? () from /lib/x86_64-linux-gnu/libnccl.so.2",
    "#6  0x00007f67471be402 in pncclCommInitRankConfig () from /lib/x86_64-linux-gnu/libnccl.so.2",
    "#7  0x00007f67a9ff6236 in c10d::NCCLComm::create(int, int, ncclUniqueId, signed char, ncclConfig_v22700&) () from "
    "/usr/local/lib/python3.12/dist-packages/torch/lib/libtorch_cuda.so",
]


@pytest.mark.parametrize("dump, line, pid", [
    (GDB_IN_ABORT, 1, None),
    (GDB_THREAD_IN_ABORT, 2, 23530),
    (LLDB_IN_ABORT, 2, None),
])
def test_a_thread_inside_nccls_teardown_is_a_hang_in_the_abort(engine, dump, line, pid):
    d = engine.analyze_text("\n".join(dump)).diagnoses[0]
    assert (d.id, d.possible, d.initiator.line, d.initiator.pid) == ("nccl-abort-hang", True, line, pid)
    assert "hang" in d.headline and "teardown" in d.headline
    assert "look for that failure too" in d.evidence_for[0]


def test_idle_helper_threads_alone_say_the_main_thread_is_not_shown(engine):
    d = engine.analyze_text("\n".join(PROXY_THREADS)).diagnoses[0]
    assert (d.id, d.possible, d.initiator.line) == ("collective-timeout", True, 13)
    assert d.confidence <= 0.2
    assert d.headline == "only helper threads are dumped, idle: the main thread is not shown"
    assert [c.argv[:2] for c in d.verify] == [("rg", "-n")]


def test_a_thread_in_communicator_set_up_waits_for_its_peers_and_is_no_crash_in_nccl(engine):
    # Its frames in libnccl are those of a live process gdb interrupted (SIGINT), not of a crash.
    d = engine.analyze_text("\n".join(CUDA_GDB_IN_INIT)).diagnoses[0]
    assert (d.id, d.possible, d.initiator.line) == ("collective-timeout", True, 4)
    assert d.headline == "the dumped process waits in pncclCommInitRankConfig"


def test_a_gdb_frame_in_libnccl_beside_the_crash_signal_is_still_the_nccl_crash(engine):
    # gdb's stop line for a core (its form in pastes: "Program terminated with signal SIGSEGV, Segmentation fault.")
    # above NCCL 2.4.2's frames (NVIDIA/nccl#191).
    paste = ["Program terminated with signal SIGSEGV, Segmentation fault.",
             "    #0 0x00007fdba8a61838 in transportDestroyProxy (comm=comm@entry=0x5604b2781850) from "
             "/opt/anaconda3/envs/dlipy2/lib/python2.7/site-packages/torch/lib/../../../../libnccl.so.2"]
    assert engine.analyze_text("\n".join(paste)).diagnoses[0].id == "nccl-library-segfault"


def test_a_thread_of_the_process_that_is_not_its_main_one_and_not_in_nccl_is_passed_over(engine):
    # Thread 9 in poll() with its NCCL frame cut: a thread of the process that is neither its main one nor in NCCL.
    other = PROXY_THREADS[11:14]
    assert other[0].startswith("Thread 9 ") and "ncclProxyService" not in "".join(other)
    # Beside a main thread waiting for its peers it is no process "elsewhere" that they wait for.
    d = engine.analyze_text("\n".join([*CUDA_GDB_IN_INIT, "", *other])).diagnoses[0]
    assert (d.initiator.line, d.headline) == (4, "the dumped process waits in pncclCommInitRankConfig")
    assert engine.analyze_text("\n".join(other)).diagnoses == ()


# More native dumps from dev-split threads: Horovod's background thread as coordinator in MPI's gather, its frames'
# libraries wrapped onto the next lines (horovod/horovod#1182); a Horovod thread blocked in a kernel launch
# (horovod/horovod#2944); the CUDA driver's own thread, named by gdb, and a PMIx event loop of a hung TensorRT-LLM
# rank (NVIDIA/TensorRT-LLM#2560).
HOROVOD_IN_GATHER = [
    "Thread 2 (Thread 0x7fe9be0b1700 (LWP 442)):",
    "#0  0x00007fe934790bce in mca_btl_smcuda_component_progress ()",
    "   from /usr/local/openmpi/lib/openmpi/mca_btl_smcuda.so",
    "#1  0x00007fe93edd3dac in opal_progress ()",
    "   from /usr/local/openmpi/lib/libopen-pal.so.40",
    "#2  0x00007fe934152a85 in mca_pml_ob1_recv ()",
    "   from /usr/local/openmpi/lib/openmpi/mca_pml_ob1.so",
    "#3  0x00007fe93f41b8ff in ompi_coll_base_gather_intra_basic_linear ()",
    "   from /usr/local/openmpi/lib/libmpi.so.40",
    "#4  0x00007fe93f3e518d in PMPI_Gather ()",
    "   from /usr/local/openmpi/lib/libmpi.so.40",
]
IN_LAUNCH = [
    "Thread 204 (Thread 0x7f00d3e5e700 (LWP 6483)):",
    "#0  0x00007f01da356de2 in pthread_cond_timedwait@@GLIBC_2.3.2 () from /usr/lib64/libpthread.so.0",
    "#1  0x00007f00e53edaa7 in ?? () from /usr/local/nvidia/cpu_lib/libcuda.so.1",
    "#2  0x00007f00e55994f4 in ?? () from /usr/local/nvidia/cpu_lib/libcuda.so.1",
    "#3  0x00007f00e54674f3 in cuLaunchKernel () from /usr/local/nvidia/cpu_lib/libcuda.so.1",
]
DRIVER_AND_PMIX_THREADS = [
    # the tail of a thread whose header and first frames the paste cut: which thread it is, is not known
    "#7  0x00007fd0b2a9e42b in ?? () from /lib64/libcuda.so.1",
    "#8  0x00007fd0b293b184 in ?? () from /lib64/libcuda.so.1",
    "#9  0x00007fd0b28640f3 in ?? () from /lib64/libcuda.so.1",
    "#10 0x00007fd0b0d861ca in start_thread () from /lib64/libpthread.so.0",
    "#11 0x00007fd0b00b28d3 in clone () from /lib64/libc.so.6",
    "",
    'Thread 4 (Thread 0x7fd09a759000 (LWP 3913167) "cuda00006000019"):',
    "#0  0x00007fd0b01abac1 in poll () from /lib64/libc.so.6",
    "#1  0x00007fd0b2867e4f in ?? () from /lib64/libcuda.so.1",
    "#2  0x00007fd0b293b12f in ?? () from /lib64/libcuda.so.1",
    "#3  0x00007fd0b28640f3 in ?? () from /lib64/libcuda.so.1",
    "#4  0x00007fd0b0d861ca in start_thread () from /lib64/libpthread.so.0",
    "#5  0x00007fd0b00b28d3 in clone () from /lib64/libc.so.6",
    "",
    'Thread 3 (Thread 0x7fd0a658a000 (LWP 3913159) "executor_server"):',
    "#0  0x00007fd0b01b8307 in epoll_wait () from /lib64/libc.so.6",
    "#1  0x00007fd0aebcf509 in ?? () from /lib64/libevent_core-2.1.so.6",
    "#2  0x00007fd0aebc51e8 in event_base_loop () from /lib64/libevent_core-2.1.so.6",
]


@pytest.mark.parametrize("dump, line, headline", [
    (HOROVOD_IN_GATHER, 2, "the dumped process waits in PMPI_Gather"),
    (IN_LAUNCH, 2, "the dumped process waits for the GPU"),
    (DRIVER_AND_PMIX_THREADS, 8, "only helper threads are dumped, idle: the main thread is not shown"),
])
def test_other_threads_in_a_collective_a_launch_or_the_drivers_own_are_read_too(engine, dump, line, headline):
    d = engine.analyze_text("\n".join(dump)).diagnoses[0]
    assert (d.id, d.possible, d.initiator.line, d.headline) == ("collective-timeout", True, line, headline)


def test_a_pyspy_thread_besides_the_main_one_inside_ncclcommabort_is_the_abort_hang(engine):
    # NVIDIA/nccl#992 as pasted: `py-spy dump --native` of the thread a trainer's error handler aborts from (NCCL 2.18.1).
    dump = [
        'Thread 3438296 (idle): "Thread-41"',
        "    0x155555277197 (libc.so.6)",
        "    0x15555527c6a4 (libc.so.6)",
        "    commFree (init.cc:180)",
        "    commCleanup (init.cc:1731)",
        "    commReclaim (init.cc:1862)",
        "    ncclCommAbort (init.cc:1931)",
        "    c10d::NCCLComm::ncclCommAbort (libtorch_cuda.so)",
        "    c10d::abortCommsFromMap (libtorch_cuda.so)",
        "    c10d::ProcessGroupNCCL::abort (libtorch_cuda.so)",
    ]
    d = engine.analyze_text("\n".join(dump)).diagnoses[0]
    assert (d.id, d.possible, d.initiator.line) == ("nccl-abort-hang", True, 1)
    assert d.headline.endswith("teardown (in c10d::ProcessGroupNCCL::abort)")
    # The same thread's Python frames alone (no --native) say nothing.
    assert engine.analyze_text("\n".join([dump[0], "    run (threading.py:975)"])).diagnoses == ()


def test_a_backtrace_pasted_from_a_later_frame_is_read_from_its_first_frame_and_once(engine):
    # cybertronai/transformer-xl#10: a DDP rank's bt pasted from frame #8, inside .item()'s copy to the host.
    dump = [
        "#8  0x00007f5178571f92 in cuMemcpyDtoHAsync_v2 () from /usr/lib/x86_64-linux-gnu/libcuda.so.1",
        "#9  0x00007f517d0984bf in ?? ()",
        "   from /home/ubuntu/anaconda3/envs/pytorch_p36/lib/python3.6/site-packages/torch/lib/libcudart-f7fdd8d7.so.9.0",
        "#10 0x00007f517d075573 in ?? ()",
        "   from /home/ubuntu/anaconda3/envs/pytorch_p36/lib/python3.6/site-packages/torch/lib/libcudart-f7fdd8d7.so.9.0",
        "#11 0x00007f517d0aed86 in cudaMemcpyAsync ()",
    ]
    d = engine.analyze_text("\n".join(dump)).diagnoses[0]
    assert (d.id, d.initiator.line, d.headline) == ("collective-timeout", 1, "the dumped process waits for the GPU")
    # Frames inside a thread's list are not threads of their own: one process hangs, not three.
    d = engine.analyze_text("\n".join(GDB_IN_ABORT)).diagnoses[0]
    assert d.headline == "the dumped process hangs in NCCL's communicator teardown (in ncclCommAbort)"


def test_a_thread_blocked_in_the_kernel_launch_of_ncclgroupend_names_the_launch_blocking_deadlock(engine):
    # NVIDIA/nccl#750 as pasted (trailing spaces as posted, the libcuda frames shortened to two): a DDP rank's main
    # thread inside cudaLaunchKernel under ncclGroupEnd with CUDA_LAUNCH_BLOCKING=1; NCCL's maintainer explained the
    # deadlock. Without the launch frame the same stack is only a wait in the collective.
    dump = [
        "#0  0x00007fec9b630c50 in ?? () from lib/libcuda.so.1",
        "#1  0x00007fec9b49dcf7 in ?? () from lib/libcuda.so.1",
        "#2  0x00007fec9ae67f06 in cudaLaunchKernel () from /lib/libcudart.so.11.4.108",
        "#3  0x00007fecdf7d6cf9 in ncclStrongStreamLaunchKernel(ncclCudaGraph, ncclStrongStream*, void*, dim3, dim3, "
        "void**, unsigned long) ()",
        "#4  0x00007fecdf7a56c8 in ncclLaunchKernel(ncclComm*, ncclKernelPlan*) () ",
        "#5  0x00007fecdf7c494d in ncclGroupEndInternal() () ",
        "#6  0x00007fecdf7c5301 in ncclGroupEnd () from ",
    ]
    d = engine.analyze_text("\n".join(dump)).diagnoses[0]
    assert (d.id, d.headline) == ("collective-timeout", "the dumped process waits in ncclGroupEnd")
    assert d.evidence_for[0].startswith("the dumped process waits in ncclGroupEnd at cudaLaunchKernel <- ")
    assert "CUDA_LAUNCH_BLOCKING=1" in d.evidence_for[-1]
    renumbered = [dump[0], dump[1], *(f"#{n}{line[2:]}" for n, line in enumerate(dump[3:], start=2))]
    d = engine.analyze_text("\n".join(renumbered)).diagnoses[0]
    assert d.headline == "the dumped process waits in ncclGroupEnd"
    assert not any("CUDA_LAUNCH_BLOCKING" in e for e in d.evidence_for)
