# pyright: reportAttributeAccessIssue=false
# (icalendar types a property lookup as the union of every value type, so ``.dt`` reads as unknown.)
"""iCalendar in and out (RFC 5545): parsing, times, recurrence.

Times leave this server as ISO 8601 text:

* a zoned or UTC DATE-TIME as an instant with its offset
  (``2026-12-01T09:00:00+01:00``), with the original ``TZID`` alongside;
* a floating DATE-TIME (no TZID, no ``Z``) without an offset, marked
  ``floating`` — it means the same wall-clock time wherever the reader is;
* a DATE (``VALUE=DATE``, all-day) as ``2026-12-01``, with an exclusive end
  (RFC 5545 §3.6.1): a one-day event on 1 December ends ``2026-12-02``.

Dates are never converted through the host's time zone, so an all-day event
never moves a day.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import icalendar
import recurring_ical_events

from caldav_mcp.errors import BackendError, InvalidInput

__all__ = [
    "MAX_ITERATIONS",
    "Times",
    "count_occurrences",
    "iter_occurrences",
    "master",
    "overrides",
    "parse_calendar",
    "parse_when",
    "rid_text",
    "times_of",
]

MAX_ITERATIONS = 20_000
_RID = re.compile(r"^\d{8}(T\d{6}Z?)?$")


def parse_calendar(data: str) -> icalendar.Calendar:
    """Parse an iCalendar object read from the server.

    Raises:
        BackendError: the server returned text that is not iCalendar.
    """
    try:
        return icalendar.Calendar.from_ical(data)  # pyright: ignore[reportReturnType]
    except ValueError as exc:
        raise BackendError("the calendar server returned an entry that is not valid iCalendar") from exc


def _of_kind(cal: icalendar.Calendar, kind: str) -> list[icalendar.Component]:
    return [c for c in cal.walk(kind)]


def master(cal: icalendar.Calendar, kind: str) -> icalendar.Component:
    """The component without RECURRENCE-ID (the series, or the only instance)."""
    found = [c for c in _of_kind(cal, kind) if "RECURRENCE-ID" not in c]
    if found:
        return found[0]
    components = _of_kind(cal, kind)
    if not components:
        raise BackendError(f"the entry holds no {kind}")
    return components[0]


def overrides(cal: icalendar.Calendar, kind: str) -> list[icalendar.Component]:
    """The components with a RECURRENCE-ID (changed occurrences, RFC 5545 §3.8.4.4)."""
    return [c for c in _of_kind(cal, kind) if "RECURRENCE-ID" in c]


def is_recurring(component: icalendar.Component) -> bool:
    """Whether the component has an RRULE or RDATE."""
    return "RRULE" in component or "RDATE" in component


def rid_text(value: dt.date | dt.datetime) -> str:
    """A RECURRENCE-ID as compact iCalendar text: ``20261201``, ``20261201T090000Z`` (UTC) or local."""
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            return value.astimezone(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
        return value.strftime("%Y%m%dT%H%M%S")
    return value.strftime("%Y%m%d")


def parse_rid(text: str, field: str) -> str:
    """Check a RECURRENCE-ID given by the caller (as returned in an occurrence id)."""
    if not _RID.match(text):
        raise InvalidInput(
            f"{field}: {text!r} is not a RECURRENCE-ID as returned by list_events (e.g. 20261201T090000Z)"
        )
    return text


@dataclass(frozen=True, slots=True)
class Times:
    """A component's start and end as this server returns them (see the module docstring)."""

    start: str | None
    end: str | None
    all_day: bool
    tzid: str | None
    floating: bool


def _iso(value: dt.date | dt.datetime) -> str:
    if isinstance(value, dt.datetime):
        return value.isoformat()
    return value.isoformat()


