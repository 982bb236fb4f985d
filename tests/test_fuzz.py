"""Property-based tests (issue 15): whatever a log holds, the engine answers and both renderers and the JSON
report stay well-formed; whatever a user's signature pack holds, loading it never raises and the built-ins stay.
`make test` runs a bounded number of examples; `make fuzz` (HYPOTHESIS_PROFILE=fuzz) runs thousands."""

from __future__ import annotations

import json
import os
import re
import tomllib
from functools import lru_cache

from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import CLEAN, EXAMPLES, REALRUN
from firstfault.engine import Engine
from firstfault.loader import load_library
from firstfault.render import Style, brief_report, dumps, markdown_report, text_report

settings.register_profile("default", max_examples=25, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
settings.register_profile("fuzz", max_examples=3000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@lru_cache(maxsize=1)
def _engine() -> Engine:
    return Engine()


@lru_cache(maxsize=1)
def _real_lines() -> list[str]:
    paths = [*sorted(REALRUN.glob("*.log")), *sorted(CLEAN.glob("*.log")), EXAMPLES / "oom-cascade" / "train.log"]
    return [line for p in paths for line in p.read_text(errors="replace").splitlines() if line.strip()]


def _check(text: str) -> None:
    """What must hold for any input: a report, valid JSON, three renderings, places inside the input."""
    report = _engine().analyze_text(text, "fuzz.log")
    data = json.loads(dumps(report.to_json()))
    assert isinstance(data["diagnoses"], list)
    for rendered in (text_report(report, Style(False)), text_report(report, Style(True)), markdown_report(report),
                     brief_report(report)):
        assert isinstance(rendered, str) and rendered.endswith("\n")
    lines = report.inputs[0].lines if report.inputs else 0
    for d in report.diagnoses:
        if d.initiator is not None and d.initiator.line is not None:
            assert 1 <= d.initiator.line <= max(lines, 1)
        assert 0.0 <= d.confidence <= 1.0
        for c in d.verify:
            assert not re.search(r"\{\w+\}", c.command)


# Text people paste and logs contain: any code point (surrogates, NUL, U+2028, U+0085, form feeds), escapes.
ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=2000)
LOG_ALPHABET = st.sampled_from(["\n", "\r\n", "\r", "\x1b[31m", "\x1b[0m", "\x1b]633;A\x07", "\x00", "\u2028",
                                "\u0085", "\x0c", "\ufeff", "\u0130", "\u212a", "[rank3]:", "[default1]:",
                                "Traceback (most recent call last):", "NCCL WARN ", "Error: ", "exitcode: -9",
                                "nranks 99999999999999", "rank 4294967296", "9" * 60])


@given(ANY_TEXT)
def test_any_unicode_text(text):
    _check(text)


@given(st.lists(st.one_of(LOG_ALPHABET, st.text(max_size=40)), max_size=60).map("".join))
def test_log_shaped_noise(text):
    _check(text)


@given(st.binary(max_size=4000))
def test_random_bytes_from_a_file(tmp_path_factory, data):
    from firstfault.reader import InputError

    path = tmp_path_factory.mktemp("bytes") / "x.log"
    path.write_bytes(data)
    try:
        report = _engine().analyze_paths([path])
    except InputError:
        # Bytes that start like gzip are read as a .gz: a corrupt one is an input error, never a crash.
        assert data.startswith(b"\x1f\x8b")
        return
    json.loads(dumps(report.to_json()))
    text_report(report, Style(False))
    markdown_report(report)


def _mutate(line: str, how: str, other: str, number: str) -> str:
    if how == "truncate":
        return line[: len(line) // 2]
    if how == "splice":
        return line[: len(line) // 2] + other[len(other) // 2:]
    if how == "numbers":
        return re.sub(r"\d+", number, line)
    if how == "date":
        return re.sub(r"\d\d:\d\d:\d\d", "99:99:99", re.sub(r"\d{4}-\d\d-\d\d", "2024-13-45", line))
    if how == "prefix":
        return f"[rank{number}]:{line}"
    return line


MUTATED_LOG = st.lists(
    st.tuples(st.integers(min_value=0), st.integers(min_value=0),
              st.sampled_from(["keep", "truncate", "splice", "numbers", "date", "prefix"]),
              st.sampled_from(["0", "-1", "-9", "4294967297", "9" * 400, "1e309", "00007"])),
    min_size=1, max_size=80)


@given(MUTATED_LOG)
def test_real_lines_mutated(picks):
    lines = _real_lines()
    text = "\n".join(_mutate(lines[i % len(lines)], how, lines[j % len(lines)], number)
                     for i, j, how, number in picks)
    _check(text)


# Signature packs from the schema: the keys a reference has, with values of the right type or of any other.
JSONISH = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
                       lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                       max_leaves=12)
REGEXES = st.sampled_from(["x", "(", "(?P<rank>\\d+)", "(a+)+", "[", "\\", "(?P<x>.)(?P<x>.)", "a{99999}", "(?<=a+)b"])


@lru_cache(maxsize=1)
def _template() -> dict:
    from firstfault.loader import builtin_dir

    return tomllib.loads((builtin_dir() / "process" / "segfault-one-rank.toml").read_text())


def _toml(value) -> str:
    """A TOML value for any JSON-ish value (None has no TOML form: an empty string stands in)."""
    if value is None:
        return '""'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value) if not isinstance(value, float) or value == value and abs(value) != float("inf") else "0"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + "}"


@st.composite
def packs(draw) -> str:
    template = dict(_template())
    out = []
    for key, value in template.items():
        if key in ("patterns", "verify", "tests"):
            continue
        if draw(st.booleans()):
            value = draw(JSONISH)
        out.append(f"{key} = {_toml(value)}")
    for pattern in template.get("patterns", [])[: draw(st.integers(0, 3))]:
        out.append("[[patterns]]")
        for key, value in pattern.items():
            if key == "regex" and draw(st.booleans()):
                value = draw(REGEXES)
            elif draw(st.integers(0, 4)) == 0:
                value = draw(JSONISH)
            out.append(f"{key} = {_toml(value)}")
    for command in template.get("verify", [])[: draw(st.integers(0, 2))]:
        out.append("[[verify]]")
        out += [f"{k} = {_toml(draw(JSONISH) if draw(st.integers(0, 4)) == 0 else v)}" for k, v in command.items()]
    return "\n".join(out) + "\n"


@given(packs())
def test_generated_signature_packs_never_take_the_library_down(tmp_path_factory, pack):
    directory = tmp_path_factory.mktemp("pack")
    (directory / "fuzzed.toml").write_text(pack)
    # One file's problems stay its own (load_library reads file by file; test_hostile loads bad packs beside
    # the built-ins); here: loading it never raises, and what loads can scan.
    library = load_library([directory], include_builtin=False)
    assert all(e.path.name == "fuzzed.toml" for e in library.errors)
    if "fuzzed" in library.references:
        engine = Engine(library)
        for pattern in library.references["fuzzed"].patterns:
            for example in pattern.match[:2]:
                engine.analyze_text(example)
