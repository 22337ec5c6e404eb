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
from caldav_mcp import dialogs, invitation_dialogs, stored
from caldav_mcp.alarms import set_alarms
from caldav_mcp.attendees import write_attendees
from caldav_mcp.editing import apply_text, bump, new_calendar, new_entry, set_times, validate_rrule
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
from caldav_mcp.rrule import first_occurrence_problem
from caldav_mcp.splitting import Split, end_before
from caldav_mcp.tools import event_update, undo
from caldav_mcp.tools.common import DELETE, INVITE, MOVE, App, split_id
from caldav_mcp.tools.creating import NewUidArg, create_entry
from caldav_mcp.tools.event_args import AlarmsArg, DeleteScopeArg, IdArg, TextArg, TimeArg, TokenArg, TzidArg
from caldav_mcp.tools.event_edits import (
    ALL_DAY,
    all_day_intent,
    count_of,
    my_attendance,
    remove_occurrence,
    scope_of,
    version_of,
)
from caldav_mcp.tools.events_read import CalendarArg, occurrence_of
from caldav_mcp.tools.inviting import AttendeesArg, cancels_of, plan, told
from caldav_mcp.tools.write_back import (
    remove,
    write_back,
)

if TYPE_CHECKING:  # imported where a call needs it: listing the tools does not (startup time)
    pass

__all__ = ["register", "remove", "version_of", "write_back"]

RESPOND = annotations(read_only=False, destructive=False, idempotent=True, open_world=True)


def register(server: MCPServer[Any], app: App) -> None:
    """Add the event-changing tools to ``server``."""

    @server.tool(annotations=INVITE)
    async def create_event(
        calendar: CalendarArg,
        ctx: Context,
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
        alarms: AlarmsArg = None,
        attendees: AttendeesArg = None,
        confirm_token: TokenArg = None,
    ) -> Annotated[CallToolResult, Written] | InputRequiredResult:
        """Create an event (written with If-None-Match: *). Without end: one day for a date, one hour otherwise.

        With attendees, the ORGANIZER is this account; on a server with RFC 6638 scheduling the server then
        sends them invitations, so a person is asked first (the dialog counts the people, never names them).

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
        if alarms:
            set_alarms(event, alarms)
        invite = await plan(app, [], attendees or None)
        if confirm_token is not None and not invite.sends:
            raise InvalidInput(
                "confirm_token: this call does not ask a person (nobody is invited by the server), so an "
                "approval given for another call cannot be used for it; call it without one. Nothing was written."
            )
        if not attendees:
            return await create_entry(app, cal, event, given=uid is not None)
        assert invite.given is not None
        assert invite.organizer is not None
        write_attendees(event, invite.given, invite.organizer)
        single = new_calendar()
        single.add_component(event)
        count = count_of(single)
        sent = invite.sent
        decision = await app.gate.check(
            ctx,
            tool="create_event",
            target={  # the caller's values: a UID and DTSTAMP made here differ on a retry
                "calendar": cal.path,
                "uid": uid,
                "event": [summary, start, end, tzid, description, location, rrule, transparent, all_day],
                "alarms": [alarm.model_dump(exclude_none=True) for alarm in alarms or []],
                "attendees": [[uri, given.model_dump()] for uri, given in invite.given],
                "invitations": [sent.invited, sent.outside, sent.kept, sent.removed],
                "occurrences": count,
            },
            dialog=invitation_dialogs.invitations(cal.path, entry_id=None, fields=[], sent=sent, occurrences=count),
            facts={"sends": invite.sends},
            confirm_token=confirm_token,
            stored=stored.new_event_view(cal, event, count),
        )
        if isinstance(decision, NotApproved):
            return decision.result
        attendees_told, scheduling = told(invite)
        result = {"attendees_told": attendees_told, "scheduling": scheduling}
        return await create_entry(app, cal, event, given=uid is not None, told=result)

    event_update.register(server, app)

    @server.tool(annotations=DELETE)
    async def delete_event(
        calendar: CalendarArg, id: IdArg, ctx: Context, scope: DeleteScopeArg = None, confirm_token: TokenArg = None
    ) -> Annotated[CallToolResult, Deleted] | InputRequiredResult:
        """Delete an event, one occurrence of a series (an EXDATE), or a whole series. Always asks first.

        scope following deletes the occurrence in the id and every later one: the series ends before it (UNTIL).
        """
        cal = await app.client.calendar(calendar)
        uid, rid = split_id(id)
        resource = await app.client.find(cal, "VEVENT", uid, field="id")
        ical = calendar_of(resource)
        series = master(ical, "VEVENT")
        recurring = is_recurring(series) or bool(overrides(ical, "VEVENT"))
        following = scope == "following"
        if following and not is_recurring(series):
            raise InvalidInput("scope: 'following' needs a recurring event (an RRULE or RDATE)")
        effective = scope_of(recurring, "occurrence" if following else scope, rid)
        occurrence = occurrence_of(ical, rid, uid) if effective == "occurrence" and rid else None
        split = Split(ical, occurrence) if following and occurrence is not None else None
        count = count_of(ical) if effective == "series" else 1
        cancels = cancels_of(await plan(app, list(ical.walk("VEVENT")), None))
        await app.client.require_write(cal.path)
        target = {
            "calendar": cal.path,
            "uid": uid,
            "scope": "following" if split is not None else effective,
            "recurrence_id": rid if effective == "occurrence" else None,
            "occurrences": count if split is None else [split.kept, split.dropped],
            "cancellations": cancels,
        }
        dialog = invitation_dialogs.cancelling(
            dialogs.delete_following(cal.path, entry_id=id, kept=split.kept, dropped=split.dropped)
            if split is not None
            else dialogs.delete_event(cal.path, entry_id=id, scope=effective, occurrences=count),
            cancels,
        )
        decision = await undo.gate(app, resource).check(
            ctx,
            tool="delete_event",
            target=target,
            dialog=dialog,
            version=version_of(resource),
            confirm_token=confirm_token,
            # a split shows the first occurrence it removes; the dialog counts the rest
            stored=stored.delete_view(cal, resource, ical, series, occurrence, count),
            # a standing grant may name this calendar for one entry or one occurrence: never a deletion the
            # server mails to other people, nor one reaching several occurrences (a grant counts calls)
            collection=cal.path if not cancels and split is None and count == 1 else None,
        )
        if isinstance(decision, NotApproved):
            return decision.result
        if split is not None:
            end_before(ical, split.original)
            bump(series)
            _, note = await undo.write_back(app, decision, "delete_event", cal, uid, resource, ical)
            return structured(
                Deleted(
                    calendar=cal.path,
                    uid=uid,
                    scope="following",
                    recurrence_id=rid,
                    note=note,
                    cancellations=cancels or None,
                )
            )
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
                cancellations=cancels or None,
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
            stored=stored.single(cal, resource, master(ical, "VEVENT"), "VEVENT", count=count, moved_to=target),
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
        mine = my_attendance(ical, addresses)
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
            stored=stored.answer_view(cal, resource, master(ical, "VEVENT"), mine, partstat),
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
