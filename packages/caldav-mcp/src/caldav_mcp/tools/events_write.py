# (icalendar types a property lookup as the union of every value type, so ``.dt`` reads as unknown.)
"""Changing events: create_event, update_event, delete_event, move_event, respond_to_event.

The guarded ones read the entry first, validate everything they can, build
the dialog from their own counts and the caller's values, ask, and then write
with ``If-Match`` on the ETag they read.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

import anyio
import icalendar
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, InputRequiredResult
from pydantic import Field

from approval_core import NotApproved, annotations, structured
from caldav_mcp import dialogs
from caldav_mcp.client import CalendarInfo, Component, Resource
from caldav_mcp.editing import apply_text, bump, new_entry, serialise, set_times, validate_rrule
from caldav_mcp.errors import BackendError, Conflict, InvalidInput, NotFound
from caldav_mcp.ical import (
    Unreadable,
    calendar_of,
    count_occurrences,
    is_recurring,
    master,
    occurrence_start,
    overrides,
    rid_text,
    value_of,
)
from caldav_mcp.models import Deleted, Moved, Responded, Written
from caldav_mcp.rrule import first_occurrence_problem, until_problem
from caldav_mcp.tools.common import ADD, CHANGE, DELETE, MOVE, App, split_id
from caldav_mcp.tools.creating import NewUidArg, create_entry
from caldav_mcp.tools.events_read import CalendarArg, occurrence_of
from caldav_mcp.tools.outcome import fingerprint, loss_of, unsettled

__all__ = ["register", "remove", "write_back"]

Scope = Literal["occurrence", "series"]
IdArg = Annotated[str, Field(description="Event id from list_events: a UID, or UID#RECURRENCE-ID.", min_length=1)]
ScopeArg = Annotated[
    Scope | None,
    Field(
        description="For a recurring event: 'occurrence' (the one in the id) or 'series' (all of them). Required then."
    ),
]
TokenArg = Annotated[
    str | None, Field(description="Only where a dialog cannot be shown: the token from the first call.")
]
TextArg = Annotated[
    str | None, Field(description="New value; an empty string removes it; omit to keep.", max_length=20_000)
]
TimeArg = Annotated[
    str | None, Field(description="ISO 8601: a date (all-day) or a date-time with offset or with tzid.")
]
TzidArg = Annotated[str | None, Field(description="IANA zone for date-times given without offset, e.g. Europe/Berlin.")]
RESPOND = annotations(read_only=False, destructive=False, idempotent=True, open_world=True)


ALL_DAY = (
    "Whether the event is all-day (VALUE=DATE, RFC 5545 §3.6.1). Omitted: decided by start (a date is all-day, a "
    "date-time is timed). true: start and end must be dates (YYYY-MM-DD) or date-times at exactly midnight "
    "(2026-12-01T00:00:00, any offset), read as the date written; end is exclusive (the day after the last day). "
    "false: start must be a date-time."
)


def _all_day_intent(all_day: bool, start: str, end: str | None) -> tuple[str, str | None]:
    """``start``/``end`` as dates for an all-day event (midnight date-times → their date), or refuse.

    Raises:
        InvalidInput: all_day=true with a time other than midnight, or all_day=false with a date.
    """
    if not all_day:
        if len(start) == 10:
            raise InvalidInput(
                f"start: all_day is false but {start!r} is a date; give a date-time (2026-12-01T09:00:00 with tzid, "
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
                f"such as {text[:10] if len(text) >= 10 else '2026-12-01'}T00:00:00; got {text!r}"
            )
        return value.date().isoformat()

    return as_date(start, "start"), as_date(end, "end") if end is not None else None


def _scope_of(recurring: bool, scope: Scope | None, rid: str | None) -> Literal["entry", "occurrence", "series"]:
    if not recurring:
        if scope == "occurrence" or rid is not None:
            raise InvalidInput("scope: this event does not repeat; give its UID without scope='occurrence'")
        return "entry"
    if scope is None:
        raise InvalidInput("scope: this event repeats; say 'occurrence' (with an occurrence id) or 'series'")
    if scope == "occurrence" and rid is None:
        raise InvalidInput("id: scope='occurrence' needs an occurrence id (UID#RECURRENCE-ID) from list_events")
    return scope


def _override(ical: icalendar.Calendar, series: icalendar.Component, rid: str) -> icalendar.Component:
    """The override component for ``rid``, created from the series if there is none yet."""
    for component in overrides(ical, "VEVENT"):
        if rid_text(occurrence_start(component)) == rid:
            return component
    generated = occurrence_of(ical, rid, str(series.get("UID")))
    component = icalendar.Event()
    for name, value in series.property_items(recursive=False):
        if name not in {"BEGIN", "END", "RRULE", "RDATE", "EXDATE", "DTSTART", "DTEND", "DURATION", "RECURRENCE-ID"}:
            component.add(name, value)
    component.add("DTSTART", value_of(generated, "DTSTART"))
    if "DTEND" in generated:
        component.add("DTEND", value_of(generated, "DTEND"))
    component.add("RECURRENCE-ID", occurrence_start(generated))
    for sub in series.subcomponents:
        component.add_component(sub)
    ical.add_component(component)
    return component


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


def count_of(ical: icalendar.Calendar) -> dialogs.Count:
    """A series' occurrences for a dialog: a number, None (never ends) or ``"uncountable"``."""
    try:
        return count_occurrences(ical, "VEVENT")
    except Unreadable:
        return "uncountable"


