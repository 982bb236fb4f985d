"""Forms a pattern's regex accepts that none of its literals reaches. The automaton hands the regex only lines that
hold a literal, so such a form is never read: `(?:ncclInvalidUsage|invalid usage)` beside the literal
"ncclInvalidUsage" reads the second alternative nowhere.

The regex is spelt out into the texts its matches must hold, one list per way through its alternations and optional
parts (a character class of one letter's cases counts as that letter, whitespace and its repeats as one space;
anything else breaks the text there). A way whose texts hold none of the literals is reported. This is a writer's
aid: a regex looser than any real line is harmless, and a literal that spans a break (a class of quote marks, a `.`)
shows as a gap although the usual line holds it.
"""

from __future__ import annotations

try:
    import re._parser as _sre_parse  # Python 3.11+
    from re._constants import (
        AT, ASSERT, BRANCH, CATEGORY, CATEGORY_SPACE, IN, LITERAL, MAX_REPEAT, MIN_REPEAT, POSSESSIVE_REPEAT, SUBPATTERN,
    )
except ImportError:  # pragma: no cover - a Python whose re is laid out otherwise reports nothing
    _sre_parse = None

# Ways through a regex spelt out at most; a regex with more is read up to here.
MAX_WAYS = 512
BREAK = None  # anything that is not one known character


def unread_forms(regex, literals: tuple[str, ...], limit: int = 4) -> list[str]:
    """Up to `limit` of the forms of `regex` (a compiled pattern, or a user pack's BoundedRegex: anything with
    `.pattern`) that hold none of the (lower-case) literals, each as its texts joined with ' … '."""
    if _sre_parse is None:
        return []
    try:
        parsed = _sre_parse.parse(regex.pattern, getattr(regex, "flags", 0))
    except Exception:  # it compiled already; a parser that disagrees only costs the report
        return []
    found: list[tuple[str, ...]] = []
    for way in _ways(list(parsed)):
        texts = _texts(way)
        if any(lit in text for lit in literals for text in texts):
            continue
        # A form that only adds texts after one already found says nothing new.
        if not any(texts[:len(f)] == f for f in found):
            found.append(texts)
            if len(found) == limit:
                break
    return [" … ".join(texts) for texts in found]


def _one_char(op, av) -> str | None:
    if op is LITERAL:
        return chr(av).lower()
    if op is IN:
        chars = set()
        for item_op, item in av:
            if item_op is LITERAL:
                chars.add(chr(item).lower())
            elif item_op is CATEGORY and item is CATEGORY_SPACE:
                chars.add(" ")
            else:
                return BREAK
        return chars.pop() if len(chars) == 1 else BREAK
    return BREAK


def _ways(items: list) -> list[list]:
    ways: list[list] = [[]]
    for op, av in items:
        char = _one_char(op, av)
        if char is not BREAK:
            ways = [w + [char] for w in ways]
            continue
        if op is AT:
            continue
        if op is SUBPATTERN:
            parts = _ways(list(av[3]))
        elif op is BRANCH:
            parts = [p for alternative in av[1] for p in _ways(list(alternative))]
        elif op in (MAX_REPEAT, MIN_REPEAT, POSSESSIVE_REPEAT):
            low, high, body = av
            inner = _ways(list(body))
            if inner == [[" "]]:  # `\s+` or `\s*` between words: logs put one space there
                parts = ([[]] if low == 0 else []) + inner
            elif (low, high) == (0, 1):
                parts = [[]] + inner
            else:
                parts = ([[BREAK]] if low == 0 else []) + [[BREAK] + p + [BREAK] for p in inner]
        elif op is ASSERT:  # a lookaround's text must be in the line too
            parts = [[BREAK] + p + [BREAK] for p in _ways(list(av[1]))]
        else:
            parts = [[BREAK]]
        ways = [w + p for w in ways for p in parts][:MAX_WAYS]
    return ways


def _texts(way: list) -> tuple[str, ...]:
    texts, current = [], []
    for char in [*way, BREAK]:
        if char is not BREAK:
            current.append(char)
            continue
        if text := "".join(current).strip():
            texts.append(text)
        current = []
    return tuple(texts)
