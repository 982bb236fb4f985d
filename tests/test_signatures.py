import re
from pathlib import Path

import pytest

from conftest import REFERENCE_HEAD
from firstfault.commands import fill
from firstfault.loader import builtin_dir, load_library, load_reference
from firstfault.model import Command

GOOD = REFERENCE_HEAD.format(id="my-ref") + '''
[[patterns]]
id = "p"
literals = ["boom happened"]
regex = 'boom happened on (?P<iface>\\w+)'
role = "cause"
emitter = "python"
match = ["boom happened on eth0", "boom happened on ib0"]
near_miss = ["boom happened"]
'''


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_builtin_library_loads_without_errors():
    library = load_library()
    assert library.errors == []
    assert len(library.references) >= 15
    assert all(ref.id == ref.source.stem for ref in library.references.values())


def test_a_bad_file_does_not_stop_the_others(tmp_path):
    write(tmp_path, "my-ref.toml", GOOD)
    write(tmp_path, "bad.toml", "id = [unclosed\n")
    library = load_library([tmp_path], include_builtin=False)
    assert list(library.references) == ["my-ref"]
    assert len(library.errors) == 1
    assert str(library.errors[0]).startswith(f"{tmp_path / 'bad.toml'}:1: not valid TOML: ")


@pytest.mark.parametrize("change, line, words", [
    (("regex = 'boom happened on (?P<iface>\\w+)'", "regex = 'boom (happened'"), 14, "does not compile"),
    (('role = "cause"', 'role = "reason"'), 15, "write one of: cause"),
    (('literals = ["boom happened"]', 'literals = ["never printed"]'), 13, "occurs in none of its match"),
    (('near_miss = ["boom happened"]', 'near_miss = ["boom happened on eth1"]'), 18, "matches its near miss"),
    (('references = ["https://example.org/x"]', 'references = ["see the wiki"]'), 9, "is not a URL"),
    (('id = "my-ref"', 'id = "other"'), 1, "differs from the file name"),
    (('match = ["boom happened on eth0", "boom happened on ib0"]', 'match = ["boom happened on eth0"]'), 1,
     "fewer than 2 match examples"),
    (('near_miss = ["boom happened"]', 'near_miss = []'), 1, "no near_miss example"),
], ids=["regex", "role", "literal", "near-miss", "url", "id", "one-example", "no-near-miss"])
def test_validation_errors_point_at_the_line_and_say_what_to_write(tmp_path, change, line, words):
    old, new = change
    ref, errors = load_reference(write(tmp_path, "my-ref.toml", GOOD.replace(old, new)))
    assert ref is None
    assert any(e.line == line and words in e.message for e in errors), [str(e) for e in errors]


@pytest.mark.parametrize("literal, ok", [("boo", False), ("boom", True), ("│ ❱", True)],
                         ids=["three-ascii", "four-ascii", "three-characters-seven-bytes"])
def test_a_literal_needs_four_bytes_so_one_beyond_ascii_counts_for_several(tmp_path, literal, ok):
    # rich's traceback marks a frame's line with "│ ❱": three characters, as rare in logs as a long ASCII literal
    text = GOOD.replace('literals = ["boom happened"]', f'literals = ["boom happened", "{literal}"]')
    text = text.replace('match = ["boom happened on eth0", "boom happened on ib0"]',
                        f'match = ["boom happened on eth0 {literal}", "boom happened on ib0"]')
    ref, errors = load_reference(write(tmp_path, "my-ref.toml", text))
    assert (ref is not None) == ok, [str(e) for e in errors]
    assert ok or any("shorter than 4 bytes" in e.message for e in errors)


def test_user_directory_adds_references_and_duplicates_are_refused(tmp_path):
    write(tmp_path, "my-ref.toml", GOOD)
    dup = tmp_path / "again"
    dup.mkdir()
    write(dup, "my-ref.toml", GOOD)
    library = load_library([tmp_path])
    assert "my-ref" in library.references and "cuda-oom" in library.references
    assert any("already defined" in e.message for e in library.errors)


def test_disabled_references_are_left_out():
    assert "cuda-oom" not in load_library(disabled=frozenset({"cuda-oom"})).references


def test_builtin_dir_is_the_repository_signatures_folder():
    assert (builtin_dir() / "device" / "cuda-oom.toml").is_file()


