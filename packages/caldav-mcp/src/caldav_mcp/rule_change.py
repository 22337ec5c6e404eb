"""A new RRULE for a whole series (``update_event`` with ``rrule``): the counts its dialog states.

The occurrences are compared by their RECURRENCE-ID in DTSTART's form (RFC 5545 §3.8.4.4), overrides,
RDATEs and EXDATEs applied the same way before and after: those in both stay, those only before go, those
only after are added.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from caldav_mcp.ical import Unreadable, count_occurrences, master, occurrence_start, series_occurrences
from caldav_mcp.own_zones import from_ical
from caldav_mcp.rid_forms import keyer

if TYPE_CHECKING:  # imported where a call needs it: listing the tools does not (startup time)
    import icalendar

__all__ = ["RuleChange", "rule_change", "with_rule"]

Count = int | None | Literal["uncountable"]
"""Occurrences: a number, None for a series that never ends, ``"uncountable"`` for one this server will not expand."""


@dataclass(frozen=True, slots=True)
class RuleChange:
    """Occurrences before and after a new rule (a number, None: never ends, or ``"uncountable"``).

    ``kept``, ``lost`` and ``added`` are counted only when both sides end.
    """

    before: Count
    after: Count
    kept: int | None = None
    lost: int | None = None
    added: int | None = None


def with_rule(series: icalendar.Component, rule: Any) -> None:
    """Replace every RRULE of ``series`` with ``rule`` (a parsed ``vRecur``)."""
    series.pop("RRULE", None)
    series.add("RRULE", rule)


def _count(ical: icalendar.Calendar) -> Count:
    try:
        return count_occurrences(ical, "VEVENT")
    except Unreadable:
        return "uncountable"


def _keys(ical: icalendar.Calendar) -> set[str]:
    key = keyer(ical, "VEVENT")
    return {key(occurrence_start(component)) for component in series_occurrences(ical, "VEVENT")}


def rule_change(ical: icalendar.Calendar, rule: Any) -> RuleChange:
    """What replacing the series' rule of ``ical`` with ``rule`` does to its occurrences (``ical`` is not changed)."""
    changed = from_ical(ical.to_ical())
    with_rule(master(changed, "VEVENT"), rule)
    before, after = _count(ical), _count(changed)
    if not (isinstance(before, int) and isinstance(after, int)):
        return RuleChange(before, after)
    try:
        old, new = _keys(ical), _keys(changed)
    except Unreadable:
        return RuleChange("uncountable", "uncountable")
    return RuleChange(before, after, len(old & new), len(old - new), len(new - old))
