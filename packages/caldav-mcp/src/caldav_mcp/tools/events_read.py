"""Reading events: list_events, get_event, search_events."""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult
from pydantic import Field

from approval_core import structured
from approval_core.serving.stored_text import name_in_text, quoted_name, unmarked
from caldav_mcp.errors import BackendError, InvalidInput, NotFound
from caldav_mcp.expansion_cache import ExpansionCache
from caldav_mcp.ical import (
    Unreadable,
    calendar_of,
    is_recurring,
    master,
    occurrence_start,
    occurrences,
    overrides,
)
from caldav_mcp.models import EventDetail, EventList, Occurrence
from caldav_mcp.models import Unreadable as UnreadableOut
from caldav_mcp.narrowing import matches
from caldav_mcp.plain_series import plain_series
from caldav_mcp.recurrence_ids import offset_of
from caldav_mcp.rid_forms import key_of, key_of_text
from caldav_mcp.tools.common import (
    READ,
    App,
    cursor_read,
    cursor_version,
    decode_cursor,
    split_id,
    window,
)
from caldav_mcp.tools.window_reads import kept_entries, window_entries
from caldav_mcp.tools.windows import MAX_COLLECTED, listing_of, page
from caldav_mcp.views import event_detail, event_list_result, occurrence, occurrences_at, sort_key, unreadable_entry

if TYPE_CHECKING:  # icalendar is imported where a call needs it: listing the tools does not (startup time)
    import icalendar

__all__ = ["expand", "find_occurrence", "occurrence_of", "register", "warm_up"]

_SEARCHED = ("SUMMARY", "DESCRIPTION", "LOCATION", "ATTENDEE", "CATEGORIES")

CalendarArg = Annotated[
    str, Field(description="Calendar id (its path) from list_calendars.", min_length=1, max_length=1024)
]
StartArg = Annotated[str, Field(description="Window start: ISO 8601 date or date-time with offset (e.g. 2026-12-01).")]
EndArg = Annotated[str, Field(description="Window end (exclusive), at most 366 days after start.")]
LimitArg = Annotated[int, Field(description="Most occurrences to return.", ge=1, le=1000)]
CancelledArg = Annotated[
    bool,
    Field(
        description="False leaves out occurrences whose STATUS is CANCELLED (a cancelled series, or one cancelled "
        "occurrence of it). Default true: they are listed, with status CANCELLED."
    ),
]


def _shown(item: Occurrence) -> bool:
    """Whether an occurrence is kept when cancelled ones are left out."""
    return item.status != "CANCELLED"


def expand(
    resources: list[Any],
    lo: dt.datetime,
    hi: dt.datetime,
    keep: Callable[[icalendar.Component], bool] | None = None,
    unreadable: list[UnreadableOut] | None = None,
    cache: ExpansionCache | None = None,
    ordered: bool = True,
) -> list[Occurrence]:
    """Every occurrence of the VEVENTs in ``resources`` overlapping ``[lo, hi)``, in start order (``ordered``).

    ``keep``, when given, decides per occurrence (overrides applied). An entry
    that cannot be parsed or expanded within the bounds of
    :func:`caldav_mcp.ical.occurrences` is left out and added to
    ``unreadable`` (with its id and why), so one bad entry never costs the answer.
    ``cache`` (used only without ``keep``) answers for entries whose text was
    expanded in the same window before, and keeps what is expanded now.

    Raises:
        InvalidInput: more than MAX_COLLECTED occurrences in the window.
        Unreadable: an entry is unreadable and no ``unreadable`` list was given.
    """
    found: list[Occurrence] = []
    if keep is not None:
        cache = None
    for resource in resources:
        key = ExpansionCache.key(resource.data, lo, hi) if cache is not None and not resource.problem else None
        kept = cache.get(key) if cache is not None and key is not None else None
        if kept is not None:
            found.extend(kept)
            if len(found) > MAX_COLLECTED:
                raise InvalidInput(f"end: more than {MAX_COLLECTED} occurrences in this window; narrow it")
            continue
        try:
            made = _expanded(calendar_of(resource, times_only=True, listed=keep is None), lo, hi, keep)
        except (Unreadable, BackendError) as exc:
            if unreadable is None:
                raise
            reason = exc.reason if isinstance(exc, Unreadable) else unmarked(str(exc))
            unreadable.append(unreadable_entry(resource.href, resource.data, reason))
            continue
        if cache is not None and key is not None:
            cache.put(key, tuple(made))
        found.extend(made)
        if len(found) > MAX_COLLECTED:
            raise InvalidInput(f"end: more than {MAX_COLLECTED} occurrences in this window; narrow it")
    if ordered:
        found.sort(key=sort_key)
    return found


