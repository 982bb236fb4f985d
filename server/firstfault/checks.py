"""`signatures check`: validate every file and run each reference's own tests."""

from __future__ import annotations

from pathlib import Path

import attrs

from firstfault.loader import Library, load_library


@attrs.frozen
class CheckResult:
    references: int
    patterns: int
    examples: int
    samples: int
    problems: tuple[str, ...]
    unread: tuple[str, ...] = ()


def check_library(extra_dirs: list[Path], include_builtin: bool, unread: bool = False) -> CheckResult:
    """Load errors cover schema, regexes, literals and examples; samples run through the engine."""
    from firstfault.engine import Engine

    library = load_library(extra_dirs, include_builtin=include_builtin, use_cache=False)
    problems = [str(e) for e in library.errors]
    engine = Engine(library)
    samples = 0
    for ref in library.references.values():
        for sample in ref.samples:
            samples += 1
            problems.extend(_check_sample(engine, library, ref.id, sample))
    if include_builtin:
        problems.extend(_check_knowledge(library))
        problems.extend(_check_catalogue(library))
    examples = sum(len(p.match) + len(p.near_miss) for p in library.patterns())
    notes = _unread_forms(library) if unread else ()
    return CheckResult(len(library.references), len(library.patterns()), examples, samples, tuple(problems), notes)


def _unread_forms(library: Library) -> tuple[str, ...]:
    from firstfault.unread import unread_forms

    return tuple(f"{ref.id}/{p.id}: no literal reaches '{form}'" for ref in library.references.values()
                 for p in ref.patterns for form in unread_forms(p.regex, p.literals))


def _check_sample(engine, library: Library, ref_id: str, sample) -> list[str]:
    where = f"{sample.path}: sample of {ref_id}"
    if not sample.path.is_file():
        return [f"{where}: file not found; give a path relative to the signature file"]
    report = engine.analyze_paths([sample.path])
    if not report.diagnoses:
        return [f"{where}: no failure found; expected {ref_id}"]
    top = report.diagnoses[0]
    if top.id != ref_id:
        return [f"{where}: diagnosed as {top.id} ({top.confidence:.2f}); expected {ref_id}"]
    if sample.undetermined != top.undetermined:
        return [f"{where}: undetermined is {top.undetermined}; expected {sample.undetermined}"]
    rank = top.initiator.rank if top.initiator else None
    if sample.initiator_rank is not None and rank != sample.initiator_rank:
        return [f"{where}: initiator rank {rank}; expected {sample.initiator_rank}"]
    return []


def _check_knowledge(library: Library) -> list[str]:
    """Every knowledge entry's related failures must be references in the library."""
    from firstfault.knowledge import Knowledge
    from firstfault.loader import builtin_dir

    try:
        knowledge = Knowledge.load(builtin_dir() / "knowledge")
    except (KeyError, ValueError, TypeError) as exc:
        return [f"{builtin_dir() / 'knowledge'}: cannot load a knowledge table: {exc!r}"]
    return [f"knowledge {e.table} '{e.name}': related failure '{r}' is not a reference"
            for e in knowledge.entries for r in e.references if r not in library.references]


def _check_catalogue(library: Library) -> list[str]:
    from firstfault.catalogue import catalogue_problems, load_catalogue
    from firstfault.loader import builtin_dir

    return catalogue_problems(load_catalogue(builtin_dir()), set(library.references))
