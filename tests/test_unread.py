"""Regex forms that no literal reaches: `signatures check --unread` lists them for a signature's writer."""

import re

import pytest

from firstfault.unread import unread_forms

from tests.test_cli import ROOT, run


@pytest.mark.parametrize("regex, literals, unread", [
    # Horovod's NCCL check before its literals held 'invalid usage' (horovod/common/ops/nccl_operations.cc)
    (r"nccl\w+ failed: (?:unhandled \w+ error|invalid usage)", ("failed: unhandled",),
     ["nccl … failed: invalid usage"]),
    (r"nccl\w+ failed: (?:unhandled \w+ error|invalid usage)", ("failed: unhandled", "failed: invalid usage"), []),
    # An optional part: the form without it is still reached when the literal is outside it
    (r"Local worker group finished \((?:WorkerState\.)?FAILED\)", ("local worker group finished (failed)",),
     ["local worker group finished (workerstate.failed)"]),
    # Case variants in a class read as one letter; whitespace as a space
    (r"[Cc]aught collective\s+operation timeout", ("caught collective operation timeout",), []),
    # A lookahead's text must be in the line too
    (r"(?=.*--node_rank)torchrun\b", ("--node_rank",), []),
    # Anything else breaks the text: the literal spans the break, so the form is reported
    (r"didn[’']t join", ("didn't join",), ["didn … t join"]),
])
def test_unread_forms(regex, literals, unread):
    assert unread_forms(re.compile(regex), literals) == unread


def test_a_form_that_only_adds_texts_is_not_reported_again():
    forms = unread_forms(re.compile(r"munge (?:en|de)code failed: (\w+)(?: \(retrying\))?"), ("munge decode failed",))
    assert forms == ["munge encode failed:"]


def test_signatures_check_lists_unread_forms_only_on_request(capsys, tmp_path):
    """A reference whose second alternative lost its literal: the check passes, and --unread names the form."""
    text = (ROOT / "signatures" / "hardware" / "gpu-power-cap.toml").read_text()
    text = text.replace('literals = ["SW Power Cap", "HW Power Brake Slowdown"]', 'literals = ["SW Power Cap"]')
    text = text.replace('  "        HW Power Brake Slowdown           : Active",\n', "")
    text = text.replace('related = ["gpu-thermal-throttle"]\n', "")  # not in this directory
    (tmp_path / "gpu-power-cap.toml").write_text(text)
    code, plain, _ = run(capsys, "signatures", "check", str(tmp_path))
    _, listed, _ = run(capsys, "signatures", "check", "--unread", str(tmp_path))
    note = "gpu-power-cap/smi-power-cap-active: no literal reaches 'hw power brake slowdown : active'"
    assert code == 0 and note not in plain and note in listed.splitlines()
