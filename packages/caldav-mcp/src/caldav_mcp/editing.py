# pyright: reportAttributeAccessIssue=false
# (icalendar types a property lookup as the union of every value type, so ``.dt`` reads as unknown.)
"""Changing parsed iCalendar entries in place, keeping every property a change does not touch."""

from __future__ import annotations

import contextlib
import datetime as dt
import uuid
from collections.abc import Mapping
from typing import Any

import icalendar

from caldav_mcp.errors import InvalidInput
from caldav_mcp.ical import parse_when
from caldav_mcp.rrule import rule_problem, until_problem

__all__ = [
    "PRODID",
    "apply_text",
    "bump",
    "new_calendar",
    "new_entry",
    "new_uid",
    "serialise",
    "set_times",
    "validate_rrule",
]

PRODID = "-//caldav-mcp//EN"


def new_uid() -> str:
    """A fresh UID (RFC 5545 §3.8.4.7): a random UUID under this server's name."""
    return f"{uuid.uuid4()}@caldav-mcp"


def new_entry(component: icalendar.Component, uid: str | None = None) -> icalendar.Component:
    """Give a fresh VEVENT/VTODO/VJOURNAL its UID (``uid``, or a new one) and DTSTAMP (RFC 5545 §3.8.4.7, §3.8.7.2)."""
    component.add("UID", uid or new_uid())
    component.add("DTSTAMP", now_utc())
    return component


def new_calendar() -> icalendar.Calendar:
    """An empty VCALENDAR with VERSION and PRODID."""
    cal = icalendar.Calendar()
    cal.add("PRODID", PRODID)
    cal.add("VERSION", "2.0")
    return cal


def serialise(cal: icalendar.Calendar) -> str:
    """The calendar as text, with a VTIMEZONE for every TZID it uses."""
    # A TZID without a known zone keeps its own VTIMEZONE, if it had one.
    with contextlib.suppress(Exception):
        cal.add_missing_timezones()
    return cal.to_ical().decode("utf-8")


def now_utc() -> dt.datetime:
    """The current instant, UTC, to the second."""
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def bump(component: icalendar.Component, *, sequence: bool = True) -> None:
    """Mark a change: SEQUENCE + 1 (RFC 5545 §3.8.7.4), DTSTAMP and LAST-MODIFIED now.

    An attendee answering an invitation must leave SEQUENCE alone (RFC 6638
    §3.2.2.1: only the organiser revises the event), hence ``sequence=False``.
    """
    if sequence:
        value = int(component.get("SEQUENCE", 0)) + 1
        component.pop("SEQUENCE", None)
        component.add("SEQUENCE", value)
    for name in ("DTSTAMP", "LAST-MODIFIED"):
        component.pop(name, None)
    component.add("DTSTAMP", now_utc())
    component.add("LAST-MODIFIED", now_utc())


def apply_text(component: icalendar.Component, changes: Mapping[str, str | None]) -> None:
    """Set (or, for an empty string, remove) text properties such as SUMMARY or DESCRIPTION."""
    for name, value in changes.items():
        if value is None:
            continue
        component.pop(name, None)
        if value != "":
            component.add(name, value)


def set_times(
    component: icalendar.Component,
    *,
    start: str | None,
    end: str | None,
    tzid: str | None,
    start_prop: str = "DTSTART",
    end_prop: str = "DTEND",
) -> None:
    """Replace start and/or end; a date start makes an all-day entry with an exclusive end.

    Raises:
        InvalidInput: the values do not parse, mix dates and date-times, or end is not after start.
    """
    new_start = parse_when(start, "start", tzid) if start is not None else None
    new_end = parse_when(end, "end", tzid) if end is not None else None
    current_start = component.get(start_prop).dt if component.get(start_prop) is not None else None
    current_end = component.get(end_prop).dt if component.get(end_prop) is not None else None
    if current_end is None and current_start is not None and "DURATION" in component:
        current_end = current_start + component["DURATION"].dt
    final_start = new_start if new_start is not None else current_start
    final_end = new_end if new_end is not None else current_end
    if new_start is not None and new_end is None and current_start is not None and current_end is not None:
        final_end = new_start + (current_end - current_start)  # keep the duration when only start moves
    if final_start is not None and final_end is not None:
        if isinstance(final_start, dt.datetime) != isinstance(final_end, dt.datetime):
            raise InvalidInput("end: give dates for both start and end (all-day) or date-times for both")
        if _comparable(final_end) <= _comparable(final_start):
            raise InvalidInput("end: must be after start")
    for name, value in ((start_prop, final_start), (end_prop, final_end)):
        if value is not None:
            component.pop(name, None)
            component.add(name, value)
    if final_end is not None:
        component.pop("DURATION", None)


def _comparable(value: dt.date | dt.datetime) -> Any:
    if isinstance(value, dt.datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)
    return dt.datetime.combine(value, dt.time(), tzinfo=dt.UTC)


def validate_rrule(text: str, dtstart: dt.date | dt.datetime | None = None) -> icalendar.vRecur:
    """Check and parse an RRULE value given by the caller (``FREQ=WEEKLY;COUNT=10``).

    Args:
        text: The rule (a leading ``RRULE:`` is allowed).
        dtstart: The entry's DTSTART, for the UNTIL checks.

    Raises:
        InvalidInput: the rule breaks RFC 5545 §3.3.10; the message names the
            rule part (see :func:`caldav_mcp.rrule.rule_problem` and
            :func:`caldav_mcp.rrule.until_problem`).
    """
    problem = rule_problem(text)
    if problem is None and dtstart is not None:
        problem = until_problem(text, dtstart)
    if problem is not None:
        raise InvalidInput(f"rrule: {problem}")
    try:
        return icalendar.vRecur.from_ical(text.strip().removeprefix("RRULE:"))
    except (ValueError, TypeError):
        raise InvalidInput(f"rrule: {text!r} is not an RRULE (e.g. FREQ=WEEKLY;BYDAY=MO;COUNT=10)") from None
