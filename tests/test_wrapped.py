"""Messages a terminal or a web page cut over two lines: read with both halves joined. Every paste here is real
(sources in the comments), copied with its cuts as posted."""

from pathlib import Path

from conftest import REFERENCE_HEAD
from firstfault.engine import Engine
from firstfault.loader import load_library

# pytorch/pytorch#123023: a terminal's word wrap (at spaces) through PyTorch 2.3's watchdog message.
WORD_WRAPPED = [
    "NCCL version 2.19.3+cuda12.0",
    "[E329 19:15:11.775879730 ProcessGroupNCCL.cpp:565] [Rank 0] Watchdog",
    "caught collective operation timeout: WorkNCCL(SeqNum=2,",
    "OpType=ALLREDUCE, NumelIn=10, NumelOut=10, Timeout(ms)=10000) ran for",
    "10028 milliseconds before timing out.",
]
# om-ai-lab/VLM-R1#257: cut at a fixed width of 116 characters, mid-word, the message's last piece padded.
WIDTH_WRAPPED = [
    "[rank6]:[E429 13:55:49.384372190 ProcessGroupNCCL.cpp:1743] [PG ID 0 PG GUID 0(default_pg) Rank 6] ProcessGroupNCCL'",
    "s watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives. This typically indi",
    "cates a NCCL/CUDA API (e.g., CudaEventDestroy) hang blocking the watchdog, and could be triggered by another thread ",
]
# Bin-ze/BEVFormer_segmentation_detection#18: torch.distributed.launch's failure line, its local rank cut off.
FIELD_WRAPPED = [
    "2024-01-05 13:21:28,371 - mmdet - INFO - Saving checkpoint at 1 epochs",
    "[                                                  ] 0/6019, elapsed: 0s, ETA:ERROR:torch.distributed.elastic."
    "multiprocessing.api:failed (exitcode: -9) local_rank: ",
    "0 (pid: 1801442) of binary: /home/lide/anaconda3/envs/bevformer/bin/python",
]
# yuanzhoulvpi2017/zero_nlp#120, as pasted: DDP's refusal cut at a space, the device set that decides it (a model
# spread over several GPUs, not a CPU module) on the next line.
TAIL_WRAPPED = [
    "DistributedDataParallel device_ids and output_device arguments only work with single-device/multiple-device GPU "
    "modules or CPU modules, but got device_ids [0], output_device 0, and module ",
    "parameters {device(type='cuda', index=0), device(type='cuda', index=1), device(type='cuda', index=2)}.",
]

# allenai/open-instruct#165, as pasted from a terminal 94 columns wide: transformers' import error, its reason (a
# flash-attn build against another torch) on the lines below it, the library's path cut mid-name.
PATH_CUT = [
    '  File "/root/miniconda3/envs/rag-demo/lib/python3.10/site-packages/transformers/utils/import_',
    'utils.py", line 1384, in _get_module',
    '    raise RuntimeError( ',
    'RuntimeError: Failed to import transformers.models.opt.modeling_opt because of the following e',
    'rror (look up to see its traceback):',
    '/root/miniconda3/envs/rag-demo/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_',
    '64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi',
    'ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 1',
]
# NVIDIA/cuQuantum#77: an exception line, then the launcher's own line; no width is shared, so nothing was cut.
NOT_CUT = [
    '  File "cupy_backends/cuda/api/runtime.pyx", line 143, in cupy_backends.cuda.api.runtime.check_status',
    'cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorInvalidResourceHandle: invalid resource handle',
    'x3005c0s37b0n0.hsn.cm.polaris.alcf.anl.gov: rank 1 exited with code 1',
]


def test_a_message_cut_at_a_space_is_read_on_its_first_line(engine):
    report = engine.analyze_text("\n".join(WORD_WRAPPED))
    assert report.diagnoses[0].id == "collective-timeout"
    assert [e.line for e in report.events if e.pattern.reference_id == "collective-timeout"] == [2]
    # Without the cut line's second half, nothing in the paste reads as a failure.
    assert engine.analyze_text("\n".join(WORD_WRAPPED[:2])).diagnoses == ()


