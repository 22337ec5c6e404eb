"""What a guarded call touches, as the calendar stores it: the approval page's view of it (issue 31).

Each guarded tool already reads the entry it changes (for its ETag and its
counts). These functions describe that entry for the approval page alone
(:class:`approval_core.StoredView`, passed to ``gate.check(stored=...)``):
its title, its start and end in its own zone (and as an instant the browser
shows in its zone), the calendar's display name and path, whether it repeats
and which occurrence is meant, the organizer and the number of attendees; an
edit's fields before -> after; a move's destination; a series' occurrences,
listed up to the view's bound. Nothing here goes into a dialog, a result or
a log: approval-core keeps the view in the pending approval's record only.

Each entry names the ETag it was read at, the one the approval binds as its
``version`` (the gate refuses any other), so the page shows the version the
write's If-Match then carries.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from approval_core import Change, Collection, StoredEntry, StoredField, StoredView
from approval_core.page.stored import ENTRY_LIMIT
from caldav_mcp.dav import CalendarInfo, Resource
from caldav_mcp.errors import CalDAVToolError
from caldav_mcp.ical import Unreadable, calendar_of, is_recurring, master, occurrence_start, series_occurrences

if TYPE_CHECKING:
    import icalendar

__all__ = [
    "answer_view",
    "attendees_change",
    "changes_of",
    "collection",
    "delete_view",
    "edit_view",
    "entry",
    "new_event_view",
    "restore_view",
    "series_view",
    "single",
    "when",
]

_TIMES = {
    "VEVENT": (("DTSTART", "Starts"), ("DTEND", "Ends")),
    "VTODO": (("DTSTART", "Starts"), ("DUE", "Due")),
    "VJOURNAL": (("DTSTART", "Date"),),
}
_KIND = {"VEVENT": "Event", "VTODO": "Task", "VJOURNAL": "Journal entry"}
_FIELDS = {
    "summary": ("SUMMARY", "Title"),
    "description": ("DESCRIPTION", "Description"),
    "location": ("LOCATION", "Location"),
    "status": ("STATUS", "Status"),
    "priority": ("PRIORITY", "Priority"),
    "percent_complete": ("PERCENT-COMPLETE", "Percent complete"),
    "start": ("DTSTART", "Starts"),
    "end": ("DTEND", "Ends"),
    "due": ("DUE", "Due"),
    "date": ("DTSTART", "Date"),
}
_TIME_KEYS = frozenset({"start", "end", "due", "date"})


def collection(cal: CalendarInfo) -> Collection:
    """The calendar as the page names it: its display name as stored, and its path."""
    return Collection(path=cal.path, name=cal.name or None)


def when(value: Any, tzid: str | None = None) -> tuple[str, str | None]:
    """A stored date or date-time as text in its own zone, and (for a zoned one) the UTC instant (ISO 8601).

    ``2026-12-03 10:00 Europe/Berlin`` and ``2026-12-03T09:00:00Z``; a floating time (RFC 5545 §3.3.5 form #1)
    is the same clock time everywhere and has no instant; a date is all-day.
    """
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            return f"{value:%Y-%m-%d %H:%M} (floating: this clock time in any zone)", None
        zone = tzid or value.tzname() or "UTC"
        instant = value.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return f"{value:%Y-%m-%d %H:%M} {zone}", instant
    if isinstance(value, dt.date):
        return f"{value.isoformat()} (all day)", None
    return str(value), None


def _stored_time(found: Any) -> tuple[str, str | None]:
    """A stored time property as :func:`when` writes it; one that is not a time, as its stored text, no instant.

    Another client may have stored a DTSTART or DTEND the icalendar library cannot read as a time (it raises
    ``BrokenCalendarProperty``, a ValueError, naming the value); the page then shows the value as stored.
    """
    tzid = found.params.get("TZID")
    try:
        moment = found.dt
    except ValueError:
        raw = found.to_ical()
        return (
            f"{raw.decode('utf-8', 'replace') if isinstance(raw, bytes) else raw} (not a time this server can read)",
            None,
        )
    return when(moment, str(tzid) if tzid else None)


def _time_field(component: icalendar.Component, prop: str, label: str) -> StoredField | None:
    found: Any = component.get(prop)
    if found is None:
        return None
    text, instant = _stored_time(found)
    return StoredField(label=label, value=text, instant=instant)


def _text(component: icalendar.Component, prop: str) -> str | None:
    found: Any = component.get(prop)
    return None if found is None else str(found)


def _people(component: icalendar.Component) -> list[StoredField]:
    out: list[StoredField] = []
    organizer: Any = component.get("ORGANIZER")
    if organizer is not None:
        name = organizer.params.get("CN")
        text = f"{name} <{organizer}>" if name else str(organizer)
        out.append(StoredField(label="Organizer", value=text, name=True))
    attendees: Any = component.get("ATTENDEE")
    count = len(attendees) if isinstance(attendees, list) else (0 if attendees is None else 1)
    if count:
        out.append(StoredField(label="Attendees", value=f"{count}"))
    return out


def _repeats(component: icalendar.Component, count: int | str | None) -> StoredField:
    if not is_recurring(component):
        return StoredField(label="Repeats", value="no")
    rule: Any = component.get("RRULE")
    rules = rule if isinstance(rule, list) else [rule] if rule is not None else []
    text = "; ".join(r.to_ical().decode() for r in rules) or "on the dates of its RDATE"
    if isinstance(count, int):
        text += f" ({count:,} occurrences)"
    elif count is None:
        text += " (never ends)"
    return StoredField(label="Repeats", value=text)


def entry(
    cal: CalendarInfo,
    resource: Resource,
    component: icalendar.Component,
    kind: str,
    *,
    count: int | str | None = 1,
    occurrence: icalendar.Component | None = None,
    changes: Iterable[Change] = (),
    moved_to: CalendarInfo | None = None,
) -> StoredEntry:
    """One stored entry: ``component`` (the series' master, or the entry) of ``resource`` in ``cal``.

    ``kind`` is ``VEVENT``, ``VTODO`` or ``VJOURNAL``; ``count`` the series' occurrences (a number, None for
    no end, ``"uncountable"``); ``occurrence`` the one occurrence a call acts on, whose times are then shown.
    """
    shown = occurrence if occurrence is not None else component
    fields = [StoredField(label="Title", value=_text(shown, "SUMMARY"), name=True)]
    for prop, label in _TIMES.get(kind, ()):
        found = _time_field(shown, prop, label)
        if found is not None:
            fields.append(found)
    if kind == "VTODO" and _text(component, "STATUS"):
        fields.append(StoredField(label="Status", value=_text(component, "STATUS")))
    if _text(shown, "LOCATION"):
        fields.append(StoredField(label="Location", value=_text(shown, "LOCATION")))
    if kind == "VEVENT":
        fields.append(_repeats(component, count))
    if occurrence is not None:
        text, instant = when(occurrence_start(occurrence))
        fields.append(StoredField(label="Which occurrence", value=f"the one of {text}", instant=instant))
    fields.extend(_people(shown))
    noun = _KIND.get(kind, kind)
    if occurrence is not None:
        noun = "Occurrence of a recurring event"
    elif kind == "VEVENT" and is_recurring(component):
        noun = "Recurring event (the whole series)"
    return StoredEntry(
        kind=noun,
        collection=collection(cal),
        href=resource.href,
        etag=resource.etag,
        fields=tuple(fields),
        changes=tuple(changes),
        moved_to=None if moved_to is None else collection(moved_to),
    )


def single(cal: CalendarInfo, resource: Resource, component: icalendar.Component, kind: str, **how: Any) -> StoredView:
    """A view of one entry (:func:`entry`, same arguments)."""
    return StoredView(entries=(entry(cal, resource, component, kind, **how),))


def edit_view(
    cal: CalendarInfo,
    resource: Resource,
    series: icalendar.Component,
    edited: icalendar.Component,
    scope: str,
    count: Any,
    new: Mapping[str, Any],
    tzid: str | None,
    more: Iterable[Change] = (),
) -> StoredView:
    """An edit of ``edited`` (an occurrence's override, or the series or entry): the entry and before -> after.

    ``more`` are further changes to show (:func:`attendees_change`).
    """
    occurrence = edited if scope == "occurrence" else None
    changes = [*changes_of(edited, new, tzid), *more]
    return single(cal, resource, series, "VEVENT", count=count, occurrence=occurrence, changes=changes)


def delete_view(
    cal: CalendarInfo,
    resource: Resource,
    ical: icalendar.Calendar,
    series: icalendar.Component,
    occurrence: icalendar.Component | None,
    count: Any,
) -> StoredView:
    """A deletion: one occurrence, one event, or a whole series with its occurrences listed (:func:`series_view`)."""
    if occurrence is None and is_recurring(series):
        return series_view(cal, resource, ical, series, count)
    return single(cal, resource, series, "VEVENT", occurrence=occurrence)


def answer_view(
    cal: CalendarInfo,
    resource: Resource,
    series: icalendar.Component,
    mine: Iterable[tuple[icalendar.Component, Any]],
    partstat: str,
) -> StoredView:
    """An answer to an invitation: the event, and the caller's PARTSTAT (RFC 5545 §3.2.12) now -> after."""
    found = {str(attendee.params.get("PARTSTAT", "NEEDS-ACTION")) for _, attendee in mine}
    change = Change(label="Your answer", before=", ".join(sorted(found)) or None, after=partstat)
    return single(cal, resource, series, "VEVENT", changes=[change])


def changes_of(component: icalendar.Component, new: Mapping[str, Any], tzid: str | None) -> list[Change]:
    """Before -> after of each field an edit sets.

    ``new`` maps the tools' argument names (``summary``, ``description``, ``location``, ``status``,
    ``priority``, ``percent_complete``, ``start``, ``end``, ``due``, ``date``) to the caller's value ("" removes
    a text; None leaves the field as it is); ``tzid`` is the zone the caller gave for its times.
    """
    out: list[Change] = []
    for key, value in new.items():
        if value is None or key not in _FIELDS:
            continue
        prop, label = _FIELDS[key]
        if key not in _TIME_KEYS:
            after = str(value) or None
            out.append(Change(label=label, before=_text(component, prop), after=after, name=key == "summary"))
            continue
        found: Any = component.get(prop)
        before = None if found is None else _stored_time(found)[0]
        text = str(value)
        after = text if tzid is None or len(text) == 10 else f"{text} {tzid}"
        out.append(Change(label=label, before=before, after=after))
    return out


def series_view(
    cal: CalendarInfo, resource: Resource, ical: icalendar.Calendar, series: icalendar.Component, count: Any
) -> StoredView:
    """A whole series: its master, then its occurrences (each with its own title and start), up to the bound."""
    head = entry(cal, resource, series, "VEVENT", count=count)
    if not isinstance(count, int) or count <= 1:
        return StoredView(entries=(head,))
    try:
        found = series_occurrences(ical, "VEVENT")
    except Unreadable:
        return StoredView(entries=(head,))
    listed = found[: ENTRY_LIMIT - 1]
    rows = [entry(cal, resource, series, "VEVENT", count=count, occurrence=each) for each in listed]
    return StoredView(entries=(head, *rows), not_listed=count - len(listed))


def restore_view(cal: CalendarInfo, href: str, data: bytes, undoes: str) -> StoredView | None:
    """A restore: the entry as the undo journal kept it (before ``undoes`` changed it), for the page only.

    The kept version names no ETag (it is not on the server now; the approval binds the version the restore
    writes over). None when the kept bytes are not an iCalendar entry this server reads.
    """
    kept = Resource(href=href, etag=None, data=data.decode("utf-8", errors="replace"))
    try:
        ical = calendar_of(kept)
        kind = next(k for k in ("VEVENT", "VTODO", "VJOURNAL") if ical.walk(k))
        component = master(ical, kind)
        shown = entry(cal, kept, component, kind, count="not counted")  # the rule is shown, not expanded
    except (CalDAVToolError, StopIteration, Unreadable, ValueError):
        return None
    return StoredView(entries=(shown.model_copy(update={"kind": f"{shown.kind}, as kept before {undoes}"}),))


def _addresses(component: icalendar.Component) -> str | None:
    raw: Any = component.get("ATTENDEE")
    found = raw if isinstance(raw, list) else [] if raw is None else [raw]
    return ", ".join(str(attendee) for attendee in found) or None


def attendees_change(component: icalendar.Component, given: Iterable[str]) -> Change:
    """The attendee list as stored -> the ``mailto:`` addresses a call writes (RFC 5545 §3.8.4.1)."""
    return Change(label="Attendees", before=_addresses(component), after=", ".join(given) or None, name=True)


def new_event_view(cal: CalendarInfo, event: icalendar.Component, count: Any) -> StoredView:
    """A new event with attendees, before it is stored: its title, times, rule, organiser and every attendee.

    Nothing of it is stored yet (no href, no ETag); every value is the caller's, shown with the fence all the
    same, since the page treats every entry alike.
    """
    fields = [StoredField(label="Title", value=_text(event, "SUMMARY"), name=True)]
    for prop, label in _TIMES["VEVENT"]:
        found = _time_field(event, prop, label)
        if found is not None:
            fields.append(found)
    fields.append(_repeats(event, count))
    organizer: Any = event.get("ORGANIZER")
    if organizer is not None:
        fields.append(StoredField(label="Organizer", value=str(organizer), name=True))
    fields.append(StoredField(label="Attendees", value=_addresses(event), name=True))
    made = StoredEntry(kind="New event (not stored yet)", collection=collection(cal), fields=tuple(fields))
    return StoredView(entries=(made,))
