"""The occurrences of a plain series in a window, as start and end times, for a listing.

A listing needs only each occurrence's start and end. For most stored series
the recurrence library (recurring-ical-events) does more work than that: it
walks the RRULE from DTSTART, however long ago, and makes a copy of the whole
component for every occurrence. For a *plain* series this module computes the
same occurrences directly with dateutil's rrule, the library's own engine, in
the same steps the library takes (RFC 5545 §3.8.5.3: DTSTART is the first
instance; §3.8.5.1: EXDATE removes instances), with two savings:

* a DAILY or WEEKLY rule without COUNT starts from the last of its periods
  (INTERVAL days or weeks) at least two days before the window: every period
  of such a rule repeats the same days of the week, so the instances from
  there on are the rule's own, and the ones skipped end before the window;
* no component is copied: the caller builds its output from the stored
  component and the times.

Plain means: one component (no RECURRENCE-ID override), one RRULE with only
FREQ (DAILY, WEEKLY, MONTHLY or YEARLY), INTERVAL, COUNT, UNTIL, WKST and
BYDAY of plain weekdays (DAILY and WEEKLY only), no RDATE, and DTSTART, its
end and every EXDATE all dates or all date-times, all floating or all with a
zone. Anything else is left to the library. ``tests/test_plain_series.py``
checks over generated series that both give the same listing.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from caldav_mcp.ical import MAX_OCCURRENCES_PER_ITEM, MAX_PLAIN_PERIODS, _bounded, stored_rule_problem
from caldav_mcp.rrule import plain_period

if TYPE_CHECKING:  # imported where a call needs it: listing the tools does not (startup time)
    import icalendar

__all__ = ["Plain", "plain_series"]

_MARGIN = dt.timedelta(days=2)
"""How far before the window a shifted rule starts: more than any difference between a zone's wall clock and UTC."""

Time = dt.date | dt.datetime


@dataclass(frozen=True, slots=True)
class Plain:
    """The occurrences of a plain series in a window.

    Attributes:
        component: The stored VEVENT (its UID and SUMMARY are every occurrence's).
        spans: Each occurrence's start and end (dates for an all-day series, else date-times in DTSTART's zone
            or floating), in no particular order; the end is exclusive.
    """

    component: icalendar.Component
    spans: list[tuple[Time, Time]]


def _rule_of(component: icalendar.Component) -> tuple[dict[str, list[Any]], str, int] | None:
    """The one plain RRULE of ``component`` (its parts, FREQ and days a period); None for another kind or several."""
    raw: Any = component.get("RRULE")
    if raw is None or isinstance(raw, list) or "RDATE" in component or "RECURRENCE-ID" in component:
        return None
    days = plain_period(raw)
    if days is None:
        return None
    rule: dict[str, list[Any]] = dict(raw)  # pyright: ignore[reportUnknownArgumentType]
    return rule, str(rule["FREQ"][0]), days


def _same_kind(values: list[Time]) -> bool:
    """Whether ``values`` are all dates, or all date-times that are all floating or all with a zone."""
    if all(not isinstance(value, dt.datetime) for value in values):
        return True
    if not all(isinstance(value, dt.datetime) for value in values):
        return False
    return len({value.tzinfo is None for value in values if isinstance(value, dt.datetime)}) == 1


