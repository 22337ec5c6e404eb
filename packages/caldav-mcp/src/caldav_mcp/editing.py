"""Changing parsed iCalendar entries in place, keeping every property a change does not touch."""

from __future__ import annotations

import contextlib
import datetime as dt
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from approval_core import stable
from approval_core.serving.stored_text import quoted_name
from caldav_mcp.components import readable
from caldav_mcp.errors import InvalidInput
from caldav_mcp.ical import parse_when
from caldav_mcp.own_zones import no_other_zones
from caldav_mcp.rrule import rule_problem, until_problem

if TYPE_CHECKING:  # icalendar is imported where a call needs it: listing the tools does not (startup time)
    import icalendar

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
    """A fresh UID (RFC 5545 §3.8.4.7): a random UUID under this server's name.

    The same for one tool call when it runs again for an approval (``approval_core.stable``), so the request
    asked for is the request sent.
    """
    return stable("uid", lambda: f"{uuid.uuid4()}@caldav-mcp")


def new_entry(component: icalendar.Component, uid: str | None = None) -> icalendar.Component:
    """Give a fresh VEVENT/VTODO/VJOURNAL its UID (``uid``, or a new one) and DTSTAMP (RFC 5545 §3.8.4.7, §3.8.7.2)."""
    component.add("UID", uid or new_uid())
    component.add("DTSTAMP", now_utc())
    return component


def new_calendar() -> icalendar.Calendar:
    """An empty VCALENDAR with VERSION and PRODID."""
    import icalendar

    cal = icalendar.Calendar()
    cal.add("PRODID", PRODID)
    cal.add("VERSION", "2.0")
    return cal


def serialise(cal: icalendar.Calendar) -> str:
    """The calendar as text, with a VTIMEZONE for every TZID it uses that names a zone (IANA, or a Windows name).

    A TZID of no known zone keeps the VTIMEZONE the entry stored, or stays without one
    (:func:`caldav_mcp.own_zones.no_other_zones`: never another entry's).
    """
    # A TZID without a known zone keeps its own VTIMEZONE, if it had one; it never gains another entry's.
    with contextlib.suppress(Exception), no_other_zones():
        cal.add_missing_timezones()
    return cal.to_ical().decode("utf-8")


def now_utc() -> dt.datetime:
    """The current instant, UTC, to the second.

    Within one tool call the same instant, also when the call runs again for an approval
    (``approval_core.stable``).
    """
    made = stable("now", lambda: dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat())
    return dt.datetime.fromisoformat(made)


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
    """Set (or, for an empty string, remove) text properties such as SUMMARY or DESCRIPTION.

    A value equal to the stored one leaves the property as it is, parameters
    included. A new value keeps the property's parameters (LANGUAGE, X-
    parameters) except ALTREP, which points to a representation of the old
    text (RFC 5545 §3.2.1).
    """
    for name, value in changes.items():
        if value is None:
            continue
        current: Any = component.get(name)
        if value != "" and current is not None and not isinstance(current, list) and str(current) == value:
            continue
        params = {
            str(key): str(param)
            for key, param in (getattr(current, "params", {}) if not isinstance(current, list) else {}).items()
            if str(key).upper() != "ALTREP"
        }
        component.pop(name, None)
        if value != "":
            component.add(name, value, parameters=params)


@dataclass(frozen=True, slots=True)
class _Home:
    """How an entry's times are stored: in a zone (its TZID), in UTC, or floating (RFC 5545 §3.3.5)."""

    kind: Literal["zone", "utc", "floating"]
    tz: dt.tzinfo | None = None
    tzid: str | None = None


_UNREADABLE: Any = object()
"""A stored date, date-time or duration that does not parse as RFC 5545 §3.3.4-§3.3.6 says."""


def _stored(component: icalendar.Component, name: str) -> Any:
    """The value of ``name`` as stored: None when absent, :data:`_UNREADABLE` when it does not parse."""
    prop: Any = component.get(name)
    if prop is None:
        return None
    kept = readable(prop)  # None for icalendar's vBroken
    return _UNREADABLE if kept is None else getattr(kept, "dt", _UNREADABLE)


def _unreadable(field: str, prop: str) -> str:
    """The refusal for a change that needs a stored time that cannot be read (never quoting it)."""
    return (
        f"{field}: the entry's stored {prop} is not a date, date-time or duration as RFC 5545 §3.3 writes them, "
        f"so it cannot be kept or moved; give {field} as well to replace it. Nothing was written"
    )


def _home(component: icalendar.Component, names: tuple[str, ...]) -> _Home | None:
    """The form of the first of ``names`` the entry has as a DATE-TIME; None when none (or only dates)."""
    for name in names:
        prop: Any = component.get(name)
        value = _stored(component, name) if prop is not None else None
        if not isinstance(value, dt.datetime):
            continue
        if value.tzinfo is None:
            return _Home("floating")
        param = getattr(prop, "params", {}).get("TZID")
        if param:
            return _Home("zone", value.tzinfo, str(param))
        return _Home("utc", dt.UTC)
    return None


