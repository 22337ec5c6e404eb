"""Changing events: create_event, update_event, delete_event, move_event, respond_to_event.

What they work out before asking is in :mod:`caldav_mcp.tools.event_edits`; writes whose
answer may be lost are in :mod:`caldav_mcp.tools.write_back`.

The guarded ones read the entry first, validate everything they can, build
the dialog from their own counts and the caller's values, ask, and then write
with ``If-Match`` on the ETag they read.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Annotated, Any, Literal

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, InputRequiredResult
from pydantic import Field

from approval_core import NotApproved, annotations, structured
from caldav_mcp import dialogs
from caldav_mcp.editing import apply_text, bump, new_entry, set_times, validate_rrule
from caldav_mcp.errors import Conflict, InvalidInput, NotFound
from caldav_mcp.ical import (
    calendar_of,
    is_recurring,
    master,
    occurrence_start,
    overrides,
    value_of,
)
from caldav_mcp.models import Deleted, Moved, Responded, Written
from caldav_mcp.rrule import first_occurrence_problem, until_problem
from caldav_mcp.tools import undo
from caldav_mcp.tools.common import ADD, CHANGE, DELETE, MOVE, App, split_id
from caldav_mcp.tools.creating import NewUidArg, create_entry
from caldav_mcp.tools.event_edits import (
    ALL_DAY,
    Scope,
    all_day_intent,
    count_of,
    override_of,
    reach_of,
    remove_occurrence,
    scope_of,
    version_of,
)
from caldav_mcp.tools.events_read import CalendarArg, occurrence_of
from caldav_mcp.tools.write_back import (
    remove,
    write_back,
)

if TYPE_CHECKING:  # imported where a call needs it: listing the tools does not (startup time)
    import icalendar

__all__ = ["register", "remove", "version_of", "write_back"]

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
            start, end = all_day_intent(all_day, start, end)
        import icalendar

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
        effective = scope_of(recurring, scope, rid)
        moves_series = effective == "series" and ("start" in changes or "end" in changes)
        if moves_series and (overrides(ical, "VEVENT") or "EXDATE" in series):
            raise InvalidInput(
                "start: this series has changed or removed occurrences that are tied to its current times; "
                "change those occurrences one by one instead"
            )
        target_component = override_of(ical, series, rid) if effective == "occurrence" and rid else series
        fields = sorted(changes)
        asks = effective == "series" and recurring
        count, own = reach_of(ical) if asks else (1, 0)
        if asks:
            await app.client.require_write(cal.path)  # no dialog for what the account may not do
        decision = await undo.gate(app, resource).check(
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
                "own_changes": own,
                "fields": len(fields),
            },
            dialog=dialogs.update_series(cal.path, entry_id=id, fields=fields, occurrences=count, own_changes=own),
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
        written, note = await undo.write_back(app, decision, "update_event", cal, uid, resource, ical)
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
        effective = scope_of(is_recurring(series) or bool(overrides(ical, "VEVENT")), scope, rid)
        occurrence = occurrence_of(ical, rid, uid) if effective == "occurrence" and rid else None
        count = count_of(ical) if effective == "series" else 1
        await app.client.require_write(cal.path)
        decision = await undo.gate(app, resource).check(
            ctx,
            tool="delete_event",
            target={
                "calendar": cal.path,
                "uid": uid,
                "scope": effective,
                "recurrence_id": rid if effective == "occurrence" else None,
                "occurrences": count,
            },
            dialog=dialogs.delete_event(cal.path, entry_id=id, scope=effective, occurrences=count),
            version=version_of(resource),
            confirm_token=confirm_token,
        )
        if isinstance(decision, NotApproved):
            return decision.result
        if effective == "occurrence" and occurrence is not None and rid is not None:
            remove_occurrence(ical, series, rid, occurrence_start(occurrence))
            _, note = await undo.write_back(app, decision, "delete_event", cal, uid, resource, ical)
            gone = False
        else:
            gone, note = await undo.remove(app, decision, "delete_event", cal, uid, resource)
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
        decision = await undo.gate(app, resource).check(
            ctx,
            tool="move_event",
            target={"calendar": cal.path, "uid": uid, "destination": target.path, "occurrences": count},
            dialog=dialogs.move_event(cal.path, target.path, entry_id=id, occurrences=count),
            version=version_of(resource),
            confirm_token=confirm_token,
        )
        if isinstance(decision, NotApproved):
            return decision.result
        note = await undo.move_entry(app, decision, cal, uid, resource, target)
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
            dialog=dialogs.respond_to_event(cal.path, partstat, entry_id=id, scheduling=scheduling),
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
        _, note = await undo.write_back(app, decision, "respond_to_event", cal, uid, resource, ical)
        return structured(
            Responded(calendar=cal.path, uid=uid, partstat=partstat, reply_sent_by_server=scheduling, note=note)
        )


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
