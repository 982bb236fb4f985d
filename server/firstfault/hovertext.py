"""Markdown explaining one matched line: its verdict, the reference, the fix and what else could explain it."""

from __future__ import annotations

from firstfault.annotations import who
from firstfault.commands import fill, own_inputs
from firstfault.diagnosis import Diagnosis, Report, possible_because
from firstfault.matcher import Event
from firstfault.model import UNRECOGNISED, Reference


def line_markdown(report: Report, event: Event, kind: str, diagnosis: Diagnosis | None,
                  references: dict[str, Reference]) -> str:
    ref = references.get(event.reference_id)
    out = [_verdict_line(event, kind, diagnosis)]
    if ref is not None:
        # A context line's severity is its role here, never the reference's worst case.
        severity = "context here" if kind == "context" else ref.severity
        out += ["", f"### {ref.title}", f"`{ref.id}` · {ref.category} · {severity}", "", ref.summary,
                "", f"**Mechanism.** {ref.mechanism}"]
        shown = diagnosis if diagnosis is not None and diagnosis.reference.id == ref.id else None
        _section(out, "How to confirm", ref.confirm)
        if shown is not None and shown.next_checks:
            _section(out, "Check next", shown.next_checks)
        _section(out, "Fix", shown.fix if shown is not None else ref.fix)
        commands = shown.verify if shown else tuple(fill(c, event.captures, own_inputs(event.path))
                                                     for c in ref.verify if c.fits({event.pattern.id}))
        if commands:
            out += ["", "**Verify**", "", "```sh", *(c.command for c in commands), "```"]
            if not all(c.complete for c in commands):
                out.append("Parts in `<…>` are not in the log: fill them in before running (copy only).")
    if diagnosis is not None and diagnosis.reference.id != event.reference_id:
        out += ["", f"**This line is explained by** {diagnosis.reference.title} (`{diagnosis.id}`)."]
    others = [d for d in report.diagnoses if diagnosis is None or d is not diagnosis]
    if others or diagnosis is not None:
        out += ["", "**Hypotheses**", ""]
        for d in report.diagnoses:
            mark = "→ " if d is diagnosis else ""
            why = "; ".join(d.evidence_against[:1]) or "; ".join(d.evidence_for[:1])
            out.append(f"- {mark}{d.confidence:.2f} {d.reference.title} (`{d.id}`){' — ' + why if why else ''}")
    return "\n".join(out)


def _verdict_line(event: Event, kind: str, diagnosis: Diagnosis | None) -> str:
    source = who(event.source.rank, event.source.host)
    where = f" ({source})" if source else ""
    if kind == "initiator" and diagnosis is not None and diagnosis.possible:
        return f"**firstfault: possible cause**{where}: {possible_because(diagnosis).lower()}."
    if kind == "initiator" and event.reference_id == UNRECOGNISED:
        return (f"**firstfault: the earliest error line no reference explains**{where}; the cause is not named.")
    if kind == "initiator":
        return f"**firstfault: this line started the failure**{where}."
    if kind == "collateral" and diagnosis is not None:
        init = diagnosis.initiator
        at = ""
        if init is not None:
            at = ", ".join(x for x in (who(init.rank, init.host), f"line {init.line}" if init.line else "") if x)
        return (f"**firstfault: collateral** of {diagnosis.reference.title}{' (' + at + ')' if at else ''}; "
                "fix that first.")
    if kind == "failure" and diagnosis is not None and diagnosis.undetermined:
        return "**firstfault: undetermined.** Every rank reports this; the log does not say which one stopped first."
    if kind == "earlier":
        return "**firstfault:** from an earlier attempt of the job; the verdict is for the last attempt."
    if kind == "context":
        return (f"**firstfault: context, not a failure in this log**{where}. Lines like this one are what the reference "
                "below reads as evidence when its failure happens; on their own, healthy runs print them too.")
    return f"**firstfault:** a failure line{' (' + source + ')' if source else ''}."


def _section(out: list[str], title: str, items: tuple[str, ...]) -> None:
    if items:
        out += ["", f"**{title}**", ""] + [f"- {x}" for x in items]
