"""Presenters for the terminal: plain text (colour only on a TTY) and markdown."""

from __future__ import annotations

import json
import math

from firstfault.commands import fill
from firstfault.diagnosis import Diagnosis, Location, Report, clip, possible_because, rank_ranges
from firstfault.frameworks import display_name
from firstfault.knowledge import Entry, entry_parts
from firstfault.model import Reference

SHOWN_COLLATERAL = 6


class Style:
    def __init__(self, colour: bool):
        self.colour = colour

    def _wrap(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.colour else text

    def bold(self, text: str) -> str:
        return self._wrap("1", text)

    def red(self, text: str) -> str:
        return self._wrap("1;31", text)

    def yellow(self, text: str) -> str:
        return self._wrap("33", text)

    def dim(self, text: str) -> str:
        return self._wrap("2", text)

    def green(self, text: str) -> str:
        return self._wrap("32", text)


def where(loc: Location) -> str:
    who = []
    if loc.rank is not None:
        who.append(f"rank {loc.rank}")
    if loc.host:
        who.append(f"on {loc.host}")
    place = f"{loc.path}:{loc.line}" if loc.path and loc.line else (loc.path or "")
    return " · ".join(x for x in (" ".join(who), place) if x) or "unknown"


def _ranks_of(locations: tuple[Location, ...]) -> str:
    ranks = sorted({loc.rank for loc in locations if loc.rank is not None})
    return f" on rank(s) {rank_ranges(ranks)}" if ranks else ""


def _nothing_found(report: Report) -> str:
    if not report.events:
        return "No line matched a known failure signature."
    return (f"{len(report.events)} line(s) matched known messages, none of them a failure by itself "
            "(context, or warnings that healthy runs print too).")


def _check_next_text(checks: tuple[str, ...], style: Style) -> list[str]:
    return ["", style.bold("  Check next"), *(f"    - {c}" for c in checks)] if checks else []


def _check_next_markdown(checks: tuple[str, ...]) -> list[str]:
    return ["", "**Check next**", "", *(f"- {c}" for c in checks)] if checks else []


def text_report(report: Report, style: Style) -> str:
    """The verdict on the first line; what was read, and notes about the inputs, at the end."""
    out: list[str] = []
    if report.diagnoses:
        out.extend(_hypotheses_text(report, style))
    else:
        out.append(style.green("No failure found.") + " " + _nothing_found(report))
        out += _check_next_text(report.next_checks, style)
    if (c := report.comparison) is not None:
        out += ["", style.bold(f"Compared with a good run ({', '.join(c.baseline)})")]
        out += [f"  {line}" for line in c.lines()]
        if c.new_lines:
            out.append("  Error lines the good run never printed:")
            out += [f"    {line}" for line in c.new_lines]
        elif not report.diagnoses:
            out.append("  The failed run printed no error line the good run did not print too.")
    out.append("")
    for info in report.inputs:
        if info.binary:
            out.append(style.yellow(f"note: {info.path} looks like a binary file; it was scanned as text"))
    for note in report.notes:
        out.append(style.yellow(f"note: {note}"))
    lines = sum(i.lines for i in report.inputs)
    out.append(style.dim(f"firstfault {report.version} · {len(report.inputs)} input(s), {lines:,} lines"))
    return "\n".join(out) + "\n"


def _hypotheses_text(report: Report, style: Style) -> list[str]:
    top, *others = report.diagnoses
    out = _diagnosis_text(top, style)
    if others:
        out.append("")
        out.append(style.bold("Other hypotheses"))
        for d in others:
            why = "; ".join(d.evidence_against) or "; ".join(d.evidence_for)
            out.append(f"  {d.confidence:.2f}  {d.reference.title} [{d.id}] — {why}")
    history = report.attempts[:-1]
    if history:
        out.append("")
        out.append(style.bold("Earlier attempts"))
        for a in history:
            out.append(f"  attempt {a.index + 1} (lines {a.first_line}-{a.last_line}): {a.summary}")
    return out


def brief_report(report: Report) -> str:
    """One line per diagnosis, for scripts and CI logs."""
    if not report.diagnoses:
        return f"no failure found: {_nothing_found(report)}\n"
    out = []
    for i, d in enumerate(report.diagnoses):
        kind = ("undetermined" if d.undetermined else "possible cause" if d.possible else "first failure") if i == 0 \
            else "other hypothesis"
        place = f" · {where(d.initiator)}" if d.initiator else ""
        out.append(f"{kind}: {d.reference.title} [{d.id}]{place} · confidence {d.confidence:.2f}")
    return "\n".join(out) + "\n"


def _diagnosis_text(d: Diagnosis, style: Style) -> list[str]:
    ref = d.reference
    out = []
    if d.undetermined:
        out.append(style.yellow(style.bold("UNDETERMINED")) + f"  {ref.title}  " +
                   style.dim(f"[{ref.id}] confidence {d.confidence:.2f}"))
        out.append("  The log shows the symptom but cannot tell which rank started it.")
    elif d.possible:
        out.append(style.yellow(style.bold("POSSIBLE CAUSE")) + f"  {ref.title}  " +
                   style.dim(f"[{ref.id}] confidence {d.confidence:.2f}"))
        out.append("  " + possible_because(d) + "; see the evidence below.")
    else:
        out.append(style.red(style.bold("FIRST FAILURE")) + f"  {ref.title}  " +
                   style.dim(f"[{ref.id}] confidence {d.confidence:.2f}"))
    if d.headline:
        out.append(f"  {d.headline}")
    if d.initiator:
        out.append(f"  {style.bold(where(d.initiator))}")
        if d.initiator.text:
            out.append(f"  > {clip(d.initiator.text, 300)}")
    out.append("")
    out.append(f"  {ref.summary}")
    # What to do comes first, then why, then where: the order a person acts on a verdict in.
    if d.fix:
        out.append("")
        out.append(style.bold(f"  Fix{_for_framework(d)}"))
        out += [f"    - {f}" for f in d.fix]
    out += _check_next_text(d.next_checks, style)
    if d.verify:
        out.append("")
        out.append(style.bold("  Verify"))
        for cmd in d.verify:
            out.append(f"    {cmd.title}:")
            out.append(f"      $ {cmd.command}" + ("" if cmd.complete else style.dim("   (fill in <...>)")))
    if d.evidence_for or d.evidence_against:
        out.append("")
        out.append(style.bold("  Evidence"))
        out += [f"    + {e}" for e in d.evidence_for]
        out += [f"    - {e}" for e in d.evidence_against]
    if d.unexplained:
        out.append("")
        out.append(style.bold("  Error lines no reference explains"))
        out += [style.dim(f"    {u}") for u in d.unexplained]
    if d.collateral_total:
        out.append("")
        out.append(style.bold(f"  Collateral: {d.collateral_total} line(s){_ranks_of(d.collateral)}"))
        for loc in d.collateral[:SHOWN_COLLATERAL]:
            out.append(style.dim(f"    {where(loc)}: {clip(loc.text or '', 140)}"))
        if d.collateral_total > SHOWN_COLLATERAL:
            out.append(style.dim(f"    … {d.collateral_total - SHOWN_COLLATERAL} more (--format json lists them)"))
    return out


def markdown_report(report: Report) -> str:
    out = []
    if not report.diagnoses:
        lines = [*_check_next_markdown(report.next_checks), *_comparison_markdown(report)]
        end = "\n" if report.next_checks else ""
        return f"**No failure found.** {_nothing_found(report)}\n" + "\n".join(lines) + end
    top, *others = report.diagnoses
    out.extend(_diagnosis_markdown(top))
    if others:
        out.append("\n### Other hypotheses\n")
        out.append("| confidence | hypothesis | why not first |")
        out.append("|---|---|---|")
        for d in others:
            out.append(f"| {d.confidence:.2f} | {d.reference.title} (`{d.id}`) | "
                       f"{'; '.join(d.evidence_against) or '—'} |")
    if report.attempts[:-1]:
        out.append("\n### Earlier attempts\n")
        out += [f"- attempt {a.index + 1} (lines {a.first_line}-{a.last_line}): {a.summary}"
                for a in report.attempts[:-1]]
    out += _comparison_markdown(report)
    if report.notes:
        out += ["", *(f"> note: {note}\n" for note in report.notes)]
    return "\n".join(out) + "\n"


def _comparison_markdown(report: Report) -> list[str]:
    c = report.comparison
    if c is None:
        return []
    out = ["\n### Compared with a good run\n", f"Baseline: {', '.join(f'`{b}`' for b in c.baseline)}", ""]
    out += [f"- {line}" for line in c.lines()]
    if c.new_lines:
        out += ["", "Error lines the good run never printed:", ""] + [f"- `{line}`" for line in c.new_lines]
    return out


def _diagnosis_markdown(d: Diagnosis) -> list[str]:
    ref = d.reference
    head = "Undetermined" if d.undetermined else "Possible cause" if d.possible else "First failure"
    out = [f"## {head}: {ref.title}", "", f"`{ref.id}` · confidence {d.confidence:.2f}", ""]
    if d.headline:
        out += [f"*{d.headline}.*", ""]
    if d.initiator:
        out.append(f"**{where(d.initiator)}**")
        if d.initiator.text:
            out += ["", "```", clip(d.initiator.text, 500), "```"]
    out += ["", ref.summary]
    if d.fix:
        out += ["", f"**Fix{_for_framework(d)}**", ""] + [f"- {f}" for f in d.fix]
    out += _check_next_markdown(d.next_checks)
    if d.verify:
        out += ["", "**Verify**", ""]
        for cmd in d.verify:
            out += [f"- {cmd.title}", "", "  ```sh", f"  {cmd.command}", "  ```"]
    if d.evidence_for or d.evidence_against:
        out += ["", "**Evidence**", ""]
        out += [f"- ✔ {e}" for e in d.evidence_for] + [f"- ✘ {e}" for e in d.evidence_against]
    if d.unexplained:
        out += ["", "**Error lines no reference explains**", ""] + [f"- `{u}`" for u in d.unexplained]
    if d.collateral_total:
        out += ["", f"<details><summary>Collateral: {d.collateral_total} line(s){_ranks_of(d.collateral)}</summary>",
                ""]
        out += [f"- {where(loc)}: `{clip(loc.text or '', 120)}`" for loc in d.collateral[:SHOWN_COLLATERAL]]
        if d.collateral_total > SHOWN_COLLATERAL:
            out.append(f"- … {d.collateral_total - SHOWN_COLLATERAL} more (`--format json` lists them)")
        out += ["", "</details>"]
    out += ["", f"**Mechanism.** {ref.mechanism}"]
    return out


def entry_text(entry: Entry, titles: dict[str, str], style: Style) -> str:
    """A knowledge entry for the terminal: bold name and labels on a TTY, plain text when piped."""
    name, table, parts = entry_parts(entry, titles)
    out = [f"{style.bold(name)} — {table}"]
    for label, text in parts:
        out += ["", f"{style.bold(label + ':')} {text}" if label else text]
    return "\n".join(out) + "\n"


def _for_framework(d: Diagnosis) -> str:
    return f" ({display_name(d.fix_framework)})" if d.fix_framework else ""


def reference_text(ref: Reference) -> str:
    """The whole reference, for `firstfault explain` and `signatures show`."""
    out = [f"{ref.title}  [{ref.id}]", f"category {ref.category} · tier {ref.tier} · severity {ref.severity} · "
           f"status {ref.status}"]
    if ref.aliases:
        out.append("also known as: " + "; ".join(ref.aliases))
    out += ["", ref.summary, "", "Mechanism", f"  {ref.mechanism}"]
    fixes = [(f"Fix ({display_name(name)})", items) for name, items in ref.fix_for]
    for title, items in (("How to confirm", ref.confirm), ("Fix", ref.fix), *fixes, ("Prevention", ref.prevention),
                         ("When the log cannot decide, check", ref.next_checks)):
        if items:
            out += ["", title] + [f"  - {x}" for x in items]
    if ref.verify:
        out += ["", "Verification commands"]
        out += [f"  {c.title}:\n    $ {fill(c, {}).command}" for c in ref.verify]
    out += ["", "Patterns"]
    for p in ref.patterns:
        out.append(f"  {p.id} ({p.role}, {p.emitter}): literals {', '.join(repr(x) for x in p.literals)}")
        out.append(f"    regex {p.regex.pattern}")
    if ref.related:
        out += ["", "Related: " + ", ".join(ref.related)]
    if ref.references:
        out += ["", "References"] + [f"  {u}" for u in ref.references]
    return "\n".join(out) + "\n"


def reference_json(ref: Reference) -> dict:
    return {
        "id": ref.id, "title": ref.title, "aliases": list(ref.aliases), "category": ref.category,
        "tier": ref.tier, "severity": ref.severity, "status": ref.status, "summary": ref.summary,
        "mechanism": ref.mechanism, "confirm": list(ref.confirm), "fix": list(ref.fix),
        "prevention": list(ref.prevention), "next_checks": list(ref.next_checks),
        "verify": [{"title": c.title, "argv": list(c.argv)} for c in ref.verify],
        "related": list(ref.related), "references": list(ref.references), "tags": list(ref.tags),
        "patterns": [{"id": p.id, "literals": list(p.literals), "regex": p.regex.pattern, "role": p.role,
                      "emitter": p.emitter} for p in ref.patterns],
    }


def dumps(data: object) -> str:
    """Valid JSON always: a non-finite number (a time no clock can hold) is written as null."""
    return json.dumps(_finite(data), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _finite(value: object) -> object:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value