def _in_home(text: str, field: str, tzid: str | None, home: _Home | None) -> dt.date | dt.datetime:
    """A caller's time for an entry stored in ``home`` form (see :func:`set_times`)."""
    value = parse_when(text, field, tzid)
    if tzid is not None or home is None or not isinstance(value, dt.datetime):
        return value
    if value.tzinfo is None:  # wall-clock time, no tzid: the entry's own zone (or still floating)
        return value if home.kind == "floating" else value.replace(tzinfo=home.tz)
    if home.kind == "floating":
        raise InvalidInput(
            f"{field}: this entry's times are floating (no time zone, RFC 5545 §3.3.5), and "
            f"{quoted_name(text)} names an "
            "instant with an offset. Give a wall-clock time without offset (e.g. 2026-06-10T11:00:00) to keep "
            "it floating, or add tzid to place the entry in that zone"
        )
    return value.astimezone(home.tz)


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

    Without ``tzid``, a changed date-time keeps the form the entry's times are
    stored in (RFC 5545 §3.3.5), taken from the property being replaced, else
    from the other one:

    * in a zone (``TZID``): an instant with an offset is written as the same
      instant in that zone, under the same TZID; a date-time without offset is
      wall-clock time in that zone;
    * in UTC: the instant in UTC; a date-time without offset is UTC;
    * floating: a date-time without offset stays floating; an instant with an
      offset is refused (a floating time names no instant), with how to say
      which was meant.

    With ``tzid``, the time is placed in that zone (the entry moves to it); a
    new entry has no stored form, so an offset is kept as UTC and a time
    without offset is floating.

    Raises:
        InvalidInput: the values do not parse, mix dates and date-times, end is
            not after start, or an offset is given for a floating entry.
    """
    homes = {start_prop: _home(component, (start_prop, end_prop)), end_prop: _home(component, (end_prop, start_prop))}
    new_start = _in_home(start, "start", tzid, homes[start_prop]) if start is not None else None
    new_end = _in_home(end, "end", tzid, homes[end_prop]) if end is not None else None
    current_start = _stored(component, start_prop)
    current_end = _stored(component, end_prop)
    if current_end is None and isinstance(current_start, dt.date) and "DURATION" in component:
        duration = _stored(component, "DURATION")
        current_end = current_start + duration if isinstance(duration, dt.timedelta) else _UNREADABLE
    field = "due" if end_prop == "DUE" else "end"
    if new_start is None and current_start is _UNREADABLE:
        raise InvalidInput(_unreadable("start", start_prop))
    if new_end is None and current_end is _UNREADABLE and new_start is not None:
        raise InvalidInput(_unreadable(field, end_prop))
    if current_start is _UNREADABLE:
        current_start = None
    if current_end is _UNREADABLE:
        current_end = None
    final_start = new_start if new_start is not None else current_start
    final_end = new_end if new_end is not None else current_end
    if new_start is not None and new_end is None and current_start is not None and current_end is not None:
        final_end = new_start + (current_end - current_start)  # keep the duration when only start moves
    if final_start is not None and final_end is not None:
        if isinstance(final_start, dt.datetime) != isinstance(final_end, dt.datetime):
            raise InvalidInput(f"{field}: give dates for both start and {field} (all-day) or date-times for both")
        if _comparable(final_end) <= _comparable(final_start):
            raise InvalidInput(_not_after(field, final_start, final_end))
    for name, value in ((start_prop, final_start), (end_prop, final_end)):
        if value is not None:
            component.pop(name, None)
            component.add(name, value)
            home = homes[name]
            if (
                tzid is None
                and home is not None
                and home.kind == "zone"
                and isinstance(value, dt.datetime)
                and value.tzinfo is home.tz
            ):
                written: Any = component[name]
                written.params["TZID"] = home.tzid  # the entry's own TZID, as written before
    if final_end is not None:
        component.pop("DURATION", None)


def _not_after(field: str, start: dt.date | dt.datetime, end: dt.date | dt.datetime) -> str:
    """Why ``end`` (not after ``start``) is refused; for dates, the rule that an all-day end is exclusive."""
    if isinstance(start, dt.datetime):
        return f"{field}: must be after start"
    day = start + dt.timedelta(days=1)
    if field == "due":
        return (
            f"due: must be later than start (RFC 5545 §3.8.2.3); with dates, a task starting {start.isoformat()} "
            f"is due {day.isoformat()} at the earliest, or give no start"
        )
    return (
        f"end: must be after start; an all-day event's end date is exclusive (the day after its last day, "
        f"RFC 5545 §3.6.1), so a one-day event on {start.isoformat()} ends {day.isoformat()}"
    )


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
    import icalendar

    try:
        return icalendar.vRecur.from_ical(text.strip().removeprefix("RRULE:"))
    except (ValueError, TypeError):
        raise InvalidInput(f"rrule: {quoted_name(text)} is not an RRULE (e.g. FREQ=WEEKLY;BYDAY=MO;COUNT=10)") from None
