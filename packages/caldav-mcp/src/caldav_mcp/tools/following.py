"""update_event with scope following: the series is split at one occurrence, and the later part changed.

The stored series ends before the occurrence (:mod:`caldav_mcp.splitting`). A new series, with a new UID
and RELATED-TO naming the old one (RFC 5545 §3.8.4.5), starts at that occurrence with the same properties
and alarms, the rule's remaining COUNT (or its UNTIL), the RDATEs and EXDATEs from there on, and the
overrides of occurrences from there on, moved to it; the changes apply to the new series. The new series
is created first (If-None-Match: *), then the old one ended (If-Match); if that write fails, the new
series is deleted again, so the calendar is never left with both halves covering the same occurrences.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from approval_core import Approved, stable
from approval_core.serving.stored_text import quoted_name
from caldav_mcp.alarms import AlarmIn, set_alarms
from caldav_mcp.client import CalendarInfo, Resource
from caldav_mcp.editing import apply_text, bump, new_calendar, now_utc, serialise, set_times
from caldav_mcp.errors import BackendError, CalDAVToolError, InvalidInput
from caldav_mcp.ical import master, occurrence_start, overrides, utc_bound, value_of
from caldav_mcp.range_edits import OWN_TIMES, copy_of
from caldav_mcp.rid_forms import in_series_form
from caldav_mcp.splitting import Split, end_before
from caldav_mcp.tools import undo
from caldav_mcp.tools.common import App

if TYPE_CHECKING:  # imported where a call needs it: listing the tools does not (startup time)
    import icalendar

__all__ = ["tail_of", "write_split"]


def _later(values: list[Any], split: Split) -> list[Any]:
    return [v for v in values if utc_bound(v[0] if isinstance(v, tuple) else v) >= utc_bound(split.original)]


def tail_of(ical: icalendar.Calendar, split: Split, changes: dict[str, Any], tzid: str | None) -> icalendar.Calendar:
    """The new series from the split on, with ``changes`` (summary, description, location, start, end, alarms).

    Raises:
        InvalidInput: new times for a part that has changed or removed occurrences tied to the old times.
    """
    import icalendar

    series = master(ical, "VEVENT")
    new_uid = stable("following-uid", lambda: f"{uuid.uuid4()}@caldav-mcp")
    head = copy_of(series, leave=OWN_TIMES | {"UID", "SEQUENCE", "DTSTAMP", "LAST-MODIFIED", "CREATED"})
    head.add("UID", new_uid)
    head.add("DTSTAMP", now_utc())
    start: Any = series["DTSTART"]
    head.add("DTSTART", split.original, parameters=dict(start.params))
    if "DTEND" in series:
        end: Any = series["DTEND"]
        head.add(
            "DTEND",
            split.original + (value_of(series, "DTEND") - value_of(series, "DTSTART")),
            parameters=dict(end.params),
        )
    elif "DURATION" in series:
        head.add("DURATION", value_of(series, "DURATION"))
    raw: Any = series.get("RRULE")
    for rule in raw if isinstance(raw, list) else [raw] if raw is not None else []:
        parts = dict(rule)
        if "COUNT" in parts and split.kept is not None:
            parts["COUNT"] = [int(parts["COUNT"][0]) - split.kept]
        head.add("RRULE", icalendar.vRecur(parts))
    for name in ("RDATE", "EXDATE"):
        groups: Any = series.get(name)
        for group in groups if isinstance(groups, list) else [groups] if groups is not None else []:
            later = _later([period.dt for period in group.dts], split)
            if later:
                head.add(name, later, parameters=dict(group.params))
    head.add("RELATED-TO", str(series["UID"]))
    moved = [
        c for c in overrides(ical, "VEVENT")
        if utc_bound(in_series_form(ical, "VEVENT", occurrence_start(c))) >= utc_bound(split.original)
    ]  # fmt: skip
    if ("start" in changes or "end" in changes) and (moved or "EXDATE" in head):
        raise InvalidInput(
            "start: the occurrences from this one on include changed or removed ones tied to their current times; "
            "change the times of the series part first, or those occurrences one by one"
        )
    apply_text(
        head,
        {
            "SUMMARY": changes.get("summary"),
            "DESCRIPTION": changes.get("description"),
            "LOCATION": changes.get("location"),
        },
    )
    if "alarms" in changes:
        set_alarms(head, [AlarmIn(**alarm) for alarm in changes["alarms"]])
    if "start" in changes or "end" in changes:
        set_times(head, start=changes.get("start"), end=changes.get("end"), tzid=tzid)
    tail = new_calendar()
    for zone in ical.walk("VTIMEZONE"):
        tail.add_component(zone)
    tail.add_component(head)
    for component in moved:
        copied = copy_of(component, leave=frozenset({"BEGIN", "END", "UID"}))
        copied.add("UID", new_uid)
        tail.add_component(copied)
    return tail


async def write_split(
    app: App,
    decision: Approved,
    cal: CalendarInfo,
    uid: str,
    resource: Resource,
    ical: icalendar.Calendar,
    split: Split,
    tail: Any,
) -> tuple[Resource, str | None]:
    """Create the new series, then end the old one before the split; undo the create if the second write fails.

    The old series as read is kept in the undo journal for the approval ``decision`` (``update_event``), with
    the new series' href and UID: restore_entry refuses to put the old series back while the new one is
    there, since the occurrences from the split on would then show twice.

    Returns:
        The new series as stored, and a note when the old one's write answer was lost and read back.

    Raises:
        BackendError: a write failed (the message says which, and that the new series was removed again).
    """
    new_uid = str(master(tail, "VEVENT")["UID"])
    created = await app.client.create(cal, new_uid, serialise(tail))
    end_before(ical, split.original)
    bump(master(ical, "VEVENT"))
    try:
        _, note = await undo.write_back(
            app, decision, "update_event", cal, uid, resource, ical, made=(created.href, new_uid)
        )
    except CalDAVToolError as failure:  # a 412 included: the old series changed meanwhile
        try:
            await app.client.delete(created)
        except CalDAVToolError:
            raise BackendError(
                f"{failure} The new series {quoted_name(new_uid)} had been created and could not be removed again: "
                "delete it, or the occurrences from the split on show twice."
            ) from None
        raise BackendError(f"{failure} The new series that had been created first was removed again.") from None
    return created, note