def times_of(component: icalendar.Component, start_prop: str = "DTSTART", end_prop: str = "DTEND") -> Times:
    """Start and end of an event, task (DTSTART/DUE) or journal, as :class:`Times`."""
    start_p: Any = component.get(start_prop)
    end_p: Any = component.get(end_prop)
    start = start_p.dt if start_p is not None else None
    end = end_p.dt if end_p is not None else None
    if end is None and start is not None and "DURATION" in component:
        end = start + component["DURATION"].dt
    if end is None and isinstance(start, dt.date) and not isinstance(start, dt.datetime) and start_prop == "DTSTART":
        end = start + dt.timedelta(days=1)
    anchor = start if start is not None else end
    all_day = isinstance(anchor, dt.date) and not isinstance(anchor, dt.datetime)
    floating = isinstance(anchor, dt.datetime) and anchor.tzinfo is None
    source: Any = start_p if start_p is not None else end_p
    param = source.params.get("TZID") if anchor is not None and source is not None else None
    tzid = str(param) if param else ("UTC" if isinstance(anchor, dt.datetime) and anchor.tzinfo is not None else None)
    return Times(
        _iso(start) if start is not None else None,
        _iso(end) if end is not None else None,
        all_day,
        tzid,
        floating,
    )


def parse_when(text: str, field: str, tzid: str | None = None) -> dt.date | dt.datetime:
    """A time given by the caller.

    Accepts ``YYYY-MM-DD`` (a date, all-day), an ISO 8601 date-time with an
    offset or ``Z`` (an instant), or a date-time without offset: zoned by
    ``tzid`` (an IANA name) when given, otherwise floating.

    An offset names an instant, not a zone (RFC 5545 §3.3.5 has no form for
    a bare offset): with ``tzid`` the instant is placed in that zone,
    otherwise it is kept in UTC. Both keep the moment the caller meant; a
    fixed offset is never written as if it were a zone.

    Raises:
        InvalidInput: the text is none of these, or ``tzid`` is unknown.
    """
    try:
        if len(text) == 10:
            return dt.date.fromisoformat(text)
        value = dt.datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    except ValueError:
        raise InvalidInput(
            f"{field}: {text!r} is not ISO 8601; give 2026-12-01 (all-day), 2026-12-01T09:00:00+01:00, "
            "or 2026-12-01T09:00:00 with a tzid"
        ) from None
    if value.tzinfo is None:
        return value.replace(tzinfo=zone(tzid, "tzid")) if tzid else value
    return value.astimezone(zone(tzid, "tzid") if tzid else dt.UTC)


def zone(name: str, field: str) -> ZoneInfo:
    """An IANA time zone by name.

    Raises:
        InvalidInput: no such zone.
    """
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidInput(f"{field}: {name!r} is not an IANA time zone name (e.g. Europe/Berlin)") from None


def _aware(value: dt.date | dt.datetime, tz: dt.tzinfo) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=tz)
    return dt.datetime.combine(value, dt.time(), tzinfo=tz)


def iter_occurrences(
    cal: icalendar.Calendar, kind: str, start: dt.datetime, end: dt.datetime
) -> Iterator[icalendar.Component]:
    """Occurrences of ``kind`` overlapping ``[start, end)``, overrides applied, at most MAX_ITERATIONS examined.

    Raises:
        InvalidInput: a series produced more than MAX_ITERATIONS occurrences in the window.
    """
    query = recurring_ical_events.of(cal, components=[kind])
    for examined, occurrence in enumerate(query.between(start, end)):
        if examined >= MAX_ITERATIONS:
            raise InvalidInput(f"a series has more than {MAX_ITERATIONS} occurrences in this window; narrow it")
        yield occurrence


def count_occurrences(cal: icalendar.Calendar, kind: str) -> int | None:
    """How many occurrences a series has in all (EXDATEs and overrides applied); None if it never ends.

    Counting stops at MAX_ITERATIONS; a series that long is reported as that number.
    """
    first = master(cal, kind)
    if not is_recurring(first):
        return 1
    rules = first.get("RRULE")
    rules = rules if isinstance(rules, list) else [rules] if rules is not None else []
    if any("COUNT" not in rule and "UNTIL" not in rule for rule in rules):
        return None
    total = 0
    for total, _ in enumerate(recurring_ical_events.of(cal, components=[kind]).all(), start=1):
        if total >= MAX_ITERATIONS:
            break
    return total


def occurrence_start(component: icalendar.Component) -> Any:
    """The RECURRENCE-ID of an occurrence produced by :func:`iter_occurrences` (or its DTSTART)."""
    rid = component.get("RECURRENCE-ID") or component.get("DTSTART")
    return rid.dt if rid is not None else None


def utc_bound(value: dt.date | dt.datetime) -> dt.datetime:
    """A window bound as an aware datetime (a date is midnight UTC)."""
    return _aware(value, dt.UTC)