@pytest.mark.parametrize("value, expected, complete", [
    ("mlx5_1", ("ibstat", "mlx5_1"), True),
    ("eth0; rm -rf /", ("ibstat", "<hca>"), False),
    ("$(reboot)", ("ibstat", "<hca>"), False),
    ("-rf", ("ibstat", "<hca>"), False),
], ids=["plain", "shell-metacharacters", "substitution", "option-injection"])
def test_captured_values_are_validated_before_they_reach_a_command(value, expected, complete):
    cmd = fill(Command("t", ("ibstat", "{hca}")), {"hca": value})
    assert (cmd.argv, cmd.complete) == (expected, complete)


@pytest.mark.parametrize("name, value, ok", [
    ("host", "gpu-node-a", True), ("host", "ip-10-0-142-242.ec2.internal", True), ("host", "10.0.1.75", True),
    ("host", "fe80::1", True), ("host", "ssh://user@host:22", False), ("host", "user@host", False),
    ("host", "../../etc", False), ("host", "/etc/shadow", False), ("host", "-oProxyCommand=x", False),
    ("host", "hôte", False), ("peer", "a" * 64, False), ("node_ip", "gpu-node-a", False),
    ("port", "29500", True), ("port", "０１２３", False), ("port", "٢٩٥٠٠", False), ("port", "70000", False),
    ("port", "0", False), ("jobid", "123456", True), ("jobid", "123_4", True), ("jobid", "12;rm", False),
    ("iface", "eth0", True), ("iface", "bond0.100", True), ("iface", "ｅｔｈ０", False),
    ("iface", "averyveryverylongname", False), ("hca", "mlx5_bond_0", True), ("hca", "mlx5/0", False),
    ("path", "/sys/class/pci_bus/0000:21/../../0000:21:00.0", False), ("path", "/sys/bus/pci/devices", True),
], ids=lambda v: repr(v)[:24] if isinstance(v, str) else str(v))
def test_each_captured_value_is_checked_by_its_kind(name, value, ok):
    from firstfault.commands import valid

    assert valid(name, value) is ok


def test_a_part_left_to_the_user_makes_the_command_incomplete():
    cmd = fill(Command("t", ("sacct", "-j", "<jobid>", "--format=JobID,State")), {})
    assert not cmd.complete and cmd.argv[2] == "<jobid>"
    assert fill(Command("t", ("sh", "-c", "dmesg -T 2>/dev/null | tail")), {}).complete


def test_command_string_is_shell_quoted():
    cmd = fill(Command("t", ("rg", "-F", "CUDA out of memory", "{log}")), {"log": "/logs/my run/rank0.log"})
    assert not cmd.complete  # a value from the log with a space is outside the safe set
    cmd = fill(Command("t", ("rg", "-F", "CUDA out of memory", "{log}")), {"log": "/logs/rank0.log"})
    assert cmd.command == "rg -F 'CUDA out of memory' /logs/rank0.log"


@pytest.mark.parametrize("path, argv_path, command_path", [
    ("/logs/my run/rank0.log", "/logs/my run/rank0.log", "'/logs/my run/rank0.log'"),
    ("wörk space/$(reboot).log", "wörk space/$(reboot).log", "'wörk space/$(reboot).log'"),
    ("-rf.log", "./-rf.log", "./-rf.log"),
], ids=["space", "non-ascii-and-metacharacters", "leading-dash"])
def test_the_users_own_log_path_is_quoted_not_refused(path, argv_path, command_path):
    cmd = fill(Command("t", ("rg", "-F", "CUDA out of memory", "{log}")), {"log": "/from/the/log"}, {"log": path})
    assert cmd.complete and cmd.argv[-1] == argv_path
    assert cmd.command == "rg -F 'CUDA out of memory' " + command_path


def test_unknown_needs_pattern_is_reported(tmp_path):
    write(tmp_path, "my-ref.toml", GOOD.replace('role = "cause"', 'role = "cause"\nneeds = ["no-such-pattern"]', 1))
    library = load_library([tmp_path], include_builtin=False)
    assert [e.message.split(";")[0] for e in library.errors] == [
        "'needs' of pattern 'p' names pattern 'no-such-pattern', which no reference defines"]


def test_unknown_related_id_is_reported_at_its_line(tmp_path):
    write(tmp_path, "my-ref.toml", GOOD.replace("references = [", 'related = ["nope"]\nreferences = ['))
    library = load_library([tmp_path], include_builtin=False)
    assert [(e.line, e.message.split(";")[0]) for e in library.errors] == [
        (9, "related id 'nope' is not a known reference")]


