"""The prefilter only decides which lines the full automaton reads: with it, every chunk must give exactly the hit
lines and candidates that the full automaton gives over the whole chunk. Both of its paths are checked: Hyperscan
(where a wheel exists) and the anchored automaton."""

import copy
import io

import ahocorasick
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import firstfault.prefilter as prefilter_module
from conftest import CLEAN
from firstfault.matcher import Matcher
from firstfault.prefilter import WINDOW, Prefilter, _anchorable, choose_anchors
from firstfault.reader import ascii_lower, iter_chunks


def straightforward_hit_lines(matcher: Matcher, chunk) -> list:
    """The path without a prefilter: the full automaton over the whole lower-cased chunk."""
    text = chunk.text
    lowered = ascii_lower(text)
    lines: dict[int, set[int]] = {}
    for end, indices in matcher.automaton.iter(lowered):
        lines.setdefault(lowered.rfind("\n", 0, end) + 1, set()).update(indices)
    return [(chunk.first_line + text.count("\n", 0, start), text.count("\n", 0, start), start, lines[start])
            for start in sorted(lines)]


def assert_same_hits(matcher: Matcher, data: bytes, chunk_bytes: int = 1 << 20) -> int:
    hits = 0
    for chunk in iter_chunks(io.BytesIO(data), chunk_bytes):
        expected = straightforward_hit_lines(matcher, chunk)
        assert list(matcher._hit_lines(chunk)) == expected
        hits += len(expected)
    return hits


@pytest.fixture(params=["hyperscan", "anchored"])
def matcher(request, engine) -> Matcher:
    """The engine's matcher with the prefilter of one path."""
    hyperscan = request.param == "hyperscan"
    if hyperscan and prefilter_module.hyperscan is None:
        pytest.skip("no Hyperscan wheel for this platform")
    chosen = copy.copy(engine.matcher)
    chosen.prefilter = Prefilter(engine.matcher.prefilter.literals, engine.matcher.automaton, use_hyperscan=hyperscan)
    assert (chosen.prefilter.database is not None) == hyperscan
    return chosen


def library_lines(engine) -> list[str]:
    return [line for p in engine.matcher.patterns for line in p.match]


def test_every_library_example_is_found_as_the_full_automaton_finds_it(engine, matcher):
    lines = library_lines(engine)
    assert len(lines) > 1000
    data = "\n".join(lines).encode()
    assert assert_same_hits(matcher, data) >= len(lines) * 0.9


def test_edge_inputs_give_the_same_hits(engine, matcher):
    lines = library_lines(engine)[::7]
    variants = [
        "\r\n".join(lines),  # CRLF
        "\r".join(lines),  # lone CR (progress bars)
        "\n".join(line.upper() for line in lines),
        "\n".join(line.replace("k", "\u212a").replace("K", "\u212a") for line in lines),  # Kelvin sign lowers to k
        "\n".join(line.replace("i", "\u0130").replace("I", "\u0130") for line in lines),  # dotted I lowers to i
        "\n".join(f"\x1b[31m{line[:9]}\x1b[0m{line[9:]}" for line in lines),  # colour inside a literal
        "\n".join(f"\x1b]633;C\x07{line}" for line in lines),  # VS Code's shell integration marks
        "\ufeff" + "\n".join(lines),  # BOM
        "\n".join("x" * (WINDOW - len(line) // 2) + line for line in lines[:40]),  # literals across window edges
        "x" * (3 * WINDOW) + " ".join(lines[:50]),  # one line longer than several windows
    ]
    for text in variants:
        assert assert_same_hits(matcher, text.encode()) > 0
    invalid = b"\xff\xfe".join(line.encode() for line in lines)
    assert assert_same_hits(matcher, invalid) > 0
    # A line longer than a chunk, cut near the chunk's boundary.
    assert assert_same_hits(matcher, ("y" * 5000 + lines[0] + "\n" + lines[1]).encode(), chunk_bytes=4096)
    # Literals repeated along one line far longer than LONG_LINE: the scan starts again after it.
    assert assert_same_hits(matcher, ("NCCL WARN " * 20000 + "\n" + lines[2] + "\n").encode()) == 2


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(["NCCL WARN", "out of memory", "Timeout", "rank", "\n", "\r\n", " ", "x" * 50,
                                 "\u212a", "\u0130", "\x1b[0m", "RuntimeError:", "Error", "error:", "killed",
                                 "watchdog", "ChildFailedError", "exitcode", "\xff", "\xe9"]), max_size=60))