_WARM_UP = (
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//caldav-mcp//warm-up//EN\r\n"
    "BEGIN:VTIMEZONE\r\nTZID:Europe/Berlin\r\nBEGIN:STANDARD\r\nDTSTART:19701025T030000\r\n"
    "TZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\nRRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r\nEND:STANDARD\r\n"
    "END:VTIMEZONE\r\nBEGIN:VEVENT\r\nUID:warm-up-series\r\nDTSTAMP:20260101T000000Z\r\n"
    "DTSTART;TZID=Europe/Berlin:20260105T090000\r\nDTEND;TZID=Europe/Berlin:20260105T100000\r\n"
    "RRULE:FREQ=WEEKLY;BYDAY=MO;UNTIL=20261231T235959Z\r\nEXDATE;TZID=Europe/Berlin:20260112T090000\r\n"
    "SUMMARY:warm-up\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT5M\r\nDESCRIPTION:warm-up\r\n"
    "END:VALARM\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//caldav-mcp//warm-up//EN\r\n"
    "BEGIN:VEVENT\r\nUID:warm-up-event\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:20260106T090000Z\r\n"
    "DURATION:PT1H\r\nSTATUS:CONFIRMED\r\nSUMMARY:warm-up\r\nEND:VEVENT\r\n"
    "BEGIN:VEVENT\r\nUID:warm-up-day\r\nDTSTAMP:20260101T000000Z\r\nDTSTART;VALUE=DATE:20260107\r\n"
    "SUMMARY:warm-up\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
)


def warm_up() -> int:
    """Expand made-up entries (a zoned weekly series with its VTIMEZONE, timed and all-day events) once, alone.

    What a process does only the first time it reads entries (the list of
    IANA zone names read from the system, the modules the libraries import on
    first use, regular expressions and caches in them: about 40 ms) is then
    done before the first listing. Started with the readers' import at the first tool call
    (``caldav_mcp.server._import_readers``). Returns the occurrences found (0 when it failed); never raises.
    """
    from caldav_mcp.dav import Resource

    lo, hi = dt.datetime(2026, 1, 1, tzinfo=dt.UTC), dt.datetime(2026, 2, 1, tzinfo=dt.UTC)
    entries = [Resource(href=f"/warm-up/{n}.ics", etag=None, data=text) for n, text in enumerate(_WARM_UP)]
    try:
        found = expand(entries, lo, hi, unreadable=[])
    except Exception:  # a failure shows at the first listing, which reports it
        return 0
    for item in found:
        sort_key(item)
    return len(found)


def _expanded(
    ical: icalendar.Calendar, lo: dt.datetime, hi: dt.datetime, keep: Callable[[icalendar.Component], bool] | None
) -> list[Occurrence]:
    """One parsed entry's occurrences in ``[lo, hi)`` that ``keep`` takes (all without it).

    A plain series listed whole is expanded by :func:`caldav_mcp.plain_series.plain_series`
    (the same occurrences, without a copy of the component for each); anything
    else by :func:`caldav_mcp.ical.occurrences`.

    Raises:
        Unreadable: the entry passes a bound of the expansion.
        BackendError: the entry holds no VEVENT.
    """
    plain = plain_series(ical, "VEVENT", lo, hi) if keep is None else None
    if plain is not None:
        return occurrences_at(plain.component, plain.spans)
    recurring = is_recurring(master(ical, "VEVENT")) or bool(overrides(ical, "VEVENT"))
    return [
        occurrence(component, recurring=recurring)
        for component in occurrences(ical, "VEVENT", lo, hi)
        if keep is None or keep(component)
    ]


def find_occurrence(ical: icalendar.Calendar, rid: str) -> icalendar.Component | None:
    """The one occurrence whose own RECURRENCE-ID is ``rid`` (compact form), overrides applied; None if none.

    The occurrence is looked for within two days of its original start
    (time zones), moved by as much as its override, or the
    ``RANGE=THISANDFUTURE`` override that governs it, moved it
    (:func:`caldav_mcp.recurrence_ids.offset_of`, RFC 5545 §3.8.4.4). ``rid`` and
    each occurrence's RECURRENCE-ID are compared in the series' DTSTART form
    (:func:`caldav_mcp.rid_forms.key_of`), so a stored override's own form and the
    original start in DTSTART's form both find it.

    Raises:
        Unreadable: the series cannot be expanded within the bounds (see :func:`caldav_mcp.ical.occurrences`).
    """
    digits = rid.rstrip("Z")
    try:
        day = dt.date(int(digits[:4]), int(digits[4:6]), int(digits[6:8]))
        moved = offset_of(ical, "VEVENT", rid)
        lo = dt.datetime.combine(day - dt.timedelta(days=2), dt.time(), tzinfo=dt.UTC) + moved
        hi = dt.datetime.combine(day + dt.timedelta(days=3), dt.time(), tzinfo=dt.UTC) + moved
    except (OverflowError, ValueError):
        return None
    key = key_of_text(ical, "VEVENT", rid)
    for component in occurrences(ical, "VEVENT", lo, hi):
        if key_of(ical, "VEVENT", occurrence_start(component)) == key:
            return component
    return None


