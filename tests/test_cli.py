import json
import os
import subprocess
import sys

import pytest

from conftest import CLEAN, EXAMPLES, REALRUN, ROOT
from firstfault.cli import main

CASCADE = str(EXAMPLES / "oom-cascade" / "train.log")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_json_follows_the_contract(capsys):
    code, out, _ = run(capsys, "diagnose", "--format", "json", CASCADE)
    data = json.loads(out)
    assert code == 1
    assert {"version", "inputs", "diagnoses"} <= data.keys()
    top = data["diagnoses"][0]
    assert {"id", "title", "confidence", "initiator", "collateral", "evidence", "fix", "verify"} <= top.keys()
    assert 0 <= top["confidence"] <= 1
    assert {"rank", "host", "path", "line", "text"} <= top["initiator"].keys()
    assert top["initiator"]["line"] == 32 and top["initiator"]["rank"] == 2
    # times are the log's own clock: the watchdog lines came ten minutes after the OOM
    assert all(c["time"] - top["initiator"]["time"] > 590 for c in top["collateral"] if "Watchdog" in c["text"])
    assert all({"rank", "host", "path", "line", "text"} <= c.keys() for c in top["collateral"])
    assert all(isinstance(v["argv"], list) and v["command"] for v in top["verify"])
    confidences = [d["confidence"] for d in data["diagnoses"]]
    assert confidences == sorted(confidences, reverse=True)


def test_text_output_has_no_colour_when_not_a_tty(capsys):
    code, out, _ = run(capsys, "diagnose", CASCADE)
    assert code == 1 and "FIRST FAILURE" in out and "rank 2 on gpu-node-a" in out and "\x1b[" not in out


def test_the_verdict_is_the_first_line_and_what_was_read_the_last(capsys):
    _, out, _ = run(capsys, "diagnose", CASCADE)
    lines = out.splitlines()
    assert lines[0].startswith("FIRST FAILURE  CUDA out of memory on one rank")
    assert lines[-1].startswith("firstfault ") and "1 input(s), 156 lines" in lines[-1]
    # the quoted line is cut at a word boundary, not inside one
    quoted = next(line for line in lines if line.startswith("  > "))
    assert quoted.endswith("…") and quoted[-2] != " " and not quoted[-2].isspace()
    assert "first seen on on" not in out and "unknown source" not in out


def test_brief_prints_one_line_per_diagnosis(capsys):
    code, out, _ = run(capsys, "diagnose", "--brief", CASCADE)
    lines = out.splitlines()
    assert code == 1 and len(lines) == 3
    assert lines[0] == ("first failure: CUDA out of memory on one rank [cuda-oom] · rank 2 on gpu-node-a · "
                        f"{CASCADE}:32 · confidence 0.60")
    assert all(line.startswith("other hypothesis: ") for line in lines[1:])


def test_brief_on_a_clean_log_is_one_line(capsys, tmp_path):
    path = tmp_path / "ok.log"
    path.write_text("[rank0]: step 1 loss 2.0\n")
    code, out, _ = run(capsys, "diagnose", "--brief", str(path))
    assert code == 0 and out.count("\n") == 1 and out.startswith("no failure found: ")


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_redact_masks_hosts_addresses_and_user_names(capsys, fmt):
    log = str(REALRUN / "master-unreachable.log")
    _, plain, _ = run(capsys, "diagnose", "--format", fmt, CASCADE, log)
    code, out, _ = run(capsys, "diagnose", "--format", fmt, "--redact", CASCADE, log)
    assert code == 1 and "gpu-node-a" in plain and "gpu-node-a" not in out and "<host>" in out


@pytest.mark.parametrize("argv", [["--format", "json", "--redact"], ["--format", "json", "--brief"],
                                  ["--format", "markdown", "--brief"]])
