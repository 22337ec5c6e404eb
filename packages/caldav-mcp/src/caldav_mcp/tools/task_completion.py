"""complete_task: a task done or reopened; for a recurring task, one occurrence at a time (RFC 5545 §3.8.4.4).

A single task is marked done as before (STATUS, COMPLETED, PERCENT-COMPLETE 100). A recurring task is
done one occurrence at a time (:mod:`caldav_mcp.task_series`): its current occurrence gets an override
marked COMPLETED and the others stay open; the answer names that occurrence and the next one with its due
time. Completing the whole series is ``scope: "series"``, which asks a person first: every occurrence
still to come leaves the open tasks at once.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, InputRequiredResult
from pydantic import Field

from approval_core import NotApproved, StoredView, structured
from approval_core.serving.stored_text import quoted_name
from caldav_mcp import dialogs, stored, task_series
from caldav_mcp.client import CalendarInfo
from caldav_mcp.errors import BackendError, InvalidInput
from caldav_mcp.ical import Unreadable, calendar_of, master
from caldav_mcp.models import Written
from caldav_mcp.tools import undo
from caldav_mcp.tools.common import TOGGLE, App
from caldav_mcp.tools.event_args import TokenArg
from caldav_mcp.tools.events_read import CalendarArg
from caldav_mcp.tools.events_write import version_of, write_back

__all__ = ["register"]

UidArg = Annotated[str, Field(description="The entry's UID.", min_length=1, max_length=1024)]
ScopeArg = Annotated[
    Literal["occurrence", "series"] | None,
    Field(
        description="For a recurring task: occurrence (the default) completes or reopens one occurrence; series "
        "marks the whole series done (asks a person first) or reopens it. Ignored for a single task."
    ),
]


def register(server: MCPServer[Any], app: App, calendar_for: Any) -> None:
    """Add complete_task to ``server``; ``calendar_for(app, calendar, kind)`` resolves a calendar that takes tasks."""

    @server.tool(annotations=TOGGLE)
    async def complete_task(
        calendar: CalendarArg,
        uid: UidArg,
        ctx: Context,
        completed: Annotated[bool, Field(description="True: mark done. False: reopen it.")] = True,
        scope: ScopeArg = None,
        confirm_token: TokenArg = None,
    ) -> Annotated[CallToolResult, Written] | InputRequiredResult:
        """Mark a task done (STATUS, COMPLETED, PERCENT-COMPLETE 100) or reopen it.

        A recurring task is done one occurrence at a time: its first occurrence not yet done gets an override
        marked COMPLETED, and the answer names it and when the next one is due. scope series marks the whole
        series done instead, and asks a person first.
        """
        cal: CalendarInfo = await calendar_for(app, calendar, "VTODO")
        resource = await app.client.find(cal, "VTODO", uid)
        ical = calendar_of(resource)
        recurring = task_series.recurs(ical)
        whole = not recurring or scope == "series"
        asks = recurring and whole and completed
        if not asks and (confirm_token is not None or ctx.request_state is not None or ctx.input_responses):
            raise InvalidInput(
                "confirm_token: this call does not ask a person (it does not mark a whole recurring task done), "
                "so an approval given for another call cannot be used for it; call it without one. Nothing was "
                "changed."
            )
        counts: tuple[int, int] | Literal["uncountable"] | None = None
        if asks:
            try:
                counts = task_series.open_count(ical)
            except Unreadable:
                counts = "uncountable"
            await app.client.require_write(cal.path)  # no dialog for what the account may not do
        decision = await undo.gate(app, resource).check(
            ctx,
            tool="complete_task",
            target={"calendar": cal.path, "uid": uid, "completed": completed, "scope": "series" if whole else None}
            | ({"counts": counts} if asks else {}),
            dialog=dialogs.complete_series(cal.path, entry_id=uid, counts=counts),
            arguments={"scope": scope, "completed": completed},
            facts={"recurring": recurring},
            version=version_of(resource, "uid") if asks else resource.etag,
            confirm_token=confirm_token,
            stored=_view(cal, resource, ical, whole, completed),
        )
        if isinstance(decision, NotApproved):
            return decision.result
        action: Literal["completed", "reopened"] = "completed" if completed else "reopened"
        if whole:
            if recurring and not completed and not task_series.is_done(master(ical, "VTODO")):
                raise InvalidInput(
                    "completed: this recurring task is not marked done as a whole, so there is no series to reopen; "
                    "leave scope out to reopen the occurrence done last. Nothing was changed."
                )
            task_series.set_state(master(ical, "VTODO"), completed)
            written, note = await undo.write_back(app, decision, "complete_task", cal, uid, resource, ical, "VTODO")
            return structured(Written(calendar=cal.path, uid=uid, id=uid, etag=written.etag, action=action, note=note))
        try:
            chosen = task_series.current(ical) if completed else task_series.last_done(ical)
        except Unreadable as exc:
            raise BackendError(f"uid: the stored task {quoted_name(uid)} cannot be read: {exc.reason}") from None
        if chosen is None:
            raise InvalidInput(
                "uid: every occurrence of this recurring task is already done; reopen one with completed false"
                if completed
                else "uid: no occurrence of this recurring task is marked done one at a time; to reopen a series "
                "marked done as a whole, give scope series"
            )
        (task_series.finish if completed else task_series.reopen)(ical, chosen)
        following = task_series.next_after(ical, chosen) if completed else None
        written, note = await write_back(app, cal, uid, resource, ical, "VTODO")
        return structured(
            Written(
                calendar=cal.path,
                uid=uid,
                id=uid,
                etag=written.etag,
                action=action,
                note=note,
                occurrence=chosen.rid,
                next_occurrence=following.rid if following is not None else None,
                next_due=following.due if following is not None else None,
            )
        )


def _view(cal: CalendarInfo, resource: Any, ical: Any, whole: bool, completed: bool) -> StoredView:
    """The task as stored, for the approval page; a change of the whole task's STATUS as before -> after."""
    todo = master(ical, "VTODO")
    if not whole:  # one occurrence: the dialog and the result name it; the series' own fields do not change
        return stored.single(cal, resource, todo, "VTODO")
    new = {"status": "COMPLETED" if completed else "NEEDS-ACTION"}
    return stored.single(cal, resource, todo, "VTODO", changes=stored.changes_of(todo, new, None))
