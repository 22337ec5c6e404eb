"""Which RECURRENCE-ID each occurrence of a series has: its own original start (RFC 5545 §3.8.4.4).

An override with ``RECURRENCE-ID;RANGE=THISANDFUTURE`` changes its own
occurrence and every later one: each later occurrence is moved by the same
time difference (the override's DTSTART less its RECURRENCE-ID) and takes the
override's properties. The recurrence library (recurring-ical-events) gives
each such later occurrence a copy of the override, RECURRENCE-ID included, so
several occurrences would carry one id. Here each one gets back the
RECURRENCE-ID it has in the recurrence set: its original start, the override's
shift taken off again.

Terms used in this package:

* **anchor**: a stored override with ``RANGE=THISANDFUTURE``;
* **governed**: an occurrence whose original start is after an anchor's
  RECURRENCE-ID (and before the next anchor's), with no override of its own;
  its times and properties come from that anchor.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from caldav_mcp.components import _of_kind, rid_text, utc_bound, value_of

if TYPE_CHECKING:  # imported where a call needs it: listing the tools does not (startup time)
    import icalendar

__all__ = ["anchors", "governing_anchor", "is_anchor", "offset_of", "own_recurrence_ids", "shift_of"]


def is_anchor(component: icalendar.Component) -> bool:
    """Whether ``component`` is an override with ``RANGE=THISANDFUTURE`` (RFC 5545 §3.2.13)."""
    rid: Any = component.get("RECURRENCE-ID")
    return rid is not None and str(rid.params.get("RANGE", "")).upper() == "THISANDFUTURE"


def shift_of(component: icalendar.Component) -> dt.timedelta | None:
    """An override's DTSTART less its RECURRENCE-ID (how far it moved its occurrence); None if not comparable.

    Python's own difference, as the recurrence library takes it (wall-clock
    time within one zone, the instants' difference across zones), so that a
    later occurrence less this shift is exactly its original start. None
    when one is a date and the other a date-time, or one floating and the
    other not.
    """
    rid: Any = component.get("RECURRENCE-ID")
    start: Any = component.get("DTSTART")
    if rid is None or start is None:
        return None
    if isinstance(rid.dt, dt.datetime) != isinstance(start.dt, dt.datetime):
        return None
    if isinstance(rid.dt, dt.datetime) and (rid.dt.tzinfo is None) != (start.dt.tzinfo is None):
        return None
    return start.dt - rid.dt


def anchors(cal: icalendar.Calendar, kind: str) -> dict[str, icalendar.Component]:
    """The stored RANGE=THISANDFUTURE overrides of ``kind``, by compact RECURRENCE-ID (``20270106T120000Z``)."""
    found: dict[str, icalendar.Component] = {}
    for component in _of_kind(cal, kind):
        if is_anchor(component):
            found[rid_text(value_of(component, "RECURRENCE-ID"))] = component
    return found


def _order(value: dt.date | dt.datetime) -> dt.datetime:
    return utc_bound(value)


def governing_anchor(cal: icalendar.Calendar, kind: str, original: dt.date | dt.datetime) -> icalendar.Component | None:
    """The anchor whose range holds the occurrence originally at ``original``: the latest one at or before it.

    None when no anchor is at or before ``original`` (the series itself then gives its values).
    """
    chosen: icalendar.Component | None = None
    chosen_at: dt.datetime | None = None
    for component in anchors(cal, kind).values():
        at = _order(value_of(component, "RECURRENCE-ID"))
        if at <= _order(original) and (chosen_at is None or at > chosen_at):
            chosen, chosen_at = component, at
    return chosen


def own_recurrence_ids(cal: icalendar.Calendar, kind: str, expanded: list[icalendar.Component]) -> None:
    """Give each expanded occurrence governed by an anchor the RECURRENCE-ID of its own original start.

    ``expanded`` are copies made by the recurrence library (changed in place;
    the stored ``cal`` is not). An occurrence that carries an anchor's
    RECURRENCE-ID but starts elsewhere than the anchor's own DTSTART is a
    later occurrence of its range: its original start is its DTSTART less the
    anchor's shift, written without the RANGE parameter. The anchor's own
    occurrence keeps the anchor's RECURRENCE-ID (without RANGE too: it names
    one occurrence).
    """
    stored = anchors(cal, kind)
    if not stored:
        return
    import icalendar

    for component in expanded:
        rid: Any = component.get("RECURRENCE-ID")
        if rid is None or not is_anchor(component):
            continue
        anchor = stored.get(rid_text(rid.dt))
        shift = shift_of(anchor) if anchor is not None else None
        start: Any = component.get("DTSTART")
        if shift is None or start is None:
            continue
        original = start.dt - shift
        component["RECURRENCE-ID"] = icalendar.vDDDTypes(original)


def offset_of(cal: icalendar.Calendar, kind: str, rid: str) -> dt.timedelta:
    """How far the occurrence whose own RECURRENCE-ID is ``rid`` (compact text) may lie from that start.

    Its override's shift when it has one, else the shift of the
    ``RANGE=THISANDFUTURE`` override that governs it, else nothing; used to
    look the occurrence up in a window of a few days around its actual start.
    """
    for component in _of_kind(cal, kind):
        if "RECURRENCE-ID" in component and rid_text(value_of(component, "RECURRENCE-ID")) == rid:
            return shift_of(component) or dt.timedelta(0)
    digits = rid.rstrip("Z")
    day = dt.date(int(digits[:4]), int(digits[4:6]), int(digits[6:8]))
    if len(digits) == 8:
        original: dt.date | dt.datetime = day
    else:
        clock = dt.time(int(digits[9:11]), int(digits[11:13]), int(digits[13:15]))
        original = dt.datetime.combine(day, clock, tzinfo=dt.UTC if rid.endswith("Z") else None)
    anchor = governing_anchor(cal, kind, original)
    return (shift_of(anchor) or dt.timedelta(0)) if anchor is not None else dt.timedelta(0)
