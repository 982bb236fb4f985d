"""A candidate verdict: a reference and the events that point to it, ordered by the log's clock."""

from __future__ import annotations

import attrs

from firstfault.matcher import Event
from firstfault.model import TIERS, Reference
from firstfault.roles import FAILURE_ROLES

ROLE_STRENGTH = {"cause": 0, "symptom": 1, "collateral": 2, "teardown": 3, "context": 4}


@attrs.define
class Hypothesis:
    reference: Reference
    events: list[Event]
    # Why the events were read as this reference rather than their own, and that in one sentence
    # (see _different_ops_at_one_seq).
    reread: tuple[str, str] = ("", "")

    @property
    def tier(self) -> int:
        return TIERS.index(self.reference.tier)

    def failures(self) -> list[Event]:
        return sorted((e for e in self.events if e.role in FAILURE_ROLES), key=event_key)

    def catch_all_only(self) -> bool:
        """Its failures are all catch-all lines (an exception's type and message, a launcher's "child failed")."""
        failures = self.failures()
        return bool(failures) and all(e.pattern.generic for e in failures)

    def strength(self) -> int:
        return min(ROLE_STRENGTH[e.role] for e in self.events)

    def ranks(self) -> set[int]:
        return {e.source.rank for e in self.failures() if e.source.rank is not None}


def event_key(event: Event) -> tuple:
    """Wall-clock time first where known (for a line without one, the time of a later line of its input: it came
    no later), then the order the lines were read."""
    wall = event.time if event.time is not None and event.clock == "wall" else \
        event.before if event.before is not None else float("inf")
    return (wall, event.input_index, event.order)