def register(server: MCPServer[Any], app: App) -> None:
    """Add the event-changing tools to ``server``."""

    @server.tool(annotations=ADD)
    async def create_event(
        calendar: CalendarArg,
        summary: Annotated[str, Field(min_length=1, max_length=1000)],
        start: Annotated[str, Field(description="ISO 8601 date (all-day) or date-time (with offset, or with tzid).")],
        end: TimeArg = None,
        tzid: TzidArg = None,
        description: TextArg = None,
        location: TextArg = None,
        rrule: Annotated[str | None, Field(description="Recurrence rule, e.g. FREQ=WEEKLY;BYDAY=MO;COUNT=10.")] = None,
        transparent: Annotated[bool, Field(description="True: does not block time (TRANSP:TRANSPARENT).")] = False,
        uid: NewUidArg = None,
        all_day: Annotated[bool | None, Field(description=ALL_DAY)] = None,
    ) -> Annotated[CallToolResult, Written]:
        """Create an event (written with If-None-Match: *). Without end: one day for a date, one hour otherwise.

        All-day: give start (and end) as dates, end exclusive (one day on 1 December: start 2026-12-01, end
        2026-12-02 or no end). A date-time, even at midnight, makes a timed event unless all_day is true.

        The rrule is checked against RFC 5545 §3.3.10 (FREQ required, INTERVAL and COUNT at least 1, never
        COUNT with UNTIL, the BYxxx ranges, UNTIL of the start's value type and in UTC for a zoned start), and
        must have an occurrence within 100 years of the start (BYMONTH=2;BYMONTHDAY=31 never occurs).
        Give a uid to make the call safe to repeat: a repeat answers that the event already exists.
        """
        cal = await app.client.calendar(calendar)
        if "VEVENT" not in cal.components:
            raise InvalidInput(f"calendar: {cal.path} does not accept events")
        if all_day is not None:
            start, end = _all_day_intent(all_day, start, end)
        event = new_entry(icalendar.Event(), uid)
        set_times(event, start=start, end=end, tzid=tzid)
        if end is None:
            begin: Any = value_of(event, "DTSTART")
            event.add(
                "DTEND", begin + (dt.timedelta(hours=1) if isinstance(begin, dt.datetime) else dt.timedelta(days=1))
            )
        apply_text(event, {"SUMMARY": summary, "DESCRIPTION": description, "LOCATION": location})
        if rrule is not None:
            begin = value_of(event, "DTSTART")
            event.add("RRULE", validate_rrule(rrule, begin))
            never = await anyio.to_thread.run_sync(first_occurrence_problem, rrule, begin)
            if never is not None:
                raise InvalidInput(f"rrule: {never}")
        if transparent:
            event.add("TRANSP", "TRANSPARENT")
        return await create_entry(app, cal, event, given=uid is not None)

    @server.tool(annotations=CHANGE)
    async def update_event(
        calendar: CalendarArg,
        id: IdArg,
        ctx: Context,
        scope: ScopeArg = None,
        summary: TextArg = None,
        description: TextArg = None,
        location: TextArg = None,
        start: TimeArg = None,
        end: TimeArg = None,
        tzid: TzidArg = None,
        confirm_token: TokenArg = None,
    ) -> Annotated[CallToolResult, Written] | InputRequiredResult:
        """Change an event, one occurrence of a series, or a whole series (If-Match on the ETag read).

        Only changing a whole recurring series asks a person first. Fields not given are kept, as is every
        property this tool does not know (X- properties, alarms, attendees).
        """
        cal = await app.client.calendar(calendar)
        uid, rid = split_id(id)
        changes = {
            key: value
            for key, value in (
                ("summary", summary),
                ("description", description),
                ("location", location),
                ("start", start),
                ("end", end),
            )
            if value is not None
        }
        if not changes:
            raise InvalidInput("give at least one of summary, description, location, start, end")
        resource = await app.client.find(cal, "VEVENT", uid, field="id")
        ical = calendar_of(resource)
        series = master(ical, "VEVENT")
        recurring = is_recurring(series) or bool(overrides(ical, "VEVENT"))
        effective = _scope_of(recurring, scope, rid)
        moves_series = effective == "series" and ("start" in changes or "end" in changes)
        if moves_series and (overrides(ical, "VEVENT") or "EXDATE" in series):
            raise InvalidInput(
                "start: this series has changed or removed occurrences that are tied to its current times; "
                "change those occurrences one by one instead"
            )
        target_component = _override(ical, series, rid) if effective == "occurrence" and rid else series
        fields = sorted(changes)
        asks = effective == "series" and recurring
        count = count_of(ical) if asks else 1
        if asks:
            await app.client.require_write(cal.path)  # no dialog for what the account may not do
        decision = await app.gate.check(
            ctx,
            tool="update_event",
            target={
                "calendar": cal.path,
                "uid": uid,
                "recurrence_id": rid if effective == "occurrence" else None,
                "scope": effective,
                "changes": changes,
                "tzid": tzid,
                "occurrences": count,
                "fields": len(fields),
            },
            dialog=dialogs.update_series(cal.path, fields=fields, occurrences=count),
            arguments={"scope": effective},
            facts={"recurring": recurring},
            version=version_of(resource) if asks else resource.etag,
            confirm_token=confirm_token,
        )
        if isinstance(decision, NotApproved):
            return decision.result
        apply_text(target_component, {"SUMMARY": summary, "DESCRIPTION": description, "LOCATION": location})
        if start is not None or end is not None:
            set_times(target_component, start=start, end=end, tzid=tzid)
            if target_component is series:
                _check_until(series)
        bump(target_component)
        written, note = await write_back(app, cal, uid, resource, ical)
        out_id = f"{uid}#{rid}" if effective == "occurrence" else uid
        return structured(
            Written(calendar=cal.path, uid=uid, id=out_id, etag=written.etag, action="updated", note=note)
        )

    @server.tool(annotations=DELETE)
    async def delete_event(
        calendar: CalendarArg, id: IdArg, ctx: Context, scope: ScopeArg = None, confirm_token: TokenArg = None
    ) -> Annotated[CallToolResult, Deleted] | InputRequiredResult:
        """Delete an event, one occurrence of a series (an EXDATE), or a whole series. Always asks first."""
        cal = await app.client.calendar(calendar)
        uid, rid = split_id(id)
        resource = await app.client.find(cal, "VEVENT", uid, field="id")
        ical = calendar_of(resource)
        series = master(ical, "VEVENT")
        effective = _scope_of(is_recurring(series) or bool(overrides(ical, "VEVENT")), scope, rid)
        occurrence = occurrence_of(ical, rid, uid) if effective == "occurrence" and rid else None
        count = count_of(ical) if effective == "series" else 1
        await app.client.require_write(cal.path)
        decision = await app.gate.check(
            ctx,
            tool="delete_event",
            target={
                "calendar": cal.path,
                "uid": uid,
                "scope": effective,
                "recurrence_id": rid if effective == "occurrence" else None,
                "occurrences": count,
            },
            dialog=dialogs.delete_event(cal.path, scope=effective, occurrences=count),
            version=version_of(resource),
            confirm_token=confirm_token,
        )
        if isinstance(decision, NotApproved):
            return decision.result
        if effective == "occurrence" and occurrence is not None:
            original = occurrence_start(occurrence)
            for component in overrides(ical, "VEVENT"):
                if rid_text(occurrence_start(component)) == rid:
                    ical.subcomponents.remove(component)
            series.add("EXDATE", original)
            bump(series)
            _, note = await write_back(app, cal, uid, resource, ical)
            gone = False
        else:
            gone, note = await remove(app, cal, uid, resource)
        return structured(
            Deleted(
                calendar=cal.path,
                uid=uid,
                scope=effective,
                recurrence_id=rid if effective == "occurrence" else None,
                already_gone=gone,
                note=note,
            )
        )

    @server.tool(annotations=MOVE)
    async def move_event(
        calendar: CalendarArg,
        id: IdArg,
        destination: Annotated[str, Field(description="Calendar id to move the event into.", min_length=1)],
        ctx: Context,
        confirm_token: TokenArg = None,
    ) -> Annotated[CallToolResult, Moved] | InputRequiredResult:
        """Move an event (a whole series with its occurrences) to another calendar (WebDAV MOVE). Always asks.

        The destination is checked first: it must exist, differ from the source, accept events, be writable
        and not hold an event with the same UID.
        """
        cal = await app.client.calendar(calendar)
        target = await app.client.calendar(destination, field="destination")
        if target.path == cal.path:
            raise InvalidInput("destination: it is the calendar the event is already in")
        if "VEVENT" not in target.components:
            raise Conflict(f"destination: {target.path} does not accept events")
        if await app.client.writable(target) is False:
            raise Conflict(f"destination: this account may not write into {target.path}")
        uid, _ = split_id(id)
        resource = await app.client.find(cal, "VEVENT", uid, field="id")
        try:
            await app.client.find(target, "VEVENT", uid)
        except NotFound:
            pass
        else:
            raise Conflict(f"destination: {target.path} already has an event with this UID")
        ical = calendar_of(resource)
        count = count_of(ical)
        await app.client.require_write(cal.path)
        decision = await app.gate.check(
            ctx,
            tool="move_event",
            target={"calendar": cal.path, "uid": uid, "destination": target.path, "occurrences": count},
            dialog=dialogs.move_event(cal.path, target.path, occurrences=count),
            version=version_of(resource),
            confirm_token=confirm_token,
        )
        if isinstance(decision, NotApproved):
            return decision.result
        note = await _move(app, cal, uid, resource, target)
        return structured(Moved(uid=uid, source=cal.path, destination=target.path, note=note))

    @server.tool(annotations=RESPOND)
    async def respond_to_event(
        calendar: CalendarArg,
        id: IdArg,
        partstat: Annotated[Literal["ACCEPTED", "DECLINED", "TENTATIVE"], Field(description="Your answer.")],
        ctx: Context,
        attendee: Annotated[
            str | None,
            Field(
                description="Your address among the attendees (mailto:...), needed only where the server "
                "does not publish this account's calendar-user-address-set."
            ),
        ] = None,
        confirm_token: TokenArg = None,
    ) -> Annotated[CallToolResult, Responded] | InputRequiredResult:
        """Answer an invitation: set your PARTSTAT (RFC 5545 §3.2.12) on every instance. Always asks.

        On a server with RFC 6638 scheduling the server then emails an iTIP REPLY to the organiser.
        """
        cal = await app.client.calendar(calendar)
        uid, _ = split_id(id)
        resource = await app.client.find(cal, "VEVENT", uid, field="id")
        ical = calendar_of(resource)
        published = set(await app.client.user_addresses())
        addresses = set(published)
        if app.client.settings.username:
            addresses.add(f"mailto:{app.client.settings.username}".lower())
        if attendee is not None:
            chosen = attendee.lower() if attendee.lower().startswith("mailto:") else f"mailto:{attendee.lower()}"
            if published and chosen not in published:
                raise InvalidInput("attendee: that address is not one of this account's calendar user addresses")
            addresses = {chosen}
        mine = _my_attendance(ical, addresses)
        if not mine:
            raise InvalidInput(
                "id: this account is not among the event's attendees, so there is nothing to answer "
                "(if the server does not publish your address, give it as attendee)"
            )
        scheduling = await app.client.scheduling()
        await app.client.require_write(cal.path)
        decision = await app.gate.check(
            ctx,
            tool="respond_to_event",
            target={
                "calendar": cal.path,
                "uid": uid,
                "partstat": partstat,
                "attendee": sorted(addresses),
                "scheduling": scheduling,
            },
            dialog=dialogs.respond_to_event(cal.path, partstat, scheduling=scheduling),
            version=version_of(resource),
            confirm_token=confirm_token,
        )
        if isinstance(decision, NotApproved):
            return decision.result
        for component, found in mine:
            entry: Any = found
            entry.params["PARTSTAT"] = partstat
            entry.params.pop("RSVP", None)
            bump(component, sequence=False)
        _, note = await write_back(app, cal, uid, resource, ical)
        return structured(
            Responded(calendar=cal.path, uid=uid, partstat=partstat, reply_sent_by_server=scheduling, note=note)
        )