def occurrence_of(ical: icalendar.Calendar, rid: str, uid: str) -> icalendar.Component:
    """:func:`find_occurrence` for a tool: a missing or unreadable occurrence is the caller's error.

    Raises:
        NotFound: the series has no such occurrence.
        BackendError: the stored series cannot be expanded (names the UID and why).
    """
    try:
        component = find_occurrence(ical, rid)
    except Unreadable as exc:
        raise BackendError(f"id: the stored event {quoted_name(uid)} cannot be read: {exc.reason}") from None
    if component is None:
        raise NotFound(f"id: the event has no occurrence {name_in_text(rid)}")
    return component


def register(server: MCPServer[Any], app: App) -> None:
    """Add the event-reading tools to ``server``."""

    @server.tool(annotations=READ)
    async def list_events(
        calendar: CalendarArg,
        start: StartArg,
        end: EndArg,
        limit: LimitArg = 200,
        cursor: str | None = None,
        include_cancelled: CancelledArg = True,
    ) -> Annotated[CallToolResult, EventList]:
        """Events in a window, recurring series expanded into their occurrences (overrides and EXDATEs applied).

        Each occurrence has its own id (UID#RECURRENCE-ID for a series) and its STATUS; a cancelled one says
        so in the text. Times are ISO 8601 with offset plus the original TZID; all-day events are dates with
        an exclusive end; floating times have no offset.
        """
        cal = await app.client.calendar(calendar)
        lo, hi = window(start, end)
        query: list[Any] = ["list", cal.path, start, end]
        if not include_cancelled:
            query.append("without-cancelled")
        after = decode_cursor(cursor, query)
        found = await listing_of(
            app,
            cal,
            lo,
            hi,
            lambda resources, unreadable: expand(
                resources, lo, hi, unreadable=unreadable, cache=app.expansions, ordered=False
            ),
            continuing=cursor is not None,
            cursor_version=cursor_version(cursor) if cursor is not None else None,
            cursor_read=cursor_read(cursor) if cursor is not None else None,
        )
        listing = found.listing
        if found.restarted:
            after = None
        items, next_cursor = page(listing, limit, after, query, None if include_cancelled else _shown, found.settled)
        return event_list_result(
            EventList(
                calendar=cal.path,
                start=lo.isoformat(),
                end=hi.isoformat(),
                events=items,
                truncated=next_cursor is not None,
                next_cursor=next_cursor,
                unreadable=list(listing.unreadable),
                reread=found.reread,
            )
        )

    @server.tool(annotations=READ)
    async def get_event(
        calendar: CalendarArg,
        id: Annotated[str, Field(description="Event id from list_events: a UID, or UID#RECURRENCE-ID.")],
    ) -> Annotated[CallToolResult, EventDetail]:
        """One event with everything stored about it; for an occurrence id, that occurrence."""
        cal = await app.client.calendar(calendar)
        uid, rid = split_id(id)
        resource = await app.client.find(cal, "VEVENT", uid, field="id")
        ical = calendar_of(resource)
        if rid is None:
            return structured(event_detail(cal.path, ical, resource.etag))
        component = occurrence_of(ical, rid, uid)
        return structured(event_detail(cal.path, ical, resource.etag, rid, component))

    @server.tool(annotations=READ)
    async def search_events(
        query: Annotated[
            str, Field(description="Text to find (case-insensitive substring).", min_length=1, max_length=200)
        ],
        start: StartArg,
        end: EndArg,
        calendars: Annotated[list[str] | None, Field(description="Calendar ids; default: every calendar.")] = None,
        limit: LimitArg = 100,
        include_cancelled: CancelledArg = True,
    ) -> Annotated[CallToolResult, EventList]:
        """Occurrences in a window with the text in summary, description, location, categories, attendees or organizer.

        Attendees and the organizer match by address or by display name (CN, RFC 6868 ^-escapes decoded, so
        a name with a double quote is found as written). The server narrows the search where it supports
        text-match (its first answer checked against a full read), unless a listing of a window holding this
        one is kept and the calendar is unchanged; every event is matched again here.
        """
        lo, hi = window(start, end)
        chosen = (
            list({(cal := await app.client.calendar(c, field="calendars")).path: cal for c in calendars}.values())
            if calendars
            else [c for c in await app.client.calendars() if "VEVENT" in c.components]
        )
        needle = query.casefold()
        found: list[Occurrence] = []
        unreadable: list[UnreadableOut] = []
        for cal in chosen:
            resources = await kept_entries(app, cal, lo, hi)
            if resources is None:
                whole = functools.partial(window_entries, app, cal, lo, hi)
                resources = await app.narrowing.candidates(app.client, cal, query, lo, hi, whole)
            found.extend(
                expand(resources, lo, hi, keep=lambda component: matches(component, needle), unreadable=unreadable)
            )
        if not include_cancelled:
            found = [item for item in found if _shown(item)]
        found.sort(key=sort_key)
        label = ", ".join(c.path for c in chosen)
        return event_list_result(
            EventList(
                calendar=label,
                start=lo.isoformat(),
                end=hi.isoformat(),
                events=found[:limit],
                truncated=len(found) > limit,
                next_cursor=None,
                unreadable=unreadable,
            )
        )
