"""Ending a recurring event before one of its occurrences ("this and following", RFC 5545 §3.3.10, §3.8.5).

The series is ended by an UNTIL just before the occurrence, in the form
RFC 5545 §3.3.10 requires for the series' DTSTART:

* DTSTART a date (all-day): UNTIL is the date before the occurrence's;
* DTSTART a floating date-time: UNTIL is a floating date-time, one second
  before the occurrence's local start;
* DTSTART with a zone or in UTC: UNTIL is in UTC, one second before the
  occurrence's start as an instant (so a series across a daylight-saving
  change ends at the right wall-clock occurrence).

COUNT is replaced by that UNTIL (the two may not stand together). RDATEs at
or after the occurrence go, as do the overrides (RECURRENCE-ID) of
occurrences from it on; EXDATEs stay (those after UNTIL name nothing any
more, and removing them would change nothing).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from caldav_mcp import dialogs
from caldav_mcp.errors import InvalidInput
from caldav_mcp.ical import Unreadable, count_occurrences, master, occurrence_start, overrides, utc_bound, value_of
from caldav_mcp.own_zones import from_ical
from caldav_mcp.rid_forms import in_series_form

if TYPE_CHECKING:  # imported where a call needs it: listing the tools does not (startup time)
    import icalendar

__all__ = ["Split", "end_before", "until_before"]

Time = dt.date | dt.datetime


def until_before(start: Time, original: Time) -> Time:
    """The UNTIL that ends a series whose DTSTART is ``start`` just before the occurrence at ``original``.

    ``original`` is in DTSTART's form (:func:`caldav_mcp.rid_forms.in_series_form`).
    """
    if not isinstance(start, dt.datetime):
        day = original.date() if isinstance(original, dt.datetime) else original
        return day - dt.timedelta(days=1)
    assert isinstance(original, dt.datetime)
    if start.tzinfo is None:
        return original.replace(tzinfo=None) - dt.timedelta(seconds=1)
    return original.astimezone(dt.UTC) - dt.timedelta(seconds=1)


def _from(value: Time, original: Time) -> bool:
    return utc_bound(value) >= utc_bound(original)


class Split:
    """A series ended before one occurrence: the counts a dialog states, and the change itself.

    Attributes:
        kept: Occurrences before the split (they stay).
        dropped: Occurrences from it on: a number, None for a series that never ends, ``"uncountable"``.
    """

    def __init__(self, ical: icalendar.Calendar, occurrence: icalendar.Component) -> None:
        """Work out the split of ``ical``'s series at ``occurrence`` (as :func:`caldav_mcp.ical.occurrences` gives it).

        Raises:
            InvalidInput: it is the series' first occurrence (nothing would stay: that is the whole series).
            BackendError: the stored series cannot be expanded.
        """
        self.original: Time = in_series_form(ical, "VEVENT", occurrence_start(occurrence))
        head = from_ical(ical.to_ical())
        end_before(head, self.original)
        try:
            kept = count_occurrences(head, "VEVENT")
        except Unreadable:
            kept = None
        if kept == 0:
            raise InvalidInput(
                "id: this is the series' first occurrence, so ending the series before it leaves nothing; give "
                "scope 'series' to delete the whole series"
            )
        self.kept: int | None = kept
        total: dialogs.Count
        try:
            total = count_occurrences(ical, "VEVENT")
        except Unreadable:
            total = "uncountable"
        self.dropped: dialogs.Count = total - kept if isinstance(total, int) and kept is not None else total
        if kept is None:
            self.dropped = "uncountable"


def end_before(ical: icalendar.Calendar, original: Time) -> None:
    """End ``ical``'s VEVENT series just before the occurrence at ``original`` (see the module), in place."""
    import icalendar

    series = master(ical, "VEVENT")
    until = until_before(value_of(series, "DTSTART"), original)
    raw: Any = series.get("RRULE")
    rules: list[Any] = raw if isinstance(raw, list) else [raw] if raw is not None else []
    series.pop("RRULE", None)
    for rule in rules:
        parts = {key: value for key, value in dict(rule).items() if key not in {"COUNT", "UNTIL"}}
        parts["UNTIL"] = [until]
        series.add("RRULE", icalendar.vRecur(parts))
    rdates: Any = series.get("RDATE")
    if rdates is not None:
        series.pop("RDATE")
        for group in rdates if isinstance(rdates, list) else [rdates]:
            params = dict(group.params)
            kept = [period.dt for period in group.dts if not _from(_start_of(period.dt), original)]
            if kept:
                series.add("RDATE", kept, parameters=params)
    for component in overrides(ical, "VEVENT"):
        if _from(in_series_form(ical, "VEVENT", occurrence_start(component)), original):
            ical.subcomponents.remove(component)


def _start_of(value: Any) -> Time:
    """An RDATE value's start (a PERIOD is a pair whose first item is its start)."""
    return value[0] if isinstance(value, tuple) else value
