"""Load and validate signature files; one bad file never stops the others from loading."""

from __future__ import annotations

import functools
import re
import tomllib
from pathlib import Path
from typing import Any

import attrs

from firstfault.frameworks import FRAMEWORKS
from firstfault.knowledge import KNOWLEDGE_DIR
from firstfault.libcache import LazyRegex, ParsedCache
from firstfault.userregex import SECONDS_PER_SEARCH, BoundedRegex, SlowPattern

from firstfault.model import (
    CATEGORIES,
    OWN_PLACEHOLDERS,
    ROLES,
    SEVERITIES,
    STATUSES,
    TIERS,
    Command,
    Pattern,
    Reference,
    SampleTest,
    Suggestion,
    shell_script,
)

EMITTERS = (
    "nccl", "c10d", "gloo", "torchelastic", "cuda", "pytorch", "python", "kernel", "nvidia-driver",
    "vllm", "deepspeed", "slurm", "mpi", "rdma", "other",
)
MIN_LITERAL = 4
# Each reference's own tests: lines that must match and at least one that must not.
MIN_MATCH_EXAMPLES = 2
PLACEHOLDER = re.compile(r"\{(\w+)\}")
_TOML_LINE = re.compile(r"at line (\d+)")


@attrs.frozen
class LoadError:
    path: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


@attrs.define
class Library:
    """Every reference that loaded, and a sentence for each file or field that did not."""

    references: dict[str, Reference] = attrs.field(factory=dict)
    errors: list[LoadError] = attrs.field(factory=list)

    def patterns(self) -> list[Pattern]:
        return [p for ref in self.references.values() for p in ref.patterns]


def builtin_dir() -> Path:
    here = Path(__file__).resolve().parent
    packaged = here / "signatures"
    return packaged if packaged.is_dir() else here.parents[1] / "signatures"


def load_library(extra_dirs: list[Path] | tuple[Path, ...] = (), *, include_builtin: bool = True,
                 disabled: frozenset[str] = frozenset(), use_cache: bool = True) -> Library:
    """`use_cache`: take built-in files whose bytes passed every check before from the cache (libcache.py);
    `signatures check` turns it off so that every check runs."""
    library = Library()
    builtin = builtin_dir()
    dirs = ([builtin] if include_builtin else []) + [Path(d) for d in extra_dirs]
    cache = ParsedCache.open() if use_cache and include_builtin else None
    switched_off: list[Reference] = []
    for directory in dirs:
        if not directory.is_dir():
            library.errors.append(LoadError(directory, 0, "signature directory not found; "
                                            "check the path in your settings"))
            continue
        for path in sorted(directory.rglob("*.toml")):
            if path.name.startswith("_") or path.relative_to(directory).parts[0] == KNOWLEDGE_DIR:
                continue
            own = directory == builtin
            ref, errors = load_reference(path, untrusted=not own, cache=cache if own else None)
            library.errors.extend(errors)
            if ref is not None and ref.id in disabled:
                switched_off.append(ref)
            if ref is None or ref.id in disabled:
                continue
            if ref.id in library.references:
                first = library.references[ref.id].source
                library.errors.append(LoadError(path, 1, f"id '{ref.id}' is already defined in {first}; "
                                                "rename this file or remove one of them"))
                continue
            library.references[ref.id] = ref
    library.errors.extend(_cross_check(library, switched_off))
    if cache is not None:
        cache.save()
    return library