def test_a_message_cut_mid_word_at_a_fixed_width_is_read_on_its_first_line(engine):
    report = engine.analyze_text("\n".join(WIDTH_WRAPPED))
    assert report.diagnoses[0].id == "nccl-watchdog-stuck"
    assert [(e.line, e.source.rank, e.captures.get("seconds")) for e in report.events
            if e.pattern.reference_id == "nccl-watchdog-stuck"] == [(1, 6, "480")]


def test_a_field_the_cut_moved_to_the_next_line_completes_the_reading(engine):
    top = engine.analyze_text("\n".join(FIELD_WRAPPED)).diagnoses[0]
    assert (top.id, top.initiator.line, top.initiator.rank) == ("host-oom-kill", 2, 0)
    assert engine.analyze_text("\n".join(FIELD_WRAPPED[:2])).diagnoses[0].initiator.rank is None


def test_a_line_cut_before_the_end_that_decides_it_is_read_with_the_next(engine):
    # The pattern's literal is whole on the first line; its `tail` (the device set) is what the cut moved.
    top = engine.analyze_text("\n".join(TAIL_WRAPPED)).diagnoses[0]
    assert (top.id, top.initiator.line) == ("model-placement-under-distributed-launch", 1)
    assert engine.analyze_text(TAIL_WRAPPED[0]).diagnoses == ()


def test_lines_that_were_not_cut_are_not_joined(engine):
    # A real torchrun run (tests/fixtures/realrun): an exception line whose message is free text, then the next
    # traceback. Joined, the exception's message would run on into "Traceback (most recent call last):".
    path = Path(__file__).parent / "fixtures" / "realrun" / "rank-late-to-init.log"
    report = engine.analyze_text(path.read_text())
    assert not [e for e in report.events if "Traceback (most recent" in e.text and "DistStoreError" in e.text]


def test_a_reading_that_runs_on_across_the_cut_does_not_stop_the_other_join(tmp_path):
    # A user's pattern for c10d's error lines reads the first line, its message running on to the end: the join
    # without a space reads it again ("Watchdogcaught ..."), and the join at the space must still be tried.
    (tmp_path / "c10d-error-level.toml").write_text(REFERENCE_HEAD.format(id="c10d-error-level") + """
[[patterns]]
id = "c10d-error-line"
literals = ["ProcessGroupNCCL.cpp:"]
regex = '\\[E\\d+ [\\d:.]+ ProcessGroupNCCL\\.cpp:\\d+\\] (?P<message>\\S.*)'
role = "context"
emitter = "pytorch"
match = ["[E329 19:15:11.775879730 ProcessGroupNCCL.cpp:565] [Rank 0] Watchdog",
         "[E329 19:15:11.777459894 ProcessGroupNCCL.cpp:1561] [PG 0 Rank 0]"]
near_miss = ["NCCL version 2.19.3+cuda12.0"]
""")
    engine = Engine(load_library([tmp_path]))
    report = engine.analyze_text("\n".join(WORD_WRAPPED))
    assert "c10d-error-line" in {e.pattern.id for e in report.events}
    assert report.diagnoses[0].id == "collective-timeout"


def test_a_message_whose_second_half_also_reads_alone_is_read_from_its_first_line(engine):
    # The cut half "64-linux-gnu.so: undefined symbol: ..." reads as a library of its own; read from where the
    # message begins, it is the flash-attn build's path, the reason the exception two lines up gives.
    report = engine.analyze_text("\n".join(PATH_CUT))
    top = report.diagnoses[0]
    assert (top.id, top.initiator.line) == ("extension-abi-mismatch", 6)
    [event] = [e for e in report.events if e.pattern.reference_id == "extension-abi-mismatch"]
    assert event.captures["library"].endswith("flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so")


def test_a_line_at_no_width_the_paste_shares_is_not_read_with_the_next(engine):
    report = engine.analyze_text("\n".join(NOT_CUT))
    assert [e.line for e in report.events if e.pattern.reference_id == "mpirun-rank-signal"] == [3]