def test_options_that_do_not_go_together_are_a_usage_error(capsys, argv):
    code, out, err = run(capsys, "diagnose", *argv, CASCADE)
    assert code == 2 and out == "" and err.count("\n") == 1


def test_markdown_folds_the_collateral(capsys):
    _, out, _ = run(capsys, "diagnose", "--format", "markdown", CASCADE)
    assert "<details><summary>Collateral: " in out and "</details>" in out
    assert out.index("<details>") < out.index("</details>")


def test_colour_can_be_forced(capsys):
    _, out, _ = run(capsys, "diagnose", "--color", "always", CASCADE)
    assert "\x1b[" in out


def test_markdown_output(capsys):
    code, out, _ = run(capsys, "diagnose", "--format", "markdown", CASCADE)
    assert code == 1 and out.startswith("## First failure: CUDA out of memory")


def test_clean_input_exits_zero(capsys, tmp_path):
    path = tmp_path / "ok.log"
    path.write_text("[rank0]: step 1 loss 2.0\n")
    code, out, _ = run(capsys, "diagnose", str(path))
    assert code == 0 and "No failure found" in out


def test_only_context_lines_say_so(capsys):
    """Lines that matched but count as no failure are not 'nothing matched' (a healthy 2-node NCCL run)."""
    code, out, _ = run(capsys, "diagnose", str(CLEAN / "nccl-info-2node-socket-all-reduce-perf.log"))
    assert code == 0 and "No failure found" in out and "none of them a failure by itself" in out


def test_a_warning_that_is_all_an_excerpt_holds_is_a_possible_cause(capsys, tmp_path):
    lines = (REALRUN / "unresolvable-rdzv-host.log").read_text().splitlines()
    path = tmp_path / "warnings.log"
    path.write_text("\n".join(line for line in lines if "cannot be retrieved (gai error" in line) + "\n")
    code, out, _ = run(capsys, "diagnose", str(path))
    assert code == 1 and "POSSIBLE CAUSE" in out and "not conclusive on its own" in out


@pytest.mark.parametrize("make, message", [
    (lambda p: p, "no logs, error files or Flight Recorder dumps in this folder (it is empty)"),
    (lambda p: p / "nope.log", "no such file"),
], ids=["empty-folder", "missing-file"])
def test_bad_paths_exit_2_with_one_line(capsys, tmp_path, make, message):
    code, out, err = run(capsys, "diagnose", str(make(tmp_path)))
    assert code == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("content", [b"", b"\x00\x01\x02\xff" * 500, b"\xff\xfe invalid \xc3 utf8\n"],
                         ids=["empty", "binary", "invalid-utf8"])
def test_odd_files_are_a_clean_no_failure(capsys, tmp_path, content):
    path = tmp_path / "odd.log"
    path.write_bytes(content)
    code, out, _ = run(capsys, "diagnose", str(path))
    assert code == 0 and "No failure found" in out


def test_binary_file_is_noted(capsys, tmp_path):
    path = tmp_path / "core.bin"
    path.write_bytes(b"\x7fELF\x00\x00" * 100)
    _, out, _ = run(capsys, "diagnose", str(path))
    assert "looks like a binary file" in out


def test_usage_error_exits_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["diagnose"])
    assert exc.value.code == 2


def test_stdin_and_no_color_in_a_real_process():
    env = {**os.environ, "NO_COLOR": "1"}
    data = (REALRUN / "rank-raises.log").read_bytes()
    done = subprocess.run([sys.executable, "-m", "firstfault", "diagnose", "-"], input=data, env=env,
                          capture_output=True, cwd=ROOT)
    assert done.returncode == 1
    assert b"Python exception on one rank" in done.stdout and b"\x1b[" not in done.stdout
    assert done.stderr == b""


def test_signatures_list_text_shows_literals(capsys):
    code, out, _ = run(capsys, "signatures", "list")
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith("collective-lagging-rank-named") and lines[1].startswith("    literals: ")
    assert "watchdog caught collective operation timeout" in out


