"""What the event tools work out before they ask: all-day intent, the scope of a change, overrides, versions, counts."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any, Literal

from approval_core.serving.stored_text import quoted_name
from caldav_mcp import dialogs
from caldav_mcp.client import Resource
from caldav_mcp.editing import bump
from caldav_mcp.errors import BackendError, InvalidInput
from caldav_mcp.ical import (
    Unreadable,
    count_occurrences,
    occurrence_start,
    overrides,
    series_occurrences,
    value_of,
)
from caldav_mcp.range_edits import copy_of, detach, is_anchor, source_of
from caldav_mcp.recurrence_ids import governing_anchor
from caldav_mcp.rid_forms import key_of, key_of_text, keyer, written
from caldav_mcp.rrule import read_rule_problem
from caldav_mcp.tools.events_read import occurrence_of

if TYPE_CHECKING:  # imported where a call needs it: listing the tools does not (startup time)
    import icalendar

__all__ = [
    "ALL_DAY",
    "Scope",
    "all_day_intent",
    "check_until",
    "count_of",
    "my_attendance",
    "override_of",
    "reach_of",
    "remove_occurrence",
    "scope_of",
    "version_of",
]

Scope = Literal["occurrence", "series"]
"""What a change to a recurring event applies to."""

ALL_DAY = (
    "Whether the event is all-day (VALUE=DATE, RFC 5545 §3.6.1). Omitted: decided by start (a date is all-day, a "
    "date-time is timed). true: start and end must be dates (YYYY-MM-DD) or date-times at exactly midnight "
    "(2026-12-01T00:00:00, any offset), read as the date written; end is exclusive (the day after the last day). "
    "false: start must be a date-time."
)


def all_day_intent(all_day: bool, start: str, end: str | None) -> tuple[str, str | None]:
    """``start``/``end`` as dates for an all-day event (midnight date-times → their date), or refuse.

    Raises:
        InvalidInput: all_day=true with a time other than midnight, or all_day=false with a date.
    """
    if not all_day:
        if len(start) == 10:
            raise InvalidInput(
                f"start: all_day is false but {quoted_name(start)} is a date; give a date-time "
                "(2026-12-01T09:00:00 with tzid, "
                "or with an offset), or leave all_day out for an all-day event"
            )
        return start, end

    def as_date(text: str, field: str) -> str:
        if len(text) == 10:
            return text
        try:
            value = dt.datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
        except ValueError:
            value = None
        if value is None or value.time() != dt.time():
            extra = " (the day after the last day, as all-day ends are exclusive)" if field == "end" else ""
            raise InvalidInput(
                f"{field}: all_day is true, so give a date (YYYY-MM-DD){extra} or a date-time at exactly midnight "
                f"such as {text[:10] if len(text) >= 10 else '2026-12-01'}T00:00:00; got {quoted_name(text)}"
            )
        return value.date().isoformat()

    return as_date(start, "start"), as_date(end, "end") if end is not None else None


def scope_of(recurring: bool, scope: Scope | None, rid: str | None) -> Literal["entry", "occurrence", "series"]:
    """What a change applies to: the whole entry (it does not repeat), one occurrence, or the series.

    Raises:
        InvalidInput: an occurrence of an entry that does not repeat, or a recurring event without a scope.
    """
    if not recurring:
        if scope == "occurrence" or rid is not None:
            raise InvalidInput("scope: this event does not repeat; give its UID without scope='occurrence'")
        return "entry"
    if scope is None:
        raise InvalidInput("scope: this event repeats; say 'occurrence' (with an occurrence id) or 'series'")
    if scope == "occurrence" and rid is None:
        raise InvalidInput("id: scope='occurrence' needs an occurrence id (UID#RECURRENCE-ID) from list_events")
    return scope


def override_of(ical: icalendar.Calendar, series: icalendar.Component, rid: str) -> icalendar.Component:
    """The override of the one occurrence whose own RECURRENCE-ID is ``rid``, made if there is none yet.

    A new override takes the properties of what the occurrence shows today:
    the ``RANGE=THISANDFUTURE`` override that governs it, else the series
    (RFC 5545 §3.8.4.4), at the occurrence's times. The anchor of a range is
    first detached (:func:`caldav_mcp.range_edits.detach`), so a change to it
    reaches its own occurrence and no later one.

    Raises:
        NotFound: the series has no such occurrence.
        BackendError: the stored series cannot be expanded.
    """
    key = key_of_text(ical, "VEVENT", rid)
    for component in overrides(ical, "VEVENT"):
        if key_of(ical, "VEVENT", occurrence_start(component)) == key:
            _detached(ical, component)
            return component
    generated = occurrence_of(ical, rid, str(series.get("UID")))
    original = occurrence_start(generated)
    component = copy_of(source_of(ical, "VEVENT", series, original))
    component.add("DTSTART", value_of(generated, "DTSTART"))
    if "DTEND" in generated:
        component.add("DTEND", value_of(generated, "DTEND"))
    written(component, ical, "VEVENT", "RECURRENCE-ID", original)
    ical.add_component(component)
    return component


def remove_occurrence(ical: icalendar.Calendar, series: icalendar.Component, rid: str, original: Any) -> None:
    """Take the one occurrence whose own RECURRENCE-ID is ``rid`` (originally at ``original``) out of the series.

    Its override, if any, goes (an anchor is detached first, so the rest of
    its range stays as it was), and ``original`` becomes an EXDATE of the
    series (RFC 5545 §3.8.5.1) in DTSTART's exact form, naming that one
    instance (:func:`caldav_mcp.rid_forms.written`); the series is marked changed.

    Raises:
        BackendError: the stored series cannot be expanded (detaching an anchor).
    """
    key = key_of_text(ical, "VEVENT", rid)
    for component in overrides(ical, "VEVENT"):
        if key_of(ical, "VEVENT", occurrence_start(component)) == key:
            _detached(ical, component)
            ical.subcomponents.remove(component)
    written(series, ical, "VEVENT", "EXDATE", original)
    bump(series)


def _detached(ical: icalendar.Calendar, component: icalendar.Component) -> None:
    if not is_anchor(component):
        return
    try:
        detach(ical, "VEVENT", component)
    except Unreadable as exc:
        raise BackendError(f"id: the stored event cannot be read: {exc.reason}") from None


def version_of(resource: Resource, field: str = "id") -> str:
    """The ETag a guarded tool binds its approval to, and its write then carries as If-Match.

    :meth:`caldav_mcp.client.CalDAVClient.find` already re-reads an entry by
    GET when the REPORT gave no ETag; a server that sends none even then gives
    nothing to bind an approval to, so the tool refuses before asking.

    Raises:
        BackendError: the server gave no ETag for the entry.
    """
    if not resource.etag:
        raise BackendError(
            f"{field}: the CalDAV server sent no ETag for this entry (not even on a GET), so a change could not be "
            "tied to the version a person approves. Nothing was asked and nothing was changed."
        )
    return resource.etag


def reach_of(ical: icalendar.Calendar) -> tuple[dialogs.Count, int]:
    """A series' occurrences for a change to the series, and how many of them keep changes of their own.

    Those are the occurrences with an override, and the later occurrences of
    a ``RANGE=THISANDFUTURE`` override (RFC 5545 §3.8.4.4): they take their
    values from the override, so a change to the series does not reach them.

    The second number is for :func:`caldav_mcp.dialogs.update_series`: for a
    series that never ends it is the number of overrides (only whether there are any counts).
    """
    count = count_of(ical)
    changed = overrides(ical, "VEVENT")
    if not changed or not isinstance(count, int):
        return count, len(changed) if count is None else 0
    key = keyer(ical, "VEVENT")
    own = {key(occurrence_start(component)) for component in changed}
    try:
        starts = [occurrence_start(component) for component in series_occurrences(ical, "VEVENT")]
    except Unreadable:
        return "uncountable", 0
    keys = [key(at) for at in starts]
    return count, sum(
        1
        for at, key in zip(starts, keys, strict=True)
        if key in own or governing_anchor(ical, "VEVENT", at) is not None
    )


def count_of(ical: icalendar.Calendar) -> dialogs.Count:
    """A series' occurrences for a dialog: a number, None (never ends) or ``"uncountable"``."""
    try:
        return count_occurrences(ical, "VEVENT")
    except Unreadable:
        return "uncountable"


