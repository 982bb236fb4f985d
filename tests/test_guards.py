"""The text a regex's matches must hold (guards.py): what it reads from a regex, and that passing lines over by it
never changes a match of the library's patterns."""

import re

import pytest

from firstfault.guards import guard
from firstfault.matcher import starts_a_line


@pytest.mark.parametrize("regex, expected", [
    # horovod-stalled-rank-tensors: a lookbehind first, then the literal run
    (r"(?<![^\s:])(?:^|(?<=\s))(?P<blamed_rank>\d+)(?P<shutdown_marked>!)?: \[", (": [",)),
    # an alternation the whole regex needs: one text per alternative
    (r"(?:(?:^|[\s:])[Cc]onnect to (?P<peer>\S+)<(?P<port>\d+)>|\bCall to connect failed)(?P<reason> \w+)?",
     ("onnect to ", "Call to connect failed")),
    # a required capture group holds the longest run
    (r"\d\d:\d\d (?P<level>ERROR|CRITICAL)\b", ("ERROR", "CRITICAL")),
    # one string beats several
    (r"(?:ab|cd)xyz", ("xyz",)),
    # nothing a match must hold: optional, repeated, case-insensitive, too short, one alternative without text
    (r"(?:abcdef)?ghi?", ()),
    (r"(?:abcdef)+", ()),
    (r"(?i)cuda error", ()),
    (r"x(?i:cuda error)y", ()),
    (r"ab\d", ()),
    (r"(?:abcdef|\d+)", ()),
], ids=["literal-run", "alternation", "group", "single-beats-several", "optional", "repeated", "ignorecase",
        "scoped-ignorecase", "short", "alternative-without-text"])
def test_the_text_every_match_holds(regex, expected):
    assert guard(re.compile(regex)) == expected


def _patterns(engine):
    return engine.matcher.patterns


def test_every_library_example_holds_its_patterns_guard(engine):
    for pattern in _patterns(engine):
        needed = guard(getattr(pattern.regex, "compiled", pattern.regex))
        for example in pattern.match:
            assert not needed or any(text in example for text in needed), (pattern.id, needed, example)


def test_the_guard_changes_no_search_on_the_librarys_lines(engine):
    # Every example and near miss of every pattern, searched by every pattern: the same match with the guard as
    # without it.
    matcher = engine.matcher
    lines = sorted({line for p in _patterns(engine) for line in (*p.match, *p.near_miss)})
    for index, pattern in enumerate(_patterns(engine)):
        compiled = getattr(pattern.regex, "compiled", pattern.regex)
        for line in lines:
            guarded = matcher._search(index, line)
            plain = compiled.search(line)
            if plain is None and starts_a_line(pattern.regex.pattern):
                continue  # also tried after a launcher's prefix; the guard holds for the whole line either way
            assert (guarded is None) == (plain is None), (pattern.id, line)