_CHECK = "read it again with get_event"
_LOST = "The server's answer to the write was lost ({failure}); reading back showed {what}."


def _unchecked(failure: BackendError, check: BackendError) -> BackendError:
    return BackendError(
        f"{failure} Whether the change happened could not be checked either ({check}): NOT KNOWN. Before "
        f"repeating the call, {_CHECK}."
    )


async def write_back(
    app: App, cal: CalendarInfo, uid: str, resource: Resource, ical: icalendar.Calendar, kind: Component = "VEVENT"
) -> tuple[Resource, str | None]:
    """PUT the changed entry (If-Match); when the answer is lost, read back and say whether it changed.

    Returns:
        The written resource and None, or (answer lost, change found) the stored resource and a note.

    Raises:
        BackendError: the server answered no, or (answer lost) the change is not there: "NOT changed" when the
            request never left, else "NOT KNOWN" with how to check (:mod:`caldav_mcp.tools.outcome`).
    """
    text = serialise(ical)
    try:
        return await app.client.replace(resource, text), None
    except BackendError as failure:
        loss = loss_of(failure)
        if loss is None:
            raise
        try:
            now = await app.client.find(cal, kind, uid)
        except NotFound:
            raise unsettled(failure, loss, "the entry is no longer there (deleted meanwhile)", _CHECK) from None
        except BackendError as check:
            raise _unchecked(failure, check) from None
        if _same_version(now.data, text):
            return now, _LOST.format(failure=failure, what="the change was made")
        if now.etag is not None and now.etag == resource.etag:
            raise unsettled(failure, loss, "the entry still has the ETag it was read with", _CHECK) from None
        raise unsettled(
            failure, loss, "the entry has changed, but not to what was written (someone else changed it)", _CHECK
        ) from None


