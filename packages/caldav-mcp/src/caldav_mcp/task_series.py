"""Recurring tasks (a VTODO with RRULE or RDATE, RFC 5545 §3.6.2, §3.8.5), done one occurrence at a time.

A recurring task is a series like a recurring event. Marking it done is
marking one occurrence done: an override of that occurrence (RECURRENCE-ID,
§3.8.4.4) with STATUS:COMPLETED, COMPLETED and PERCENT-COMPLETE:100, as
Apple's and Thunderbird's clients read it; the series and its other
occurrences stay open. The *current* occurrence is the first, in start
order, that is not done (STATUS COMPLETED or CANCELLED, its override's or
else the series'); the one after it is the next.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from caldav_mcp.components import is_recurring, master, occurrence_start, overrides, rid_text, times_of, utc_bound
from caldav_mcp.editing import bump, now_utc
from caldav_mcp.ical import Unreadable, first_after, series_occurrences
from caldav_mcp.range_edits import OWN_TIMES, copy_of
from caldav_mcp.rid_forms import key_of, written

if TYPE_CHECKING:  # imported where a call needs it: listing the tools does not (startup time)
    import icalendar

__all__ = [
    "DONE",
    "TaskOccurrence",
    "current",
    "describe",
    "finish",
    "is_done",
    "last_done",
    "next_after",
    "open_count",
    "recurs",
    "reopen",
    "set_state",
]

DONE = frozenset({"COMPLETED", "CANCELLED"})
"""The STATUS values of a task that is no longer to be done (RFC 5545 §3.8.1.11)."""

_STATE = frozenset({"STATUS", "COMPLETED", "PERCENT-COMPLETE"})
_MARGIN = dt.timedelta(days=2)


@dataclass(frozen=True, slots=True)
class TaskOccurrence:
    """One occurrence of a recurring task.

    Attributes:
        rid: Its RECURRENCE-ID as compact text (``20261207``, ``20261207T080000Z``).
        original: Its original start (the RECURRENCE-ID's value).
        due: Its due time (ISO 8601; its start when it has no DUE), or None.
        component: The occurrence as expanded (override applied).
    """

    rid: str
    original: dt.date | dt.datetime
    due: str | None
    component: icalendar.Component


def recurs(ical: icalendar.Calendar) -> bool:
    """Whether the stored task is a series (RRULE or RDATE on the task without RECURRENCE-ID)."""
    return is_recurring(master(ical, "VTODO"))


def is_done(component: icalendar.Component) -> bool:
    """Whether a task (or an occurrence) has a STATUS in :data:`DONE`."""
    return str(component.get("STATUS", "")).strip().upper() in DONE


def _occurrence(component: icalendar.Component) -> TaskOccurrence:
    original = occurrence_start(component)
    times = times_of(component, "DTSTART", "DUE")
    return TaskOccurrence(rid_text(original), original, times.end or times.start, component)


def _first(ical: icalendar.Calendar) -> dt.datetime:
    series = master(ical, "VTODO")
    anchor: Any = series.get("DTSTART") or series.get("DUE")
    return utc_bound(anchor.dt) - _MARGIN if anchor is not None else dt.datetime(1, 1, 3, tzinfo=dt.UTC)


def current(ical: icalendar.Calendar) -> TaskOccurrence | None:
    """The first occurrence that is not done; None when every one is.

    Raises:
        Unreadable: the stored rule is invalid, or the search passes an expansion bound.
    """
    found = first_after(ical, "VTODO", _first(ical), lambda c: not is_done(c))
    return _occurrence(found) if found is not None else None


def next_after(ical: icalendar.Calendar, occurrence: TaskOccurrence) -> TaskOccurrence | None:
    """The first occurrence after ``occurrence`` that is not done; None when there is none.

    Raises:
        Unreadable: as :func:`current`.
    """
    found = first_after(
        ical,
        "VTODO",
        _first(ical),
        lambda c: _later(occurrence_start(c), occurrence.original) and not is_done(c),
    )
    return _occurrence(found) if found is not None else None


def _later(value: dt.date | dt.datetime, than: dt.date | dt.datetime) -> bool:
    return utc_bound(value) > utc_bound(than)


def open_count(ical: icalendar.Calendar) -> tuple[int, int] | None:
    """(occurrences in all, of them not done) for a series that ends; None for one that never does.

    Raises:
        Unreadable: the stored rule is invalid, or the series passes an expansion bound.
    """
    series = master(ical, "VTODO")
    raw: Any = series.get("RRULE")
    rules: list[Any] = raw if isinstance(raw, list) else [raw] if raw is not None else []
    if any("COUNT" not in rule and "UNTIL" not in rule for rule in rules):
        return None
    every = series_occurrences(ical, "VTODO")
    return len(every), sum(1 for c in every if not is_done(c))


def _override(ical: icalendar.Calendar, occurrence: TaskOccurrence) -> icalendar.Component:
    """The stored override of ``occurrence``, made from the series at its times when there is none yet."""
    key = key_of(ical, "VTODO", occurrence.original)
    for component in overrides(ical, "VTODO"):
        if key_of(ical, "VTODO", occurrence_start(component)) == key:
            return component
    series = master(ical, "VTODO")
    made = copy_of(series, leave=OWN_TIMES | {"DUE"} | _STATE)
    for name in ("DTSTART", "DUE"):
        value: Any = occurrence.component.get(name)
        if value is not None:
            made.add(name, value.dt)
            if "TZID" in getattr(series.get(name), "params", {}):
                made[name].params["TZID"] = series[name].params["TZID"]
    written(made, ical, "VTODO", "RECURRENCE-ID", occurrence.original)
    ical.add_component(made)
    return made


def set_state(component: icalendar.Component, done: bool) -> None:
    """Mark a task (or an occurrence's override) done or open again.

    Done: STATUS COMPLETED, COMPLETED now, PERCENT-COMPLETE 100; open: STATUS NEEDS-ACTION. SEQUENCE, DTSTAMP
    and LAST-MODIFIED are marked changed.
    """
    for name in _STATE:
        component.pop(name, None)
    if done:
        component.add("STATUS", "COMPLETED")
        component.add("COMPLETED", now_utc())
        component.add("PERCENT-COMPLETE", 100)
    else:
        component.add("STATUS", "NEEDS-ACTION")
    bump(component)


def finish(ical: icalendar.Calendar, occurrence: TaskOccurrence) -> None:
    """Mark ``occurrence`` done in ``ical``: its override (made if needed) COMPLETED now, PERCENT-COMPLETE 100."""
    set_state(_override(ical, occurrence), True)


def last_done(ical: icalendar.Calendar) -> TaskOccurrence | None:
    """The latest occurrence whose own override is marked COMPLETED; None if there is none."""
    done = [c for c in overrides(ical, "VTODO") if str(c.get("STATUS", "")).strip().upper() == "COMPLETED"]
    if not done:
        return None
    return _occurrence(max(done, key=lambda c: utc_bound(occurrence_start(c))))


def reopen(ical: icalendar.Calendar, occurrence: TaskOccurrence) -> None:
    """Mark the override of ``occurrence`` open again (STATUS NEEDS-ACTION, COMPLETED removed)."""
    set_state(_override(ical, occurrence), False)


def describe(ical: icalendar.Calendar) -> dict[str, Any]:
    """What a task listing says about a series: rrule, recurring, the current occurrence and its due time.

    A series whose rule cannot be expanded is described as recurring without a current occurrence.
    """
    series = master(ical, "VTODO")
    if not is_recurring(series):
        return {}
    rule: Any = series.get("RRULE")
    text = rule.to_ical().decode() if rule is not None and hasattr(rule, "to_ical") else None
    done = sum(1 for c in overrides(ical, "VTODO") if is_done(c))
    described: dict[str, Any] = {"recurring": True, "rrule": text, "completed_occurrences": done}
    try:
        now = current(ical)
    except Unreadable:
        return described
    if now is not None:
        described |= {"current_occurrence": now.rid, "next_due": now.due}
    return described
