"""Changing one occurrence that a ``RANGE=THISANDFUTURE`` override governs, and no other (RFC 5545 §3.8.4.4).

An override with ``RECURRENCE-ID;RANGE=THISANDFUTURE`` (an *anchor*, see
:mod:`caldav_mcp.recurrence_ids`) gives its own occurrence and every later
one its times (shifted) and properties. A change to one of them is written
so that the others read exactly as before:

* a later occurrence of the range gets an override of its own (no RANGE),
  made from the anchor's properties at its shifted times, or an EXDATE on
  the series when it is deleted (§3.8.5.1): the anchor stays, so the other
  occurrences keep its effect;
* the anchor's own occurrence: the anchor cannot be edited or removed in
  place (that would change or drop the whole range), and a second override
  with the same RECURRENCE-ID is not allowed (§3.8.4.4: the UID and
  RECURRENCE-ID pair names one component). The range is carried on by a
  new anchor at the next occurrence it governs (its RECURRENCE-ID, the
  same shift, the same properties), and the old anchor becomes an override of
  its own occurrence only, which is then edited, or removed with an EXDATE.

Every RECURRENCE-ID is read, and every new one and EXDATE written, in the
series' DTSTART form (:mod:`caldav_mcp.rid_forms`), so each names one instance.

So no override is left on an excluded occurrence, every override names one
occurrence except anchors, and an anchor always stands on an occurrence it
governs. This is also what a client that does not understand RANGE reads most
nearly right: it sees the one changed occurrence as an ordinary override.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from caldav_mcp.ical import first_after, occurrence_start, overrides, rid_text, utc_bound, value_of
from caldav_mcp.recurrence_ids import anchors, governing_anchor, is_anchor, original_of, shift_of
from caldav_mcp.rid_forms import in_series_form, keyer, written

if TYPE_CHECKING:  # imported where a call needs it: listing the tools does not (startup time)
    import icalendar

__all__ = ["OWN_TIMES", "copy_of", "detach", "is_anchor", "source_of"]

OWN_TIMES = frozenset({"BEGIN", "END", "RRULE", "RDATE", "EXDATE", "DTSTART", "DTEND", "DURATION", "RECURRENCE-ID"})
"""Properties an override does not take from the component it is made from: the recurrence and its own times."""


def source_of(
    cal: icalendar.Calendar, kind: str, series: icalendar.Component, original: dt.date | dt.datetime
) -> icalendar.Component:
    """The component an occurrence originally at ``original`` takes its properties from: its anchor, else the series."""
    return governing_anchor(cal, kind, original) or series


def copy_of(component: icalendar.Component, *, leave: frozenset[str] = OWN_TIMES) -> icalendar.Component:
    """A new VEVENT (VTODO) with ``component``'s properties, except those named in ``leave``, and its alarms."""
    import icalendar

    made = icalendar.Event() if component.name == "VEVENT" else icalendar.Todo()
    for name, value in component.property_items(recursive=False):
        if name not in leave:
            made.add(name, value)
    for sub in component.subcomponents:
        made.add_component(sub)
    return made


def detach(cal: icalendar.Calendar, kind: str, anchor: icalendar.Component) -> None:
    """Leave ``anchor`` an override of its own occurrence only; its range goes on from the next occurrence it governs.

    The next governed occurrence is the first after the anchor's
    RECURRENCE-ID, in the recurrence set (RRULE and RDATE less EXDATE), with
    no override of its own and before any later anchor. A new anchor is
    added there: ``RECURRENCE-ID;RANGE=THISANDFUTURE`` at that occurrence's
    original start, DTSTART (and DTEND) at its shifted times, every other
    property and alarm as the old anchor's. Without such an occurrence the
    range governs nothing more and only the RANGE parameter goes. ``cal`` is
    changed in place.

    Raises:
        Unreadable: the series cannot be expanded within the bounds of :func:`caldav_mcp.ical.first_after`.
    """
    own = value_of(anchor, "RECURRENCE-ID")
    begins = utc_bound(original_of(cal, kind, anchor))
    shift = shift_of(cal, kind, anchor) or dt.timedelta(0)
    key = keyer(cal, kind)
    taken = {key(occurrence_start(component)) for component in overrides(cal, kind)}
    later = [utc_bound(original_of(cal, kind, a)) for a in anchors(cal, kind).values()]
    later = [at for at in later if at > begins]
    bound = min(later) if later else None

    def take(component: icalendar.Component) -> bool | None:
        original: Any = in_series_form(cal, kind, occurrence_start(component))
        at = utc_bound(original)
        if bound is not None and utc_bound(value_of(component, "DTSTART")) >= bound + abs(shift):
            return None  # past every occurrence this anchor can govern
        if at <= begins or rid_text(original) in taken:
            return False
        return bound is None or at < bound

    found = first_after(cal, kind, utc_bound(value_of(anchor, "DTSTART")), take)
    anchor.pop("RECURRENCE-ID")
    anchor.add("RECURRENCE-ID", own)
    if found is None:
        return
    carried = copy_of(anchor)
    carried.add("DTSTART", value_of(found, "DTSTART"))
    if "DTEND" in anchor and "DTEND" in found:
        carried.add("DTEND", value_of(found, "DTEND"))
    elif "DURATION" in anchor:
        carried.add("DURATION", value_of(anchor, "DURATION"))
    written(carried, cal, kind, "RECURRENCE-ID", occurrence_start(found), {"RANGE": "THISANDFUTURE"})
    cal.add_component(carried)