def test_log_placeholder_is_filled_only_for_a_file(tmp_path):
    """Text without a file (stdin, a selection, a terminal) keeps <log>: there is nothing to run rg on."""
    from firstfault.engine import Engine

    line = "r11i6n2:486514:486651 [1] include/socket.h:403 NCCL WARN Connect to 10.148.3.247<56821> failed : Connection refused\n"
    engine = Engine(load_library())
    from_text = engine.analyze_text(line, "terminal: torchrun train.py").diagnoses[0]
    log = tmp_path / "my run.log"
    log.write_text(line)
    from_file = engine.analyze_paths([str(log)]).diagnoses[0]
    rg_text = next(v for v in from_text.verify if v.argv[0] == "rg")
    rg_file = next(v for v in from_file.verify if v.argv[0] == "rg")
    assert not rg_text.complete and rg_text.argv[-1] == "<log>"
    assert rg_file.complete and rg_file.argv[-1] == str(log)


def test_every_sample_log_ships_with_the_package():
    """An installed copy has only what pyproject force-includes; a sample elsewhere would fail `signatures check`."""
    import tomllib

    repo = builtin_dir().parent
    shipped = tomllib.loads((repo / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"]["wheel"][
        "force-include"]
    samples = [s.path.resolve() for r in load_library().references.values() for s in r.samples]
    assert samples
    outside = [p for p in samples if not any(p.is_relative_to((repo / src).resolve()) for src in shipped)]
    assert outside == []
    # ...and each lands where its relative path points from the installed signatures folder.
    for src, dest in shipped.items():
        assert Path(dest) == Path("firstfault") / src


def test_a_verify_command_when_names_only_patterns_of_its_reference(tmp_path):
    src = (builtin_dir() / "communication" / "collective-timeout.toml").read_text()
    (tmp_path / "x.toml").write_text(src.replace('id = "collective-timeout"', 'id = "x-timeout"', 1)
                                     .replace('when = ["gloo-op-timeout"]', 'when = ["no-such-pattern"]'))
    library = load_library([tmp_path], include_builtin=False)
    assert any("'when' names no-such-pattern" in str(e) for e in library.errors)


def test_a_regex_that_needs_the_end_of_the_line_must_say_why(tmp_path):
    """Pastes are cut: a pattern whose examples all stop matching when cut after the literal is refused, unless
    it says with `tail` why the end of the line decides."""
    src = (builtin_dir() / "hardware" / "xid-79-fallen-off-bus.toml").read_text()
    renamed = src.replace('id = "xid-79-fallen-off-bus"', 'id = "x-79"', 1)
    without_reason = "\n".join(line for line in renamed.splitlines() if not line.startswith("tail = "))
    (tmp_path / "x-79.toml").write_text(without_reason)
    errors = [str(e) for e in load_library([tmp_path], include_builtin=False).errors]
    assert any("needs the end of the line" in e and "nvrm-xid-79" in e for e in errors)
    (tmp_path / "x-79.toml").write_text(renamed)
    assert not any("needs the end of the line" in str(e) for e in load_library([tmp_path], include_builtin=False).errors)


def _commands_on_their_own_examples():
    """Every reference's verify commands, filled with the captures of each of its match examples (and empty)."""
    library = load_library()
    for ref in library.references.values():
        captures = [{}]
        for pattern in ref.patterns:
            captures += [{k: v for k, v in m.groupdict().items() if v is not None}
                         for example in pattern.match if (m := pattern.regex.search(example))]
        for command in ref.verify:
            for values in captures:
                yield ref.id, command, fill(command, values)


def test_every_command_reads_as_it_runs():
    """What every surface shows (`command`) is what runs (`argv`): no raw {placeholder}, and a POSIX shell splits
    it back into exactly the argv, so no metacharacter is left unquoted; a bare `sh -c` script is shown as itself,
    and the loader keeps values from the log out of scripts."""
    import shlex

    walked = 0
    for ref_id, template, cmd in _commands_on_their_own_examples():
        walked += 1
        assert not re.search(r"\{\w+\}", cmd.command), (ref_id, cmd.command)
        if len(cmd.argv) == 3 and cmd.argv[:2] in (("sh", "-c"), ("bash", "-c")):
            assert cmd.command == template.argv[2], (ref_id, cmd.command)
        else:
            assert tuple(shlex.split(cmd.command)) == cmd.argv, (ref_id, cmd.command)
    assert walked > 300


def test_a_placeholder_inside_a_shell_script_is_refused(tmp_path):
    src = (builtin_dir() / "scheduler" / "slurm-task-launch-failed.toml").read_text()
    bad = src.replace('id = "slurm-task-launch-failed"', 'id = "x-launch"', 1).replace(
        'argv = ["sh", "-c", "date -u +%s; ssh \\"$1\\" date -u +%s", "sh", "{node}"]',
        'argv = ["sh", "-c", "date -u +%s; ssh {node} date -u +%s"]')
    assert bad != src.replace('id = "slurm-task-launch-failed"', 'id = "x-launch"', 1)
    (tmp_path / "x.toml").write_text(bad)
    errors = [str(e) for e in load_library([tmp_path], include_builtin=False).errors]
    assert any("placeholder inside a shell script" in e for e in errors)


@pytest.mark.parametrize("standalone, message", [
    ('"no"', "'standalone' of pattern 'p' must be true or false"),
    ("false", "'standalone = false' of pattern 'p' means something only beside 'needs'"),
])
def test_standalone_is_a_boolean_beside_needs(tmp_path, standalone, message):
    write(tmp_path, "my-ref.toml", GOOD.replace('role = "cause"', f'role = "cause"\nstandalone = {standalone}', 1))
    assert [e.message.split(";")[0] for e in load_library([tmp_path], include_builtin=False).errors] == [message]


@pytest.mark.parametrize("key", ["generic", "continuation", "paste_only"])
def test_a_pattern_flag_is_a_boolean(tmp_path, key):
    """A quoted "false" would read as true: it is refused, like 'standalone'."""
    write(tmp_path, "my-ref.toml", GOOD.replace('role = "cause"', f'role = "cause"\n{key} = "false"', 1))
    assert [e.message.split(";")[0] for e in load_library([tmp_path], include_builtin=False).errors] == [
        f"'{key}' of pattern 'p' must be true or false"]


@pytest.mark.parametrize("repeats, message", [
    ("0", "'repeats_alone' of pattern 'p' must be a whole number of at least 1"),
    ('"3"', "'repeats_alone' of pattern 'p' must be a whole number of at least 1"),
    ("3", "'repeats_alone' of pattern 'p' means something only beside 'needs'"),
])
def test_repeats_alone_is_a_count_beside_needs(tmp_path, repeats, message):
    write(tmp_path, "my-ref.toml", GOOD.replace('role = "cause"', f'role = "cause"\nrepeats_alone = {repeats}', 1))
    assert [e.message.split(";")[0] for e in load_library([tmp_path], include_builtin=False).errors] == [message]


@pytest.mark.parametrize("once_per", ["claimed_rank", "iface claimed_rank"])
def test_once_per_must_name_groups_of_the_regex(tmp_path, once_per):
    write(tmp_path, "my-ref.toml", GOOD.replace('role = "cause"', f'role = "cause"\nonce_per = "{once_per}"', 1))
    library = load_library([tmp_path], include_builtin=False)
    assert [e.message.split(";")[0] for e in library.errors] == [
        "'once_per' of pattern 'p' names group 'claimed_rank', which its regex does not have"]
    write(tmp_path, "my-ref.toml", GOOD.replace('role = "cause"', 'role = "cause"\nonce_per = "iface"', 1))
    assert load_library([tmp_path], include_builtin=False).errors == []


@pytest.mark.parametrize("suggests, message", [
    ('reference = "my-ref"\ncapture = "nope"\nvalues = ["eth0"]\nwhy = "w"',
     "suggests: capture 'nope' is no named group of this file's regexes"),
    ('reference = "no-such-ref"\ncapture = "iface"\nvalues = ["eth0"]\nwhy = "w"',
     "suggests 'no-such-ref', which is not a known reference"),
    ('reference = "my-ref"\npattern = "nope"\nwhy = "w"', "suggests: pattern 'nope' is no pattern of this file"),
    ('reference = "my-ref"\ncapture = "iface"\nwhy = "w"', "suggests: a capture needs the values it must take"),
])
def test_a_suggestion_names_a_group_of_its_regexes_and_a_known_reference(tmp_path, suggests, message):
    text = GOOD + "\n[[suggests]]\n" + suggests + "\n"
    write(tmp_path, "my-ref.toml", text)
    library = load_library([tmp_path], include_builtin=False)
    assert [e.message.split(";")[0] for e in library.errors] == [message]
    table = text.splitlines().index("[[suggests]]") + 1
    assert library.errors[0].line in (table, table + 1)

