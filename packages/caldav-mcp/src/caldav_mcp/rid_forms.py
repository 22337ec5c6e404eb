"""A RECURRENCE-ID in another form than the series' DTSTART, read as naming one occurrence (RFC 5545 §3.8.4.4).

RFC 5545 §3.8.4.4 requires a RECURRENCE-ID to have DTSTART's value type
(DATE with a DATE, DATE-TIME with a DATE-TIME) and, for a DATE-TIME, to be
given as DTSTART is (in its zone, in UTC, or floating). A server may still
hold one written otherwise (Radicale stores it, and anyone who can send an
invitation can write it). The recurrence library then treats it as naming no
occurrence of the rule: the override shows next to the occurrence it meant,
and the later occurrences of a ``RANGE=THISANDFUTURE`` override cannot be told
apart. This server reads such a value as naming the rule's occurrence it
most nearly names, written in DTSTART's form (:func:`in_series_form`):

* a DATE on a DATE-TIME series: the rule's first instance whose start falls on
  that date in the series' zone (else that date at DTSTART's time of day);
* a floating DATE-TIME on a zoned or UTC series: that wall-clock time in the
  series' zone; a zoned or UTC one on a floating series: its wall-clock time
  as written; a zoned one in another zone: the same instant in the series' zone;
* a DATE-TIME on a DATE series: its date as written.

Every EXDATE (§3.8.5.1) and new RECURRENCE-ID this server writes is in
DTSTART's exact form (:func:`written`), so it names exactly one instance: a
DATE EXDATE on a DATE-TIME series would exclude every instance of that day.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from caldav_mcp.components import master, overrides, rid_text, value_of
from caldav_mcp.watch import StepLimitReached

if TYPE_CHECKING:  # imported where a call needs it: listing the tools does not (startup time)
    import icalendar

__all__ = [
    "in_series_form",
    "in_series_forms",
    "key_of",
    "key_of_text",
    "keyer",
    "stored_forms",
    "value_of_text",
    "written",
]

_DAY_SEARCH = 10_000
"""The most rule instances looked at for the one on a date (a rule with more per day than this is not searched)."""
_TEXT = re.compile(r"^(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})(Z?))?$")


def _start(cal: icalendar.Calendar, kind: str) -> Any:
    try:
        return value_of(master(cal, kind), "DTSTART")
    except KeyError:
        return None


def _first_on_day(cal: icalendar.Calendar, kind: str, day: dt.date, start: dt.datetime) -> dt.datetime | None:
    import icalendar
    import recurring_ical_events

    only = icalendar.Calendar()
    only.add_component(master(cal, kind))
    found = recurring_ical_events.of(only, components=[kind]).after(day - dt.timedelta(days=1))
    for seen, component in enumerate(found):
        at = value_of(component, "DTSTART")
        if not isinstance(at, dt.datetime) or seen >= _DAY_SEARCH:
            return None
        if at.tzinfo is not None and start.tzinfo is not None:
            at = at.astimezone(start.tzinfo)
        if at.date() == day:
            return at
        if at.date() > day:
            return None
    return None


def _on_day(cal: icalendar.Calendar, kind: str, day: dt.date, start: dt.datetime) -> dt.datetime:
    """The series' first instance starting on ``day`` in its own zone; else ``day`` at DTSTART's time of day.

    Raises:
        StepLimitReached: the step bound of the expansion this lookup is part of was reached.
    """
    try:
        found = _first_on_day(cal, kind, day, start)
    except StepLimitReached:
        raise
    except Exception:
        found = None
    return found if found is not None else dt.datetime.combine(day, start.time(), tzinfo=start.tzinfo)


def in_series_form(cal: icalendar.Calendar, kind: str, value: dt.date | dt.datetime) -> dt.date | dt.datetime:
    """``value`` (a RECURRENCE-ID, an EXDATE, an occurrence id) as the occurrence it names, in DTSTART's form.

    See the module docstring for the rule (RFC 5545 §3.8.4.4); a value
    already in DTSTART's form is returned as it is (a zoned one in DTSTART's
    zone). Without a DTSTART the value is returned unchanged.
    """
    return _formed(cal, kind, _start(cal, kind), value)


def _formed(cal: icalendar.Calendar, kind: str, start: Any, value: dt.date | dt.datetime) -> dt.date | dt.datetime:
    if not isinstance(start, dt.date):
        return value
    if not isinstance(start, dt.datetime):
        return value.date() if isinstance(value, dt.datetime) else value
    if not isinstance(value, dt.datetime):
        return _on_day(cal, kind, value, start)
    if start.tzinfo is None:
        return value.replace(tzinfo=None)
    if value.tzinfo is None:
        return value.replace(tzinfo=start.tzinfo)
    return value.astimezone(start.tzinfo)


def keyer(cal: icalendar.Calendar, kind: str) -> Callable[[dt.date | dt.datetime], str]:
    """:func:`key_of` for many values of one series, its DTSTART looked up once (RFC 5545 §3.8.4.4)."""
    start = _start(cal, kind)
    return lambda value: rid_text(_formed(cal, kind, start, value))


def key_of(cal: icalendar.Calendar, kind: str, value: dt.date | dt.datetime) -> str:
    """The compact text of the occurrence ``value`` names (:func:`in_series_form`): equal keys, one occurrence."""
    return rid_text(in_series_form(cal, kind, value))


def value_of_text(text: str) -> dt.date | dt.datetime | None:
    """A RECURRENCE-ID given as compact text (``20270105``, ``20270105T120000[Z]``) as a value; None if it is none."""
    match = _TEXT.match(text)
    if match is None:
        return None
    year, month, day, hour, minute, second, utc = match.groups()
    try:
        date = dt.date(int(year), int(month), int(day))
        if hour is None:
            return date
        clock = dt.time(int(hour), int(minute), int(second))
        return dt.datetime.combine(date, clock, tzinfo=dt.UTC if utc else None)
    except ValueError:
        return None


def key_of_text(cal: icalendar.Calendar, kind: str, text: str) -> str:
    """:func:`key_of` for a RECURRENCE-ID given as compact text (an occurrence id's part after ``#``)."""
    value = value_of_text(text)
    return text if value is None else key_of(cal, kind, value)


def _form(value: dt.date | dt.datetime) -> tuple[bool, bool]:
    return isinstance(value, dt.datetime), isinstance(value, dt.datetime) and value.tzinfo is not None


def in_series_forms(cal: icalendar.Calendar, kind: str) -> tuple[icalendar.Calendar, dict[str, Any]]:
    """``cal`` for expansion, every override's RECURRENCE-ID in DTSTART's form; and the stored values by key.

    ``cal`` itself when no override needs it (the common case); otherwise a
    new calendar sharing every other component, the RANGE parameter kept.
    The second value maps each changed override's key (:func:`key_of`) to its
    stored RECURRENCE-ID, for :func:`stored_forms`.
    """
    import icalendar

    stored: dict[str, Any] = {}
    clones: dict[int, icalendar.Component] = {}
    start = _start(cal, kind)
    if not isinstance(start, dt.date):
        return cal, stored
    for component in overrides(cal, kind):
        prop: Any = component["RECURRENCE-ID"]
        if _form(prop.dt) == _form(start):
            continue  # DTSTART's form (a zoned one in any zone names an instant the library matches as it is)
        formed = _formed(cal, kind, start, prop.dt)
        clone = component.__class__()
        clone.update(component)
        clone.subcomponents = list(component.subcomponents)
        written_rid = icalendar.vDDDTypes(formed)
        if "RANGE" in prop.params:
            written_rid.params["RANGE"] = prop.params["RANGE"]
        clone["RECURRENCE-ID"] = written_rid
        clones[id(component)] = clone
        stored[rid_text(formed)] = prop.dt
    if not clones:
        return cal, stored
    made = icalendar.Calendar()
    made.update(cal)
    made.subcomponents = [_swapped(sub, clones) for sub in cal.subcomponents]
    return made, stored


def _swapped(component: icalendar.Component, clones: dict[int, icalendar.Component]) -> icalendar.Component:
    return clones.get(id(component), component)


def stored_forms(stored: dict[str, Any], expanded: list[icalendar.Component]) -> None:
    """Give each expanded occurrence of an override changed by :func:`in_series_forms` its stored RECURRENCE-ID.

    So the occurrence's id is the one the server holds for its override (the
    UID and RECURRENCE-ID pair of §3.8.4.4); :func:`key_of` still finds it by
    the original start in DTSTART's form.
    """
    if not stored:
        return
    import icalendar

    for component in expanded:
        rid: Any = component.get("RECURRENCE-ID")
        if rid is not None and rid_text(rid.dt) in stored:
            component["RECURRENCE-ID"] = icalendar.vDDDTypes(stored[rid_text(rid.dt)])


def written(
    series: icalendar.Component,
    cal: icalendar.Calendar,
    kind: str,
    name: str,
    value: Any,
    parameters: dict[str, str] | None = None,
) -> None:
    """Add ``name`` (EXDATE, RECURRENCE-ID) to ``series`` as ``value`` in DTSTART's exact form (RFC 5545 §3.8.4.4).

    The value type, and for a zoned DTSTART its TZID parameter as DTSTART
    has it (a UTC one ends in ``Z``, a floating one has neither), so the
    value names exactly one instance (§3.8.5.1).
    """
    formed = in_series_form(cal, kind, value)
    start: Any = master(cal, kind).get("DTSTART")
    tzid = start.params.get("TZID") if start is not None else None
    parameters = dict(parameters or {})
    if tzid and isinstance(formed, dt.datetime) and formed.tzinfo is not None:
        parameters["TZID"] = str(tzid)
    series.add(name, formed, parameters=parameters)
