"""From parsed iCalendar components to this server's output models and compact text."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from mcp_types import CallToolResult, TextContent

from approval_core.serving.stored_text import name_in_text, stored_in_text
from caldav_mcp.alarms import alarms_of
from caldav_mcp.ical import (
    Times,
    Unreadable,
    count_occurrences,
    is_recurring,
    master,
    occurrence_start,
    overrides,
    rid_text,
    stored_rule_problem,
    times_of,
    utc_bound,
)
from caldav_mcp.models import Attendee, EventDetail, EventList, Occurrence
from caldav_mcp.models import Unreadable as UnreadableOut

if TYPE_CHECKING:  # icalendar is imported where a call needs it: listing the tools does not (startup time)
    import icalendar

__all__ = [
    "event_detail",
    "event_list_result",
    "instant_text",
    "occurrence",
    "occurrences_at",
    "sort_key",
    "status_of",
    "text_of",
    "unreadable_entry",
]


def unreadable_entry(href: str, data: str | None, reason: str) -> UnreadableOut:
    """An entry left out of an answer: its UID where one can be read (else its path), and why."""
    uid = None
    for line in (data or "").splitlines():
        if line.upper().startswith("UID:"):
            uid = line[4:].strip()
            break
    return UnreadableOut(id=uid or href, href=href, reason=reason)


def text_of(component: icalendar.Component, name: str) -> str | None:
    """A text property's value, or None."""
    value = component.get(name)
    if value is None:
        return None
    if isinstance(value, list):
        value = value[0]  # pyright: ignore[reportUnknownVariableType]
    return str(value)  # pyright: ignore[reportUnknownArgumentType]


def _categories(component: icalendar.Component) -> list[str]:
    raw = component.get("CATEGORIES")
    if raw is None:
        return []
    items = raw if isinstance(raw, list) else [raw]
    out: list[str] = []
    for item in items:  # pyright: ignore[reportUnknownVariableType]
        out.extend(str(c) for c in getattr(item, "cats", [item]))  # pyright: ignore[reportUnknownArgumentType]
    return out


def occurrence(component: icalendar.Component, *, recurring: bool) -> Occurrence:
    """One expanded occurrence (or single event) as an :class:`Occurrence`."""
    uid = str(component.get("UID"))
    rid = rid_text(occurrence_start(component)) if recurring else None
    times = times_of(component)
    return Occurrence(
        id=f"{uid}#{rid}" if rid else uid,
        uid=uid,
        recurrence_id=rid,
        summary=text_of(component, "SUMMARY"),
        start=times.start,
        end=times.end,
        all_day=times.all_day,
        tzid=times.tzid,
        floating=times.floating,
        recurring=recurring,
        status=status_of(component),
    )


def status_of(component: icalendar.Component) -> str | None:
    """The component's STATUS, upper-cased (RFC 5545 §3.8.1.11: the values are case-insensitive), or None."""
    value = text_of(component, "STATUS")
    if value is None:
        return None
    return value.strip().upper() or None


def occurrences_at(
    component: icalendar.Component, spans: list[tuple[dt.date | dt.datetime, dt.date | dt.datetime]]
) -> list[Occurrence]:
    """The occurrences of a series at the given (start, end) times (:mod:`caldav_mcp.plain_series`).

    Each is the value :func:`occurrence` gives for the recurrence library's
    copy of ``component`` at those times: its RECURRENCE-ID is its start, and
    its TZID the one icalendar writes for the start's zone (the same for
    every occurrence of the series, so it is worked out once).
    """
    import icalendar

    uid = str(component.get("UID"))
    summary = text_of(component, "SUMMARY")
    status = status_of(component)
    tzid: str | None = None
    if spans and isinstance(spans[0][0], dt.datetime) and spans[0][0].tzinfo is not None:
        written: Any = icalendar.vDDDTypes(spans[0][0]).params.get("TZID")
        tzid = str(written) if written else "UTC"
    made: list[Occurrence] = []
    for start, end in spans:
        rid = rid_text(start)
        timed = isinstance(start, dt.datetime)
        made.append(
            Occurrence(
                id=f"{uid}#{rid}",
                uid=uid,
                recurrence_id=rid,
                summary=summary,
                start=start.isoformat(),
                end=end.isoformat(),
                all_day=not timed,
                tzid=tzid,
                floating=timed and start.tzinfo is None,  # pyright: ignore[reportAttributeAccessIssue]
                recurring=True,
                status=status,
            )
        )
    return made


def instant_text(text: str) -> str:
    """An ISO 8601 date or date-time as the instant it names, written in UTC, so that such texts sort by time.

    A date is read as its midnight and a floating time as UTC; the result is
    ``datetime.isoformat()`` of the instant in UTC (``2027-06-01T00:00:00+00:00``
    for ``2027-06-01T09:00:00+09:00``), so texts from different offsets compare
    as the instants they name. Text that is not such a value (or lies beyond the
    years 1-9999 in UTC) is returned unchanged.
    """
    try:
        value = dt.date.fromisoformat(text) if len(text) == 10 else dt.datetime.fromisoformat(text)
        return utc_bound(value).astimezone(dt.UTC).isoformat()
    except (ValueError, OverflowError):
        return text