def check_until(series: icalendar.Component) -> None:
    """A series' UNTIL must keep fitting its DTSTART after the start moved (RFC 5545 §3.3.10).

    Raises:
        InvalidInput: the new start has another value type (date / date-time, zoned / floating) than UNTIL.
    """
    raw: Any = series.get("RRULE")
    begin: Any = value_of(series, "DTSTART")
    for rule in raw if isinstance(raw, list) else [raw] if raw is not None else []:
        problem = read_rule_problem(rule.to_ical().decode(), begin)
        if problem is not None:
            raise InvalidInput(f"start: the series' RRULE no longer fits the new start: {problem}")


def my_attendance(ical: icalendar.Calendar, addresses: set[str]) -> list[tuple[icalendar.Component, Any]]:
    """Every ``(VEVENT, ATTENDEE)`` of ``ical`` whose address is one of ``addresses`` (lower-case ``mailto:``)."""
    found: list[tuple[icalendar.Component, Any]] = []
    for component in ical.walk("VEVENT"):
        raw = component.get("ATTENDEE")
        for attendee in raw if isinstance(raw, list) else [raw] if raw is not None else []:  # pyright: ignore[reportUnknownVariableType]
            if str(attendee).lower() in addresses:  # pyright: ignore[reportUnknownArgumentType]
                found.append((component, attendee))
    return found