def _same_version(stored: str, written: str) -> bool:
    try:
        return fingerprint(stored) == fingerprint(written)
    except ValueError:
        return False


async def remove(
    app: App, cal: CalendarInfo, uid: str, resource: Resource, kind: Component = "VEVENT"
) -> tuple[bool, str | None]:
    """DELETE (If-Match); when the answer is lost, read back: gone is "deleted", still there is not.

    Returns:
        (already gone, note): the note is set when the answer was lost and the entry was found gone.
    """
    try:
        return await app.client.delete(resource) == "already gone", None
    except BackendError as failure:
        loss = loss_of(failure)
        if loss is None:
            raise
        try:
            now = await app.client.find(cal, kind, uid)
        except NotFound:
            return False, _LOST.format(failure=failure, what="the entry is gone: it was deleted")
        except BackendError as check:
            raise _unchecked(failure, check) from None
        found = (
            "the entry is still there, with the ETag it was read with"
            if now.etag == resource.etag
            else "the entry is still there, changed by someone else meanwhile"
        )
        raise unsettled(failure, loss, found, _CHECK) from None


async def _move(app: App, cal: CalendarInfo, uid: str, resource: Resource, target: CalendarInfo) -> str | None:
    """MOVE; when the answer is lost, read both calendars back: only in the destination is "moved".

    Returns:
        None, or (answer lost, the event found in the destination only) a note.
    """
    try:
        await app.client.move(resource, target)
        return None
    except BackendError as failure:
        loss = loss_of(failure)
        if loss is None:
            raise
        try:
            there = await _holds(app, target, uid)
            here = await _holds(app, cal, uid)
        except BackendError as check:
            raise _unchecked(failure, check) from None
        if there and not here:
            return _LOST.format(failure=failure, what=f"the event is in {target.path} and no longer in {cal.path}")
        where = (
            f"the event is still in {cal.path} and not in {target.path}"
            if here and not there
            else f"the event is {'in both calendars' if here else 'in neither calendar'}"
        )
        raise unsettled(failure, loss, where, f"look for it with get_event in {cal.path} and {target.path}") from None


