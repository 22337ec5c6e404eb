"""update_event: change an event, one occurrence of a series, or a whole series (If-Match on the ETag read).

Only a change that reaches a whole recurring series asks a person first; what it works out before asking
is in :mod:`caldav_mcp.tools.event_edits`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, InputRequiredResult
from pydantic import Field

from approval_core import NotApproved, structured
from caldav_mcp import dialogs, invitation_dialogs, stored
from caldav_mcp.alarms import set_alarms
from caldav_mcp.attendees import write_attendees
from caldav_mcp.editing import apply_text, bump, set_times, validate_rrule
from caldav_mcp.errors import InvalidInput
from caldav_mcp.ical import calendar_of, is_recurring, master, overrides, value_of
from caldav_mcp.models import Written
from caldav_mcp.rrule import first_occurrence_problem
from caldav_mcp.rule_change import rule_change, with_rule
from caldav_mcp.splitting import Split
from caldav_mcp.tools import undo
from caldav_mcp.tools.common import CHANGE, App, split_id
from caldav_mcp.tools.event_args import AlarmsArg, IdArg, ScopeArg, TextArg, TimeArg, TokenArg, TzidArg
from caldav_mcp.tools.event_edits import check_until, override_of, reach_of, scope_of, version_of
from caldav_mcp.tools.events_read import CalendarArg, occurrence_of
from caldav_mcp.tools.following import tail_of, write_split
from caldav_mcp.tools.inviting import AttendeesArg, plan, told

if TYPE_CHECKING:  # imported where a call needs it: listing the tools does not (startup time)
    pass

__all__ = ["register"]


def register(server: MCPServer[Any], app: App) -> None:
    """Add update_event to ``server``."""

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
        alarms: AlarmsArg = None,
        rrule: Annotated[
            str | None,
            Field(
                description="A new recurrence rule for the whole series (scope series), or to make a single event "
                "repeat, e.g. FREQ=WEEKLY;BYDAY=MO;COUNT=10. Always asks a person first.",
                max_length=1000,
            ),
        ] = None,
        attendees: AttendeesArg = None,
    ) -> Annotated[CallToolResult, Written] | InputRequiredResult:
        """Change an event, one occurrence of a series, or a whole series (If-Match on the ETag read).

        Changing a whole recurring series asks a person first, and so does any change a scheduling server
        (RFC 6638) sends to the event's attendees. Fields not given are kept, as is every property this tool
        does not know (X- properties), the attendees unless attendees is given (then the list replaces them,
        keeping the answers of those who stay), and the stored alarms unless alarms is given (then they are
        replaced by the ones given; [] removes them).
        """
        cal = await app.client.calendar(calendar)
        uid, rid = split_id(id)
        changes: dict[str, Any] = {
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
        if alarms is not None:
            changes["alarms"] = [alarm.model_dump(exclude_none=True) for alarm in alarms]
        if rrule is not None:
            changes["rrule"] = rrule
        if attendees is not None:
            changes["attendees"] = [attendee.model_dump() for attendee in attendees]
        if not changes:
            raise InvalidInput(
                "give at least one of summary, description, location, start, end, alarms, rrule, attendees"
            )
        resource = await app.client.find(cal, "VEVENT", uid, field="id")
        ical = calendar_of(resource)
        series = master(ical, "VEVENT")
        recurring = is_recurring(series) or bool(overrides(ical, "VEVENT"))
        following = scope == "following"
        if following and not is_recurring(series):
            raise InvalidInput("scope: 'following' needs a recurring event (an RRULE or RDATE)")
        if following and rrule is not None:
            raise InvalidInput("rrule: a new rule is given with scope 'series'; split the series first")
        if attendees is not None and (following or rrule is not None):
            raise InvalidInput("attendees: change who is invited in a call of its own, with scope 'series'")
        effective = scope_of(recurring, "occurrence" if following else scope, rid)
        moves_series = effective == "series" and ("start" in changes or "end" in changes)
        if moves_series and (overrides(ical, "VEVENT") or "EXDATE" in series):
            raise InvalidInput(
                "start: this series has changed or removed occurrences that are tied to its current times; "
                "change those occurrences one by one instead"
            )
        if attendees is not None and effective == "occurrence":
            raise InvalidInput("attendees: the people invited belong to the whole series; give scope 'series'")
        invite = await plan(app, list(ical.walk("VEVENT")), attendees)
        rule, change = None, None
        if rrule is not None:
            if effective == "occurrence":
                raise InvalidInput("rrule: a recurrence rule belongs to the whole series; give scope 'series'")
            if "start" in changes or "end" in changes:
                raise InvalidInput("rrule: change the rule and the times in two calls, the rule first")
            rule = validate_rrule(rrule, value_of(series, "DTSTART"))
            never = await anyio.to_thread.run_sync(first_occurrence_problem, rrule, value_of(series, "DTSTART"))
            if never is not None:
                raise InvalidInput(f"rrule: {never}")
            change = rule_change(ical, rule)
        split = Split(ical, occurrence_of(ical, rid, uid)) if following and rid else None
        tail = tail_of(ical, split, changes, tzid) if split is not None else None
        if split is not None:
            await app.client.require_write(cal.path)
        target_component = (
            override_of(ical, series, rid) if effective == "occurrence" and rid and split is None else series
        )
        fields = sorted(changes)
        asks = (effective == "series" and recurring) or rule is not None or invite.sends
        count, own = reach_of(ical) if asks and recurring else (1, 0)
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
                "rule_change": None if change is None else [change.before, change.after, change.kept, change.lost],
                "split": None if split is None else [split.kept, split.dropped],
                "invitations": [invite.sent.invited, invite.sent.outside, invite.sent.kept, invite.sent.removed],
            },
            dialog=invitation_dialogs.sending(
                dialogs.change_rule(cal.path, entry_id=id, fields=fields, rule=rrule or "", change=change),
                invite.sent.kept if invite.sends else 0,
            )
            if change is not None
            else invitation_dialogs.sending(
                dialogs.update_following(cal.path, entry_id=id, fields=fields, kept=split.kept, moved=split.dropped),
                invite.sent.kept if invite.sends else 0,
            )
            if split is not None
            else invitation_dialogs.invitations(
                cal.path,
                entry_id=id,
                fields=fields,
                sent=invite.sent,
                occurrences=count,
                occurrence=effective == "occurrence",
            )
            if invite.sends
            else dialogs.update_series(cal.path, entry_id=id, fields=fields, occurrences=count, own_changes=own),
            arguments={"scope": "following" if split is not None else effective, "rrule": rrule},
            facts={"recurring": recurring, "sends": invite.sends},
            version=version_of(resource) if asks or split is not None else resource.etag,
            confirm_token=confirm_token,
            stored=stored.edit_view(
                cal,
                resource,
                series,
                target_component,
                effective,
                count,
                changes,
                tzid,
                [] if invite.given is None else [stored.attendees_change(series, [uri for uri, _ in invite.given])],
            ),
        )
        if isinstance(decision, NotApproved):
            return decision.result
        if split is not None and tail is not None:
            created, note = await write_split(app, decision, cal, uid, resource, ical, split, tail)
            new_uid = str(master(tail, "VEVENT")["UID"])
            return structured(
                Written(
                    calendar=cal.path,
                    uid=new_uid,
                    id=new_uid,
                    etag=created.etag,
                    action="updated",
                    note=note,
                    split_from=uid,
                )
            )
        apply_text(target_component, {"SUMMARY": summary, "DESCRIPTION": description, "LOCATION": location})
        if alarms is not None:
            set_alarms(target_component, alarms)
        if rule is not None:
            with_rule(series, rule)
        if invite.given is not None and invite.organizer is not None:
            for component in ical.walk("VEVENT"):  # the series and each override: one list of people
                write_attendees(component, invite.given, invite.organizer)
                if component is not target_component:
                    bump(component)
        if start is not None or end is not None:
            set_times(target_component, start=start, end=end, tzid=tzid)
            if target_component is series:
                check_until(series)
        bump(target_component)
        written, note = await undo.write_back(app, decision, "update_event", cal, uid, resource, ical)
        out_id = f"{uid}#{rid}" if effective == "occurrence" else uid
        attendees_told, scheduling = told(invite)
        return structured(
            Written(
                calendar=cal.path,
                uid=uid,
                id=out_id,
                etag=written.etag,
                action="updated",
                note=note,
                attendees_told=attendees_told,
                scheduling=scheduling,
            )
        )