def _cross_check(library: Library, switched_off: list[Reference]) -> list[LoadError]:
    """Ids a reference names must exist; a disabled reference still counts as existing."""
    errors = []
    known_refs = set(library.references) | {r.id for r in switched_off}
    known_patterns = {p.id for p in library.patterns()} | {p.id for r in switched_off for p in r.patterns}
    for ref in library.references.values():
        for rid in ref.related:
            if rid not in known_refs:
                errors.append(LoadError(ref.source, _source_line(ref, "related"),
                                        f"related id '{rid}' is not a known reference; "
                                        "write the id of an existing file in signatures/"))
        for suggestion in ref.suggests:
            if suggestion.reference not in known_refs:
                errors.append(LoadError(ref.source, _source_line(ref, "reference"),
                                        f"suggests '{suggestion.reference}', which is not a known reference; "
                                        "write the id of an existing file in signatures/"))
        for pid in ref.against:
            if pid not in known_patterns:
                errors.append(LoadError(ref.source, _source_line(ref, "against"),
                                        f"'against' names pattern '{pid}', which no reference defines; "
                                        "write a pattern id from any signature file"))
        for pattern in ref.patterns:
            for key, pids in (("needs", pattern.needs), ("unless", pattern.unless), ("recovers", pattern.recovers)):
                for pid in pids:
                    if pid not in known_patterns:
                        errors.append(LoadError(ref.source, _source_line(ref, key),
                                                f"'{key}' of pattern '{pattern.id}' names pattern '{pid}', which no "
                                                "reference defines; write a pattern id from any signature file"))
    return errors


def _source_line(ref: Reference, key: str) -> int:
    """Line of `key` in the reference's file; the file is read again only when an error needs it."""
    return _line_of(ref.source.read_text(encoding="utf-8"), key) if ref.source else 0


# Line numbers are looked up for every key of every pattern: split each file once (a 5,000-pattern file must
# not cost a split per key).
@functools.lru_cache(maxsize=4)
def _lines(text: str) -> list[str]:
    return text.splitlines()


@functools.lru_cache(maxsize=16)
def _table_lines(text: str, table: str) -> list[int]:
    return [i + 1 for i, line in enumerate(_lines(text)) if line.strip() == f"[[{table}]]"]


def _line_of(text: str, key: str, after: int = 0) -> int:
    """1-based line of the first `key =` at or after line `after`; the file's first line if absent."""
    lines = _lines(text)
    assignment = re.compile(rf"\s*{re.escape(key)}\s*=")
    for i in range(max(after - 1, 0), len(lines)):
        if assignment.match(lines[i]):
            return i + 1
    return max(after, 1)


def _table_line(text: str, table: str, index: int) -> int:
    found = _table_lines(text, table)
    return found[index] if index < len(found) else 1


