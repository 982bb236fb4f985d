"""A traceback cut before its exception line: the `raise` in its last frame says what was raised. Real pastes
(sources in the comments)."""

# meta-llama/llama-models#268: the end of a Python 3.11 traceback as pasted, caret markers glued to the raise line.
CUT = [
    '         File "/home/bill/.venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 1750, '
    'in _new_process_group_helper',
    '      raise RuntimeError("Distributed package doesn\'t have NCCL built in")       ^^^',
    ' ^^^    ^raise RuntimeError("Distributed package doesn\'t have NCCL built in")^ ',
]
# FacePerceiver/FaRL#10: a traceback's end as pasted, the raise and then the exception line.
WHOLE = [
    '  raise RuntimeError("Distributed package doesn\'t have NCCL "',
    "RuntimeError: Distributed package doesn't have NCCL built in",
]


# huggingface/accelerate#182, the end of a Python 3.7 traceback as pasted: a raise spanning lines shows the line its
# message is on, a bare string literal under the frame that raised, and the paste stops inside it.
CUT_LITERAL = [
    '  File "/nethome/hshah310/miniconda3/envs/cups/lib/python3.7/site-packages/torch/cuda/__init__.py", line 161, in '
    '_lazy_init',
    '    "Cannot re-initialize CUDA in forked subprocess. To use CUDA w',
]


def test_a_cut_traceback_is_read_from_its_last_raise(engine):
    top = engine.analyze_text("\n".join(CUT)).diagnoses[0]
    assert (top.id, top.initiator.line) == ("nccl-not-built", 3)


def test_a_whole_traceback_is_read_from_its_exception_line(engine):
    report = engine.analyze_text("\n".join(WHOLE))
    assert [(e.line, e.pattern.reference_id) for e in report.events if e.role in ("cause", "symptom")] \
        == [(2, "nccl-not-built")]


def test_only_a_raise_that_ends_the_input_is_read(engine):
    # A line of a real run after it (tests/fixtures/realrun/rank-late-to-init.log): the traceback did not end at the
    # raise, so its source line is not read as the exception.
    later = ("[W1203 10:51:22.824292848 socket.cpp:469] [c10d] waitForInput: poll for socket SocketImpl(fd=3, "
             "addr=[::ffff:127.0.0.1]:43906, remote=[::ffff:127.0.0.1]:29523) returned 0, likely a timeout")
    top = engine.analyze_text("\n".join([*CUT[:2], later])).diagnoses[0]
    assert top.id != "nccl-not-built"


def test_a_cut_traceback_is_read_from_the_message_line_of_a_raise_that_spans_lines(engine):
    top = engine.analyze_text("\n".join(CUT_LITERAL)).diagnoses[0]
    assert (top.id, top.initiator.line) == ("cuda-fork-reinit", 2)
    # the same literal anywhere but right under a frame's header is source code, not the error
    assert not engine.analyze_text("\n".join(["", CUT_LITERAL[1]])).diagnoses