async def _holds(app: App, cal: CalendarInfo, uid: str) -> bool:
    try:
        await app.client.find(cal, "VEVENT", uid)
    except NotFound:
        return False
    return True


def _check_until(series: icalendar.Component) -> None:
    """A series' UNTIL must keep fitting its DTSTART after the start moved (RFC 5545 §3.3.10).

    Raises:
        InvalidInput: the new start has another value type (date / date-time, zoned / floating) than UNTIL.
    """
    raw: Any = series.get("RRULE")
    begin: Any = value_of(series, "DTSTART")
    for rule in raw if isinstance(raw, list) else [raw] if raw is not None else []:
        problem = until_problem(rule.to_ical().decode(), begin)
        if problem is not None:
            raise InvalidInput(f"start: the series' RRULE no longer fits the new start: {problem}")


def _my_attendance(ical: icalendar.Calendar, addresses: set[str]) -> list[tuple[icalendar.Component, Any]]:
    found: list[tuple[icalendar.Component, Any]] = []
    for component in ical.walk("VEVENT"):
        raw = component.get("ATTENDEE")
        for attendee in raw if isinstance(raw, list) else [raw] if raw is not None else []:  # pyright: ignore[reportUnknownVariableType]
            if str(attendee).lower() in addresses:  # pyright: ignore[reportUnknownArgumentType]
                found.append((component, attendee))
    return found