def test_signatures_list_json_has_literals(capsys):
    code, out, _ = run(capsys, "signatures", "list", "--format", "json")
    refs = json.loads(out)["references"]
    assert code == 0 and len(refs) >= 15
    assert all(p["literals"] for r in refs for p in r["patterns"])


def test_explain_prints_the_whole_reference(capsys):
    code, out, _ = run(capsys, "explain", "cuda-oom")
    assert code == 0 and "Mechanism" in out and "Verification commands" in out and "https://" in out


def test_explain_unknown_id_suggests_close_ones(capsys):
    code, _, err = run(capsys, "explain", "oom")
    assert code == 2 and "cuda-oom" in err


@pytest.mark.parametrize("typed, entry", [
    ("137", "exit 137"), ("139", "exit 139"), ("-9", "SIGKILL"), ("-11", "SIGSEGV"), ("signal 9", "SIGKILL"),
    ("SIGKILL", "SIGKILL"), ("sigsegv", "SIGSEGV"), ("kill", "SIGKILL"), ("xid79", "Xid 79"), ("Xid 79", "Xid 79"),
    ("exit code 137", "exit 137"), ("exitcode: -6", "SIGABRT"), ("ncclSystemError", "ncclSystemError"),
    ("cudaErrorIllegalAddress", "cudaErrorIllegalAddress"), ("nccl_debug", "NCCL_DEBUG"),
])
def test_explain_understands_what_people_type(capsys, typed, entry):
    code, out, _ = run(capsys, "explain", typed)
    assert code == 0 and out.startswith(f"{entry} ")


def test_explain_prints_plain_text_when_piped_and_bold_on_request(capsys):
    _, plain, _ = run(capsys, "explain", "NCCL_SOCKET_IFNAME")
    assert "**" not in plain and "*Default:*" not in plain and "Default: " in plain and "\x1b[" not in plain
    _, coloured, _ = run(capsys, "explain", "--color", "always", "NCCL_SOCKET_IFNAME")
    assert "\x1b[1mNCCL_SOCKET_IFNAME\x1b[0m" in coloured


def test_explain_a_near_miss_suggests_the_spelling(capsys):
    code, _, err = run(capsys, "explain", "NCCL_SOCKET_IFNAM")
    assert code == 2 and "NCCL_SOCKET_IFNAME" in err.splitlines()[0]


def test_signatures_check_passes_on_the_library(capsys):
    code, out, _ = run(capsys, "signatures", "check")
    assert code == 0 and "0 problem(s)" in out


def test_signatures_check_reports_a_broken_directory(capsys, tmp_path):
    (tmp_path / "broken.toml").write_text('id = "other"\ntitle = "x"\n')
    code, out, _ = run(capsys, "signatures", "check", str(tmp_path))
    assert code == 1 and "broken.toml:1: id 'other' differs from the file name" in out


def test_client_fixture_report_is_current(capsys, monkeypatch):
    """The VS Code client's unit tests read this report; it must be what the engine says today."""
    fixture = ROOT / "client" / "test" / "unit" / "example-report.json"
    monkeypatch.chdir(ROOT)
    _, out, _ = run(capsys, "diagnose", "--format", "json", "examples/oom-cascade/train.log")
    assert json.loads(fixture.read_text()) == json.loads(out), \
        "regenerate: firstfault diagnose --format json examples/oom-cascade/train.log > " + str(fixture)


def test_signatures_docs_writes_pages_and_refuses_a_file(capsys, tmp_path):
    code, out, _ = run(capsys, "signatures", "docs", str(tmp_path / "pages"))
    assert code == 0 and (tmp_path / "pages" / "index.md").is_file() and "pages to" in out
    target = tmp_path / "a-file"
    target.write_text("x")
    code, _, err = run(capsys, "signatures", "docs", str(target))
    assert code == 2 and "not a directory" in err