def sort_key(item: Occurrence) -> list[str]:
    """Start order as an instant (:func:`instant_text`: all-day and floating read as UTC), then id."""
    return [instant_text(item.start or ""), item.id]


def _when(times: Times | Occurrence) -> str:
    """An occurrence's time for a line of text: ISO 8601 as this server writes it, and the TZID.

    Start and end on the same date at the same UTC offset are written once (``2026-12-01 09:00-10:00 +01:00``);
    any other pair whole, so that an end at another offset (the night a zone leaves summer time, or a DTEND in
    another zone) is never read at the start's. The TZID is a name the entry's writer chose: shown by
    :func:`name_in_text`.
    """
    start, end = times.start or "?", times.end
    if times.all_day:
        return f"{start} all-day" + (f" to {end}" if end else "")
    zone = "floating" if times.floating else (name_in_text(times.tzid) if times.tzid else "")
    offset = start[19:].removeprefix(".000000")
    if (
        end
        and start[:10] == end[:10]
        and len(start) > 16
        and len(end) > 16
        and end[19:].removeprefix(".000000") == offset
    ):
        # Same day: 2026-12-01 09:00-10:00 +01:00 Europe/Berlin
        return f"{start[:10]} {start[11:16]}-{end[11:16]} {offset} {zone}".replace("  ", " ").strip()
    return f"{start} to {end} {zone}".strip()


def event_list_result(result: EventList) -> CallToolResult:
    """``list_events``/``search_events`` output: structured content plus one compact line per occurrence.

    Each line is ``<when> <summary as a JSON string> <id>``, with ``cancelled``
    after the time for an occurrence whose STATUS is CANCELLED; summaries are
    calendar data, quoted so that they cannot pass for anything else. Ids and
    TZIDs are names an entry's writer chose: shown by :func:`name_in_text`
    (as they are when of a plain identifier's shape, else quoted and fenced).
    """
    lines = [
        f"{len(result.events)} occurrence(s) in {result.calendar} from {result.start} to {result.end}; "
        "quoted summaries are calendar data."
    ]
    lines.extend(
        f"{_when(item)}{' cancelled' if item.status == 'CANCELLED' else ''} "
        f"{stored_in_text(item.summary or '')} {name_in_text(item.id)}"
        for item in result.events
    )
    if result.reread is not None:
        lines.insert(1, f"Note: {result.reread}.")
    if result.truncated:
        lines.append(f"More follow: repeat the call with cursor={result.next_cursor}")
    lines.extend(
        f"Unreadable entry {name_in_text(item.id)} left out: {stored_in_text(item.reason)}"
        for item in result.unreadable
    )
    data = result.model_dump(mode="json")
    return CallToolResult(content=[TextContent(type="text", text="\n".join(lines))], structured_content=data)


def event_detail(
    calendar: str,
    ical: icalendar.Calendar,
    etag: str | None,
    rid: str | None = None,
    component: icalendar.Component | None = None,
) -> EventDetail:
    """The stored event (or one occurrence, given its component) as an :class:`EventDetail`."""
    series = master(ical, "VEVENT")
    item = component if component is not None else series
    recurring = is_recurring(series) or bool(overrides(ical, "VEVENT"))
    times = times_of(item)
    rrule = series.get("RRULE")
    uid = str(series.get("UID"))
    attendees: list[Attendee] = []
    raw: Any = item.get("ATTENDEE")
    for att in raw if isinstance(raw, list) else [raw] if raw is not None else []:  # pyright: ignore[reportUnknownVariableType]
        params: Any = getattr(att, "params", {})  # pyright: ignore[reportUnknownArgumentType]
        attendees.append(
            Attendee(
                address=str(att),  # pyright: ignore[reportUnknownArgumentType]
                name=params.get("CN"),
                partstat=params.get("PARTSTAT"),
                role=params.get("ROLE"),
            )
        )
    occurrences: int | None = None
    problem = stored_rule_problem(ical, "VEVENT")
    if recurring and component is None and problem is None:
        try:
            occurrences = count_occurrences(ical, "VEVENT")
        except Unreadable as exc:
            problem = exc.reason
    return EventDetail(
        calendar=calendar,
        id=f"{uid}#{rid}" if rid else uid,
        uid=uid,
        recurrence_id=rid,
        etag=etag,
        summary=text_of(item, "SUMMARY"),
        description=text_of(item, "DESCRIPTION"),
        location=text_of(item, "LOCATION"),
        status=text_of(item, "STATUS"),
        transparent=(text_of(item, "TRANSP") or "").upper() == "TRANSPARENT",
        categories=_categories(item),
        organizer=text_of(item, "ORGANIZER"),
        attendees=attendees,
        start=times.start,
        end=times.end,
        all_day=times.all_day,
        tzid=times.tzid,
        floating=times.floating,
        recurring=recurring,
        rrule=rrule.to_ical().decode() if rrule is not None and hasattr(rrule, "to_ical") else None,
        occurrences=occurrences,
        changed_occurrences=len(overrides(ical, "VEVENT")),
        alarms=alarms_of(item),
        unreadable=problem,
    )


def categories(component: icalendar.Component) -> list[str]:
    """CATEGORIES values, flattened."""
    return _categories(component)


def flatten(values: Iterable[Any]) -> list[str]:
    """Property values (single or list) as strings."""
    return [str(v) for v in values]