def test_random_text_gives_the_same_hits(matcher, parts):
    assert_same_hits(matcher, "".join(parts).encode("utf-8", "surrogatepass"), chunk_bytes=256)


@pytest.mark.parametrize("use_hyperscan", [True, False])
def test_every_literal_is_flagged_in_its_own_line_whatever_its_case(use_hyperscan):
    literals = ["nccl warn", "cuda out of memory", "a", "killed", "ab", "segmentation fault"]
    full = ahocorasick.Automaton()
    for literal in literals:
        full.add_word(literal, literal)
    full.make_automaton()
    prefilter = Prefilter(literals, full, use_hyperscan=use_hyperscan)
    for literal in literals:
        for text in (literal, literal.upper(), f"pre {literal.upper()} post\nnext"):
            assert list(prefilter.line_starts(text)) == [0]
    assert list(prefilter.line_starts("nothing here\nor there")) == []


def test_anchors_cover_every_literal_and_avoid_common_characters():
    literals = ["nccl warn", "cuda out of memory", "timeout", "segmentation fault", "killed"]
    anchors = choose_anchors(literals)
    assert all(any(c in anchors for c in literal) for literal in literals)
    assert " " not in anchors and "e" not in anchors


def test_on_healthy_logs_the_prefilter_passes_few_lines_to_the_full_automaton(matcher):
    # The prefilter's purpose: most lines of a healthy log hold no literal and never reach the full automaton. One
    # anchor too many (a common letter) once sent 70% of these lines through; the pruned anchors send 18%.
    text = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in sorted(CLEAN.glob("*.log")))
    text = "".join(c if c.isascii() else "?" for c in text)
    flagged = len(list(matcher.prefilter.line_starts(text)))
    assert flagged <= 0.3 * text.count("\n"), f"{flagged} of {text.count(chr(10))} lines flagged"


def test_no_anchor_is_kept_whose_literals_the_other_anchors_cover():
    literals = ["error:", "killed", "timed out waiting", "segmentation fault", "nccl warn"]
    anchors = choose_anchors(literals)
    for anchor in anchors:
        rest = anchors - {anchor}
        assert not all(set(_anchorable(lit)) & rest for lit in literals), anchor


def test_an_anchor_that_rarer_letters_can_replace_is_swapped_out():
    # The greedy pass takes "p" first (it covers two literals), then "r" for "error('"; "r" also covers "process name:",
    # so "p" is left holding only "deepep timeout for", whose rarer "m" does the same for less marker traffic.
    literals = ["error('", "process name:", "deepep timeout for"]
    assert choose_anchors(literals) == {"m", "r"}


def test_hyperscan_finds_a_literal_of_other_characters_in_the_window_bytes():
    """Hyperscan holds every literal's UTF-8 bytes, so a window with other text stays on it whatever the literals: a
    literal that is not ASCII once sent every such window to the full automaton (the clean corpus, whose progress bars
    are not ASCII, took twice the time) and was found there, so only the literals Hyperscan names show the path."""
    if prefilter_module.hyperscan is None:
        pytest.skip("no Hyperscan wheel for this platform")
    literals = ["核心已转储", "nccl warn"]
    full = ahocorasick.Automaton()
    for literal in literals:
        full.add_word(literal, literal)
    full.make_automaton()
    prefilter = Prefilter(literals, full)
    text = "行 57: 段错误 (核心已转储) python\n进度 ██ 100%\nh:1:2 [0] NCCL WARN é\n"
    hits = list(prefilter.hits(text))
    assert [start for start, _ in hits] == [0, text.index("h:1:2")]
    assert [{prefilter.hyperscan_literals[i] for i in found} for _, found in hits] == [{"核心已转储"}, {"nccl warn"}]