class _Checker:
    """Collects validation errors with the file line each one points at."""

    def __init__(self, path: Path, text: str, checked: bool = False):
        self.path = path
        self.text = text
        # These bytes passed every check before (libcache.py): what only examines examples and regexes is skipped.
        self.checked = checked
        self.errors: list[LoadError] = []

    def fail(self, line: int, message: str) -> None:
        self.errors.append(LoadError(self.path, line, message))

    def string(self, data: dict[str, Any], key: str, *, line_from: int = 0, required: bool = True,
               choices: tuple[str, ...] = ()) -> str:
        value = data.get(key)
        if value is None:
            if required:
                self.fail(line_from or 1, f"missing '{key}'; add {key} = \"...\"")
            return ""
        if not isinstance(value, str) or not value.strip():
            self.fail(_line_of(self.text, key, line_from), f"'{key}' must be a non-empty string")
            return ""
        if choices and value not in choices:
            self.fail(_line_of(self.text, key, line_from), f"'{key}' is '{value}'; write one of: {', '.join(choices)}")
            return ""
        return value.strip()

    def tables(self, data: dict[str, Any], key: str) -> list[dict[str, Any]]:
        """An array of tables ([[key]]); anything else is reported and yields nothing."""
        value = data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            self.fail(_line_of(self.text, key), f"'{key}' must be an array of tables: write [[{key}]] sections")
            return []
        return value

    def strings(self, data: dict[str, Any], key: str, *, line_from: int = 0) -> tuple[str, ...]:
        value = data.get(key, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.fail(_line_of(self.text, key, line_from), f"'{key}' must be a list of strings, "
                      f"like {key} = [\"...\"]")
            return ()
        return tuple(v.strip() for v in value if v.strip())


def load_reference(path: Path, untrusted: bool = False,
                   cache: ParsedCache | None = None) -> tuple[Reference | None, list[LoadError]]:
    """One file; whatever is wrong with it (a user's pack is untrusted input) is a LoadError, never an
    exception that would take the other files down."""
    try:
        return _load_reference(path, untrusted, cache)
    except SlowPattern as slow:
        return None, [LoadError(path, 0, f"a regex took longer than {SECONDS_PER_SEARCH} s on one of its own "
                                         f"examples ({slow.origin}); it would stall every scan: simplify it")]
    except RecursionError:
        return None, [LoadError(path, 0, "nested too deeply (arrays, tables or regex groups); flatten it")]
    except Exception as exc:  # noqa: BLE001 - a defect in a check must not drop the rest of the library
        return None, [LoadError(path, 0, f"could not be loaded ({type(exc).__name__}: {exc})")]


def _load_reference(path: Path, untrusted: bool, cache: ParsedCache | None) -> tuple[Reference | None, list[LoadError]]:
    if not path.is_file():
        return None, [LoadError(path, 0, "not a regular file; a signature file is a .toml text file")]
    if path.stat().st_size > MAX_SIGNATURE_BYTES:
        return None, [LoadError(path, 0, f"larger than {MAX_SIGNATURE_BYTES // 2**20} MiB; split it into one "
                                         "file per reference")]
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, [LoadError(path, 0, f"cannot read the file ({exc}); save it as UTF-8 text")]
    known = cache.get(text) if cache is not None else None
    try:
        data = known if known is not None else tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = _TOML_LINE.search(str(exc))
        return None, [LoadError(path, int(found.group(1)) if found else 1,
                                f"not valid TOML: {exc}; fix the syntax (quotes, brackets, commas)")]
    check = _Checker(path, text, checked=known is not None)
    ref_id = check.string(data, "id")
    if ref_id and ref_id != path.stem:
        check.fail(_line_of(text, "id"), f"id '{ref_id}' differs from the file name; "
                   f"write id = \"{path.stem}\" or rename the file to {ref_id}.toml")
    patterns = _patterns(check, data, ref_id, untrusted)
    verify = _commands(check, data, patterns)
    references = check.strings(data, "references")
    for url in references:
        if not re.match(r"https?://\S+$", url):
            check.fail(_line_of(text, "references"), f"reference '{url}' is not a URL; "
                       "write a public https:// address")
    pattern_ids = {p.id for p in patterns}
    requires = check.strings(data, "requires")
    for pid in requires:
        if pid not in pattern_ids:
            check.fail(_line_of(text, "requires"), f"'requires' names pattern '{pid}', which this file "
                       f"does not define; write one of: {', '.join(sorted(pattern_ids))}")
    tests = data.get("tests", {})
    if not isinstance(tests, dict):
        check.fail(_line_of(text, "tests"), "'tests' must be a table: [tests] with samples = [...]")
        tests = {}
    samples = []
    for sample in tests.get("samples", []):
        if not isinstance(sample, dict) or not sample.get("path"):
            check.fail(_line_of(text, "samples"), "each sample needs a path: { path = \"samples/x.log\" }")
            continue
        # Existence is checked by `signatures check`; pyproject ships every folder samples live in.
        samples.append(SampleTest(path.parent / str(sample["path"]), sample.get("initiator_rank"),
                                  bool(sample.get("undetermined", False))))
    ref = Reference(
        id=ref_id,
        title=check.string(data, "title"),
        category=check.string(data, "category", choices=CATEGORIES),
        tier=check.string(data, "tier", choices=TIERS),
        severity=check.string(data, "severity", choices=SEVERITIES),
        status=check.string(data, "status", choices=STATUSES),
        summary=check.string(data, "summary"),
        mechanism=check.string(data, "mechanism"),
        patterns=tuple(patterns),
        aliases=check.strings(data, "aliases"),
        confirm=check.strings(data, "confirm"),
        fix=check.strings(data, "fix"),
        fix_for=_fix_for(check, data),
        prevention=check.strings(data, "prevention"),
        next_checks=check.strings(data, "next_checks"),
        verify=tuple(verify),
        related=check.strings(data, "related"),
        references=references,
        tags=check.strings(data, "tags"),
        requires=requires,
        against=check.strings(data, "against"),
        suggests=_suggests(check, data, patterns),
        samples=tuple(samples),
        source=path,
    )
    if not patterns:
        check.fail(1, "no [[patterns]] table; add at least one pattern with literals and regex")
    if not references:
        check.fail(1, "no references; cite the source or issue that prints the message")
    if patterns and sum(len(p.match) for p in patterns) < MIN_MATCH_EXAMPLES:
        check.fail(1, f"fewer than {MIN_MATCH_EXAMPLES} match examples over all patterns; add real lines the "
                   "failure prints (distinct forms where the text changed between versions)")
    if patterns and not any(p.near_miss for p in patterns):
        check.fail(1, "no near_miss example; add a real line that looks alike but must not match")
    if cache is not None and known is None and not check.errors:
        cache.put(text, data)
    return (None if check.errors else ref), check.errors


def _patterns(check: _Checker, data: dict[str, Any], ref_id: str, untrusted: bool = False) -> list[Pattern]:
    patterns = []
    seen = set()
    for index, item in enumerate(check.tables(data, "patterns")):
        at = _table_line(check.text, "patterns", index)
        pid = check.string(item, "id", line_from=at)
        if pid in seen:
            check.fail(at, f"pattern id '{pid}' appears twice; give each pattern its own id")
        seen.add(pid)
        literals = check.strings(item, "literals", line_from=at)
        if not literals:
            check.fail(at, f"pattern '{pid}' has no literals; add literals = [\"a fixed part of the line\"]")
        for lit in literals:
            # In bytes, as the prefilter reads text: a character beyond ASCII (a box-drawing or CJK one) is as
            # rare in logs as several ASCII ones.
            if len(lit.encode("utf-8")) < MIN_LITERAL:
                check.fail(_line_of(check.text, "literals", at), f"literal '{lit}' is shorter than "
                           f"{MIN_LITERAL} bytes (UTF-8); use a longer fixed part of the message")
        source = check.string(item, "regex", line_from=at)
        regex = None
        try:
            # A user's pack runs in bounded time (userregex.py); the built-in library on `re`.
            if untrusted:
                regex = BoundedRegex(source, f"{check.path}:{_line_of(check.text, 'regex', at)}")
            else:
                regex = LazyRegex(source) if check.checked else re.compile(source)
        except (re.error, OverflowError) as exc:
            check.fail(_line_of(check.text, "regex", at), f"regex of pattern '{pid}' does not compile "
                       f"({exc}); escape literal brackets, dots and parentheses with a backslash")
        except RecursionError:
            check.fail(_line_of(check.text, "regex", at), f"regex of pattern '{pid}' is nested too deeply to "
                       "compile; flatten its groups")
        role = check.string(item, "role", line_from=at, choices=ROLES)
        emitter = check.string(item, "emitter", line_from=at, choices=EMITTERS)
        match = check.strings(item, "match", line_from=at)
        near_miss = check.strings(item, "near_miss", line_from=at)
        tail = check.string(item, "tail", line_from=at, required=False)  # why the line's end decides, if it does
        if not match:
            check.fail(at, f"pattern '{pid}' has no match examples; add match = [\"a real line it prints\"]")
        if regex is not None and not check.checked:
            _check_examples(check, at, pid, literals, regex, match, near_miss)
            if role != "context" and not tail:
                _check_cut_lines(check, at, pid, literals, regex, match)
        if regex is not None and pid and literals and role and emitter:
            patterns.append(Pattern(pid, tuple(lit.lower() for lit in literals), regex, role, emitter,
                                    match, near_miss, ref_id, _flag(check, at, pid, item, "generic"),
                                    tuple(check.strings(item, "needs", line_from=at)),
                                    _flag(check, at, pid, item, "continuation"),
                                    tuple(check.strings(item, "unless", line_from=at)),
                                    _once_per(check, at, pid, item, regex),
                                    _standalone(check, at, pid, item), _repeats_alone(check, at, pid, item),
                                    _flag(check, at, pid, item, "paste_only"),
                                    tuple(check.strings(item, "recovers", line_from=at)),
                                    bool(tail)))
    return patterns


def _repeats_alone(check: "_Checker", at: int, pid: str, item: dict) -> int:
    value = item.get("repeats_alone", 1)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        check.fail(_line_of(check.text, "repeats_alone", at), f"'repeats_alone' of pattern '{pid}' must be a whole "
                   "number of at least 1")
        return 1
    if value > 1:
        _only_beside_needs(check, at, pid, item, "repeats_alone", "'repeats_alone'")
    return value


def _flag(check: "_Checker", at: int, pid: str, item: dict, key: str, default: bool = False) -> bool:
    value = item.get(key, default)
    if not isinstance(value, bool):
        check.fail(_line_of(check.text, key, at), f"'{key}' of pattern '{pid}' must be true or false")
        return default
    return value


def _standalone(check: "_Checker", at: int, pid: str, item: dict) -> bool:
    value = _flag(check, at, pid, item, "standalone", default=True)
    if not value:
        _only_beside_needs(check, at, pid, item, "standalone", "'standalone = false'")
    return value


def _only_beside_needs(check: "_Checker", at: int, pid: str, item: dict, key: str, what: str) -> None:
    """Keys that shape how a `needs` line counts alone mean nothing without `needs`."""
    if not item.get("needs"):
        check.fail(_line_of(check.text, key, at), f"{what} of pattern '{pid}' means something only beside 'needs'; "
                   "name the patterns it needs, or remove it")


def _once_per(check: "_Checker", at: int, pid: str, item: dict, regex: re.Pattern[str]) -> tuple[str, ...]:
    """The group names of `once_per`: one name, or several separated by spaces."""
    groups = tuple((check.string(item, "once_per", line_from=at, required=False) or "").split())
    missing = [g for g in groups if g not in regex.groupindex] if groups and not check.checked else []
    if missing:
        check.fail(at, f"'once_per' of pattern '{pid}' names group '{missing[0]}', which its regex does not have; "
                   f"write (?P<{missing[0]}>...) around the value the line names")
        return ()
    return groups


# Pastes are cut (a wrapped terminal, an excerpt's edge, "..."): a line cut this far after its literal must still
# match, unless the pattern says why its tail decides (`tail = "..."`).
CUT_AFTER_LITERAL = 15
MAX_SIGNATURE_BYTES = 4 * 2**20  # the largest built-in file is ~40 KB


def _check_cut_lines(check: _Checker, at: int, pid: str, literals: tuple[str, ...], regex: re.Pattern[str],
                     match: tuple[str, ...]) -> None:
    cuts = []
    for example in match:
        lowered = example.lower()
        start = next((i + len(lit) for lit in literals if (i := lowered.find(lit.lower())) >= 0), None)
        if start is not None:
            cuts.append(example[:start + CUT_AFTER_LITERAL])
    if cuts and not any(regex.search(cut) for cut in cuts):
        check.fail(_line_of(check.text, "regex", at), f"regex of '{pid}' needs the end of the line: cut "
                   f"{CUT_AFTER_LITERAL} characters after its literal, no match example still matches "
                   f"({cuts[0][-60:]!r}); make the trailing parts optional, or say why the tail decides with "
                   "tail = \"...\"")


def _check_examples(check: _Checker, at: int, pid: str, literals: tuple[str, ...], regex: re.Pattern[str],
                    match: tuple[str, ...], near_miss: tuple[str, ...]) -> None:
    lowered = [m.lower() for m in match]
    for lit in literals:
        if match and not any(lit.lower() in m for m in lowered):
            check.fail(_line_of(check.text, "literals", at), f"literal '{lit}' of pattern '{pid}' occurs in "
                       "none of its match examples; a literal must be text the message really contains")
    for example in match:
        if not any(lit.lower() in example.lower() for lit in literals):
            check.fail(_line_of(check.text, "match", at), f"match example of '{pid}' contains none of its "
                       f"literals, so the automaton would never see it: {example[:80]!r}")
        elif not regex.search(example):
            check.fail(_line_of(check.text, "match", at), f"regex of '{pid}' does not match its example "
                       f"{example[:80]!r}; loosen the regex or fix the example")
    for example in near_miss:
        if regex.search(example):
            check.fail(_line_of(check.text, "near_miss", at), f"regex of '{pid}' matches its near miss "
                       f"{example[:80]!r}; tighten the regex")


def _suggests(check: _Checker, data: dict[str, Any], patterns: list[Pattern]) -> tuple[Suggestion, ...]:
    # As for verify commands, the capture was checked against the groups when these bytes first loaded.
    groups = None if check.checked else {name for p in patterns for name in p.regex.groupindex}
    out = []
    for index, entry in enumerate(check.tables(data, "suggests")):
        line = _table_line(check.text, "suggests", index)
        reference, why = (check.string(entry, k, line_from=line) for k in ("reference", "why"))
        pattern = check.string(entry, "pattern", line_from=line, required=False)
        capture = check.string(entry, "capture", line_from=line, required=not pattern)
        values = check.strings(entry, "values", line_from=line)
        if pattern and pattern not in {p.id for p in patterns}:
            check.fail(line, f"suggests: pattern '{pattern}' is no pattern of this file; write one of: "
                             f"{', '.join(p.id for p in patterns)}")
        elif capture and groups is not None and capture not in groups:
            check.fail(line, f"suggests: capture '{capture}' is no named group of this file's regexes; write one "
                             f"of: {', '.join(sorted(groups))}")
        elif capture and not values:
            check.fail(line, "suggests: a capture needs the values it must take; write values = [\"...\"]")
        elif reference and why and (pattern or capture):
            out.append(Suggestion(reference, capture, tuple(v.lower() for v in values), why, pattern))
    return tuple(out)


def _fix_for(check: _Checker, data: dict[str, Any]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    table = data.get("fix_for", {})
    if not isinstance(table, dict):
        check.fail(_line_of(check.text, "fix_for"), "'fix_for' must be a table: [fix_for] with vllm = [\"...\"]")
        return ()
    out = []
    for framework in table:
        if framework not in FRAMEWORKS:
            check.fail(_line_of(check.text, framework), f"fix_for '{framework}' is no framework firstfault "
                       f"recognises; write one of: {', '.join(FRAMEWORKS)}")
        elif fixes := check.strings(table, framework, line_from=_line_of(check.text, "fix_for")):
            out.append((framework, fixes))
    return tuple(out)


def _commands(check: _Checker, data: dict[str, Any], patterns: list[Pattern]) -> list[Command]:
    # Placeholders were checked against the regexes' groups when these bytes first loaded: asking a cached regex
    # for its groups would compile it.
    groups = None if check.checked else {name for p in patterns for name in p.regex.groupindex}
    commands = []
    for index, item in enumerate(check.tables(data, "verify")):
        at = _table_line(check.text, "verify", index)
        title = check.string(item, "title", line_from=at)
        argv = check.strings(item, "argv", line_from=at)
        if not argv:
            check.fail(at, "verify entry has no argv; write argv = [\"program\", \"arg\", ...]")
            continue
        if (script := shell_script(argv)) is not None and PLACEHOLDER.search(script):
            check.fail(_line_of(check.text, "argv", at), "a placeholder inside a shell script would put a value "
                       "from the log into the shell unquoted; pass it as a positional parameter: "
                       "[\"sh\", \"-c\", \"... \\\"$1\\\"\", \"sh\", \"{name}\"]")
        for arg in argv if groups is not None else ():
            for name in PLACEHOLDER.findall(arg):
                if name not in groups and name not in OWN_PLACEHOLDERS:
                    check.fail(_line_of(check.text, "argv", at), f"placeholder {{{name}}} is not a named "
                               f"group of any pattern here; use one of: {', '.join(sorted(groups)) or 'log'}")
        when = check.strings(item, "when", line_from=at) if "when" in item else []
        unknown = [w for w in when if w not in {p.id for p in patterns}]
        if unknown:
            check.fail(_line_of(check.text, "when", at), f"'when' names {', '.join(unknown)}, which are not "
                       "patterns of this reference")
        commands.append(Command(title, argv, tuple(when)))
    return commands