def plain_series(cal: icalendar.Calendar, kind: str, lo: dt.datetime, hi: dt.datetime) -> Plain | None:
    """The occurrences of ``cal``'s ``kind`` series overlapping ``[lo, hi)`` (aware bounds), if it is plain.

    The same occurrences, with the same start and end values, as
    :func:`caldav_mcp.ical.occurrences` gives as components, within the same
    kinds of bound (MAX_OCCURRENCES_PER_ITEM, the step count where the rule's
    periods up to the window pass MAX_PLAIN_PERIODS, the call's expansion
    budget); since a rule without COUNT starts near the window, one the
    library gives up on for the work of walking it from a DTSTART centuries
    before the window is listed here. Returns None for an entry that is not
    a plain series (see the module), whose RRULE dateutil does not take as it
    is, whose times come near the ends of the calendar (years 1 and 9999),
    whose calendar names an ``X-WR-TIMEZONE``, or that is not a VEVENT: the
    caller expands it with the library.

    Raises:
        caldav_mcp.ical.Unreadable: the series passes a bound.
    """
    if kind != "VEVENT" or "X-WR-TIMEZONE" in cal:  # the library moves floating and UTC times into that zone
        return None
    components = [c for c in cal.walk(kind)]
    if len(components) != 1 or "DTSTART" not in components[0]:
        return None
    only = components[0]
    found = _rule_of(only)
    if found is None or stored_rule_problem(cal, kind) is not None:
        return None
    rule, freq, days = found
    from dateutil.rrule import rrulestr
    from recurring_ical_events import EventAdapter
    from recurring_ical_events.util import convert_to_datetime

    adapter = EventAdapter(only)
    try:
        start, end, exdates = adapter.start, adapter.end, adapter.exdates
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError):
        return None
    if not _same_kind([start, end, *exdates]):
        return None
    zone = start.tzinfo if isinstance(start, dt.datetime) else None
    duration: dt.timedelta = adapter.duration
    interval = int(rule.get("INTERVAL", [1])[0])
    written: Any = only["RRULE"]
    try:  # times near the ends of the calendar, or a period of millions of years: the library's to judge
        first = convert_to_datetime(start, zone)
        after = convert_to_datetime(lo - duration, zone)
        before = convert_to_datetime(hi, zone)
        _ = before + duration  # the latest end an occurrence in the window can have
        period = dt.timedelta(days=days * max(interval, 1))
        begin = first
        if "COUNT" not in rule and freq in {"DAILY", "WEEKLY"}:
            wall = after.astimezone(zone).replace(tzinfo=None) if zone is not None else after
            skipped = (wall - _MARGIN - first.replace(tzinfo=None)) // period
            if skipped > 0:
                begin = (first.replace(tzinfo=None) + period * skipped).replace(tzinfo=zone)
        recurrence = rrulestr(written.to_ical().decode(), dtstart=begin)
    except (ValueError, TypeError, OverflowError):
        return None
    periods = (before.replace(tzinfo=None) - begin.replace(tzinfo=None)).days // period.days + 1
    spans = _bounded(
        lambda: _spans(recurrence, rule, begin == first, first, after, before, exdates, duration, start, end, lo, hi),
        MAX_OCCURRENCES_PER_ITEM,
        "occurrences in this window",
        plain=periods if periods <= MAX_PLAIN_PERIODS else None,
    )
    return Plain(only, spans)


def _spans(
    recurrence: Any,
    rule: dict[str, list[Any]],
    from_first: bool,
    first: dt.datetime,
    after: dt.datetime,
    before: dt.datetime,
    exdates: list[Time],
    duration: dt.timedelta,
    start: Time,
    end: Time,
    lo: dt.datetime,
    hi: dt.datetime,
) -> list[tuple[Time, Time]]:
    """The occurrences in the window, as recurring-ical-events finds them (``Series.between``), EXDATEs applied."""
    from recurring_ical_events.util import (
        compare_greater,
        convert_to_date,
        convert_to_datetime,
        time_span_contains_event,
        to_recurrence_ids,
    )

    zone = first.tzinfo
    until = rule.get("UNTIL", [None])[0]
    excluded_days = {value for value in exdates if not isinstance(value, dt.datetime)}
    excluded: set[Any] = set()
    for value in exdates:
        excluded.update(to_recurrence_ids(value))
        excluded.add(convert_to_datetime(value, zone))
    candidates: list[dt.datetime] = []
    if from_first and after <= first <= before and (until is None or not compare_greater(first, until)):
        candidates.append(first)  # DTSTART is the first instance, whether or not the rule matches it
    candidates.extend(
        value
        for value in recurrence.between(after, before, inc=True)
        if until is None or not compare_greater(value, until)
    )
    dates = not isinstance(start, dt.datetime) and not isinstance(end, dt.datetime)
    seen: set[dt.datetime] = set()
    found: list[tuple[Time, Time]] = []
    for value in candidates:
        if value in seen or convert_to_date(value) in excluded_days or excluded.intersection(to_recurrence_ids(value)):
            continue
        seen.add(value)
        began: Time = value
        ended: Time = value + duration
        if dates:
            began, ended = convert_to_date(began), convert_to_date(ended)
        if time_span_contains_event(lo, hi, began, ended):
            found.append((began, ended))
    return found
