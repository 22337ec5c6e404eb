"""Which RECURRENCE-ID each occurrence of a series has: its own original start (RFC 5545 §3.8.4.4).

An override with ``RECURRENCE-ID;RANGE=THISANDFUTURE`` changes its own
occurrence and every later one: each later occurrence is moved by the same
time difference (the override's DTSTART less its RECURRENCE-ID) and takes the
override's properties. The recurrence library (recurring-ical-events) gives
each such later occurrence a copy of the override, RECURRENCE-ID included, so
several occurrences would carry one id. Here each one gets back the
RECURRENCE-ID it has in the recurrence set: its original start, the override's
shift taken off again.

Every RECURRENCE-ID is read in the series' DTSTART form (a DATE or floating
one names the rule's occurrence it means, see :mod:`caldav_mcp.rid_forms`),
so an override's shift and the order of anchors are those of the occurrences
they name.

Terms used in this package:

* **anchor**: a stored override with ``RANGE=THISANDFUTURE``;
* **governed**: an occurrence whose original start is after an anchor's
  RECURRENCE-ID (and before the next anchor's), with no override of its own;
  its times and properties come from that anchor.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from caldav_mcp.components import _of_kind, utc_bound, value_of
from caldav_mcp.rid_forms import in_series_form, key_of, key_of_text, value_of_text

if TYPE_CHECKING:  # imported where a call needs it: listing the tools does not (startup time)
    import icalendar

__all__ = [
    "anchors",
    "governing_anchor",
    "is_anchor",
    "offset_of",
    "original_of",
    "own_recurrence_ids",
    "shift_of",
]


def is_anchor(component: icalendar.Component) -> bool:
    """Whether ``component`` is an override with ``RANGE=THISANDFUTURE`` (RFC 5545 §3.2.13)."""
    rid: Any = component.get("RECURRENCE-ID")
    return rid is not None and str(rid.params.get("RANGE", "")).upper() == "THISANDFUTURE"


def shift_of(cal: icalendar.Calendar, kind: str, component: icalendar.Component) -> dt.timedelta | None:
    """An override's DTSTART less its RECURRENCE-ID (how far it moved its occurrence); None if not comparable.

    The RECURRENCE-ID is read in the series' DTSTART form
    (:func:`caldav_mcp.rid_forms.in_series_form`, RFC 5545 §3.8.4.4), so a
    DATE or floating one on a UTC series gives the shift from the occurrence
    it names.

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
    original = in_series_form(cal, kind, rid.dt)
    if isinstance(original, dt.datetime) != isinstance(start.dt, dt.datetime):
        return None
    if isinstance(original, dt.datetime) and (original.tzinfo is None) != (start.dt.tzinfo is None):
        return None
    return start.dt - original


def anchors(cal: icalendar.Calendar, kind: str) -> dict[str, icalendar.Component]:
    """The stored RANGE=THISANDFUTURE overrides of ``kind``, by the key of their occurrence (``20270106T120000Z``).

    The key is the compact RECURRENCE-ID in the series' DTSTART form (:func:`caldav_mcp.rid_forms.key_of`).
    """
    found: dict[str, icalendar.Component] = {}
    for component in _of_kind(cal, kind):
        if is_anchor(component):
            found[key_of(cal, kind, value_of(component, "RECURRENCE-ID"))] = component
    return found


def original_of(cal: icalendar.Calendar, kind: str, component: icalendar.Component) -> dt.date | dt.datetime:
    """An override's original start: its RECURRENCE-ID in the series' DTSTART form (RFC 5545 §3.8.4.4)."""
    return in_series_form(cal, kind, value_of(component, "RECURRENCE-ID"))


def governing_anchor(cal: icalendar.Calendar, kind: str, original: dt.date | dt.datetime) -> icalendar.Component | None:
    """The anchor whose range holds the occurrence originally at ``original``: the latest one at or before it.

    None when no anchor is at or before ``original`` (the series itself then gives its values).
    """
    chosen: icalendar.Component | None = None
    chosen_at: dt.datetime | None = None
    limit = utc_bound(in_series_form(cal, kind, original))
    for component in anchors(cal, kind).values():
        at = utc_bound(original_of(cal, kind, component))
        if at <= limit and (chosen_at is None or at > chosen_at):
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
        anchor = stored.get(key_of(cal, kind, rid.dt))
        shift = shift_of(cal, kind, anchor) if anchor is not None else None
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
    key = key_of_text(cal, kind, rid)
    for component in _of_kind(cal, kind):
        if "RECURRENCE-ID" in component and key_of(cal, kind, value_of(component, "RECURRENCE-ID")) == key:
            return shift_of(cal, kind, component) or dt.timedelta(0)
    original = value_of_text(rid)
    if original is None:
        return dt.timedelta(0)
    anchor = governing_anchor(cal, kind, original)
    return (shift_of(cal, kind, anchor) or dt.timedelta(0)) if anchor is not None else dt.timedelta(0)
