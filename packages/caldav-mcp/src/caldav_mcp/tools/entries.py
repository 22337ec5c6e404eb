"""Tasks (VTODO) and journal entries (VJOURNAL): list, get, create, update, complete, delete."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, InputRequiredResult
from pydantic import Field

from approval_core import NotApproved, show_stored, structured
from approval_core.serving.stored_text import unmarked
from caldav_mcp import dialogs, stored, task_series
from caldav_mcp.alarms import set_alarms
from caldav_mcp.client import CalendarInfo, Component
from caldav_mcp.editing import apply_text, bump, new_entry, now_utc, set_times
from caldav_mcp.errors import BackendError, InvalidInput
from caldav_mcp.ical import calendar_of, is_recurring, master, parse_when
from caldav_mcp.models import Deleted, JournalDetail, JournalList, TaskDetail, TaskList, Written
from caldav_mcp.models import Unreadable as UnreadableOut
from caldav_mcp.tools import task_completion, undo
from caldav_mcp.tools.common import (
    ADD,
    CHANGE,
    DELETE,
    READ,
    App,
    decode_cursor,
    encode_cursor,
    window,
)
from caldav_mcp.tools.creating import NewUidArg, create_entry
from caldav_mcp.tools.entry_details import journal_detail, related, task_detail
from caldav_mcp.tools.event_args import AlarmsArg, TextArg, TimeArg, TokenArg, TzidArg
from caldav_mcp.tools.events_read import CalendarArg
from caldav_mcp.tools.events_write import version_of, write_back
from caldav_mcp.views import instant_text, unreadable_entry

if TYPE_CHECKING:  # icalendar is imported where a call needs it: listing the tools does not (startup time)
    import icalendar

__all__ = ["register"]

Status = Literal["NEEDS-ACTION", "IN-PROCESS", "COMPLETED", "CANCELLED"]
UidArg = Annotated[str, Field(description="The entry's UID.", min_length=1, max_length=1024)]
LimitArg = Annotated[int, Field(ge=1, le=1000)]
# What reading one stored task or journal entry can fail with: not iCalendar, no such component, a value
# of the wrong type (PRIORITY:high). Each makes that entry unreadable, never the whole listing.
_UNREADABLE = (BackendError, ValueError, TypeError, KeyError, AttributeError)


def _why(exc: Exception) -> str:
    if isinstance(exc, BackendError):
        return unmarked(str(exc))
    return f"a stored property has a value this server cannot read ({type(exc).__name__})"


async def _calendar_for(app: App, calendar: str, kind: Component) -> CalendarInfo:
    cal = await app.client.calendar(calendar)
    if kind not in cal.components:
        noun = "tasks" if kind == "VTODO" else "journal entries"
        raise InvalidInput(f"calendar: {cal.path} does not accept {noun}")
    return cal


def _task_sort(task: TaskDetail) -> list[str]:
    """Dated tasks first, by the instant due (:func:`caldav_mcp.views.instant_text`), then SUMMARY and UID."""
    due = task.next_due or task.due
    return ["0" if due else "1", instant_text(due) if due else "", (task.summary or "").casefold(), task.uid]


def _journal_sort(entry: JournalDetail) -> list[str]:
    """A journal entry's place, newest first when reversed: its date as an instant (``instant_text``), then UID."""
    return [instant_text(entry.date or ""), entry.uid]


def _described(task: TaskDetail, ical: icalendar.Calendar) -> TaskDetail:
    """``task`` with what it says as a series (:func:`caldav_mcp.task_series.describe`): repeats, next due."""
    return task.model_copy(update=task_series.describe(ical))


def register(server: MCPServer[Any], app: App) -> None:
    """Add the task and journal tools to ``server``."""

    async def delete_entry(calendar: str, uid: str, kind: Component, ctx: Context, token: str | None) -> Any:
        cal = await app.client.calendar(calendar)
        resource = await app.client.find(cal, kind, uid)
        await app.client.require_write(cal.path)
        tool = "delete_task" if kind == "VTODO" else "delete_journal"
        decision = await undo.gate(app, resource).check(
            ctx,
            tool=tool,
            target={"calendar": cal.path, "uid": uid},
            dialog=dialogs.delete_entry(cal.path, kind, entry_id=uid),
            version=version_of(resource, "uid"),
            confirm_token=token,
            stored=stored.single(cal, resource, master(calendar_of(resource), kind), kind),
            # a standing grant may name this calendar, for an entry that does not repeat (a grant counts calls)
            collection=None if is_recurring(master(calendar_of(resource), kind)) else cal.path,
        )
        if isinstance(decision, NotApproved):
            return decision.result
        gone, note = await undo.remove(app, decision, tool, cal, uid, resource, kind)
        return structured(Deleted(calendar=cal.path, uid=uid, scope="entry", already_gone=gone, note=note))

    # ------------------------------------------------------------------ tasks

    @server.tool(annotations=READ)
    async def list_tasks(
        calendar: CalendarArg,
        status: Annotated[list[Status] | None, Field(description="Only these statuses; default: all.")] = None,
        limit: LimitArg = 200,
        cursor: str | None = None,
    ) -> Annotated[CallToolResult, TaskList]:
        """Tasks in a calendar, undated ones included, due first; with priority, percent, dates and RELATED-TO."""
        cal = await _calendar_for(app, calendar, "VTODO")
        tasks: list[TaskDetail] = []
        unreadable: list[UnreadableOut] = []
        for resource in await app.client.query(cal, "VTODO"):
            try:
                ical = calendar_of(resource)
                tasks.append(_described(task_detail(cal.path, master(ical, "VTODO"), resource.etag, []), ical))
            except _UNREADABLE as exc:
                unreadable.append(unreadable_entry(resource.href, resource.data, _why(exc)))
        children: dict[str, list[str]] = {}
        for task in tasks:
            if task.parent:
                children.setdefault(task.parent, []).append(task.uid)
        for task in tasks:
            task.children = sorted(set(task.children) | set(children.get(task.uid, [])))
        wanted = set(status or [])
        tasks = sorted((t for t in tasks if not wanted or t.status in wanted), key=_task_sort)
        query = ["tasks", cal.path, sorted(wanted)]
        after = decode_cursor(cursor, query)
        if after is not None:
            after[1:2] = map(instant_text, after[1:2])  # a cursor of an earlier release kept the due's own offset
            tasks = [t for t in tasks if _task_sort(t) > after]
        more = len(tasks) > limit
        tasks = tasks[:limit]
        next_cursor = encode_cursor(_task_sort(tasks[-1]), query) if more and tasks else None
        return structured(
            TaskList(calendar=cal.path, tasks=tasks, truncated=more, next_cursor=next_cursor, unreadable=unreadable)
        )

    @server.tool(annotations=READ)
    async def get_task(calendar: CalendarArg, uid: UidArg) -> Annotated[CallToolResult, TaskDetail]:
        """One task with everything stored about it."""
        cal = await _calendar_for(app, calendar, "VTODO")
        resource = await app.client.find(cal, "VTODO", uid)
        ical = calendar_of(resource)
        detail = task_detail(cal.path, master(ical, "VTODO"), resource.etag, await _children(cal, uid))
        return structured(_described(detail, ical))

    async def _children(cal: CalendarInfo, uid: str) -> list[str]:
        """UIDs of the tasks in ``cal`` whose parent (RELATED-TO, RELTYPE=PARENT or none) is ``uid``."""
        try:
            candidates = await app.client.query(cal, "VTODO", text={"RELATED-TO": uid})
        except BackendError:  # a server without prop-filter on RELATED-TO: read them all
            candidates = await app.client.query(cal, "VTODO")
        found: list[str] = []
        for resource in candidates:
            try:
                todo = master(calendar_of(resource), "VTODO")
            except _UNREADABLE:
                continue  # listed under unreadable by list_tasks; not a child this call can name
            if uid in related(todo, "PARENT"):
                found.append(str(todo.get("UID")))
        return found

    @server.tool(annotations=ADD)
    async def create_task(
        calendar: CalendarArg,
        summary: Annotated[str, Field(min_length=1, max_length=1000)],
        due: TimeArg = None,
        start: TimeArg = None,
        tzid: TzidArg = None,
        priority: Annotated[
            int | None, Field(description="1 highest .. 9 lowest (RFC 5545 §3.8.1.9).", ge=0, le=9)
        ] = None,
        description: TextArg = None,
        parent: Annotated[str | None, Field(description="UID of a parent task (RELATED-TO).")] = None,
        uid: NewUidArg = None,
        alarms: AlarmsArg = None,
    ) -> Annotated[CallToolResult, Written]:
        """Create a task (VTODO), dated or not. Give a uid to make the call safe to repeat."""
        cal = await _calendar_for(app, calendar, "VTODO")
        import icalendar

        todo = new_entry(icalendar.Todo(), uid)
        todo.add("STATUS", "NEEDS-ACTION")
        if start is not None or due is not None:
            set_times(todo, start=start, end=due, tzid=tzid, end_prop="DUE")
        apply_text(todo, {"SUMMARY": summary, "DESCRIPTION": description})
        if priority is not None:
            todo.add("PRIORITY", priority)
        if parent is not None:
            await app.client.find(cal, "VTODO", parent, field="parent")
            todo.add("RELATED-TO", parent, parameters={"RELTYPE": "PARENT"})
        if alarms:
            set_alarms(todo, alarms)
        return await create_entry(app, cal, todo, given=uid is not None)

    @server.tool(annotations=CHANGE)
    async def update_task(
        calendar: CalendarArg,
        uid: UidArg,
        summary: TextArg = None,
        description: TextArg = None,
        due: TimeArg = None,
        start: TimeArg = None,
        tzid: TzidArg = None,
        priority: Annotated[int | None, Field(ge=0, le=9)] = None,
        percent_complete: Annotated[int | None, Field(ge=0, le=100)] = None,
        status: Status | None = None,
    ) -> Annotated[CallToolResult, Written]:
        """Change a task (If-Match on the ETag read); fields not given are kept, as is every unknown property."""
        if all(v is None for v in (summary, description, due, start, priority, percent_complete, status)):
            raise InvalidInput("give at least one field to change")
        cal = await _calendar_for(app, calendar, "VTODO")
        resource = await app.client.find(cal, "VTODO", uid)
        ical = calendar_of(resource)
        todo = master(ical, "VTODO")
        new = {"summary": summary, "description": description, "status": status, "start": start, "due": due,
               "priority": priority, "percent_complete": percent_complete}  # fmt: skip
        show_stored(stored.single(cal, resource, todo, "VTODO", changes=stored.changes_of(todo, new, tzid)))
        apply_text(todo, {"SUMMARY": summary, "DESCRIPTION": description, "STATUS": status})
        if start is not None or due is not None:
            set_times(todo, start=start, end=due, tzid=tzid, end_prop="DUE")
        for name, value in (("PRIORITY", priority), ("PERCENT-COMPLETE", percent_complete)):
            if value is not None:
                todo.pop(name, None)
                todo.add(name, value)
        bump(todo)
        written, note = await write_back(app, cal, uid, resource, ical, "VTODO")
        return structured(Written(calendar=cal.path, uid=uid, id=uid, etag=written.etag, action="updated", note=note))

    task_completion.register(server, app, _calendar_for)

    @server.tool(annotations=DELETE)
    async def delete_task(
        calendar: CalendarArg, uid: UidArg, ctx: Context, confirm_token: TokenArg = None
    ) -> Annotated[CallToolResult, Deleted] | InputRequiredResult:
        """Delete a task. Always asks a person first."""
        return await delete_entry(calendar, uid, "VTODO", ctx, confirm_token)

    # ------------------------------------------------------------------ journals

    @server.tool(annotations=READ)
    async def list_journals(
        calendar: CalendarArg,
        start: Annotated[str | None, Field(description="Only entries dated from here (ISO 8601), with end.")] = None,
        end: Annotated[str | None, Field(description="Only entries dated before this.")] = None,
        limit: LimitArg = 100,
        cursor: str | None = None,
    ) -> Annotated[CallToolResult, JournalList]:
        """Journal entries in a calendar, newest first."""
        cal = await _calendar_for(app, calendar, "VJOURNAL")
        bounds = window(start, end) if start is not None and end is not None else None
        if (start is None) != (end is None):
            raise InvalidInput("end: give both start and end, or neither")
        entries: list[JournalDetail] = []
        unreadable: list[UnreadableOut] = []
        for resource in await app.client.query(cal, "VJOURNAL"):
            try:
                entries.append(journal_detail(cal.path, master(calendar_of(resource), "VJOURNAL"), resource.etag))
            except _UNREADABLE as exc:
                unreadable.append(unreadable_entry(resource.href, resource.data, _why(exc)))
        if bounds is not None:
            lo, hi = bounds
            entries = [e for e in entries if e.date and lo.date().isoformat() <= e.date[:10] < hi.date().isoformat()]
        entries.sort(key=_journal_sort, reverse=True)
        query = ["journals", cal.path, start, end]
        after = decode_cursor(cursor, query)
        if after is not None:
            after[:1] = map(instant_text, after[:1])  # a cursor of an earlier release kept the date's own offset
            entries = [e for e in entries if _journal_sort(e) < after]
        more = len(entries) > limit
        entries = entries[:limit]
        next_cursor = encode_cursor(_journal_sort(entries[-1]), query) if more and entries else None
        return structured(
            JournalList(
                calendar=cal.path, journals=entries, truncated=more, next_cursor=next_cursor, unreadable=unreadable
            )
        )

    @server.tool(annotations=READ)
    async def get_journal(calendar: CalendarArg, uid: UidArg) -> Annotated[CallToolResult, JournalDetail]:
        """One journal entry with its whole text."""
        cal = await _calendar_for(app, calendar, "VJOURNAL")
        resource = await app.client.find(cal, "VJOURNAL", uid)
        return structured(journal_detail(cal.path, master(calendar_of(resource), "VJOURNAL"), resource.etag))

    @server.tool(annotations=ADD)
    async def create_journal(
        calendar: CalendarArg,
        summary: Annotated[str, Field(min_length=1, max_length=1000)],
        description: TextArg = None,
        date: Annotated[str | None, Field(description="ISO 8601 date or date-time; default: today (UTC).")] = None,
        uid: NewUidArg = None,
    ) -> Annotated[CallToolResult, Written]:
        """Create a journal entry (VJOURNAL). Give a uid to make the call safe to repeat."""
        cal = await _calendar_for(app, calendar, "VJOURNAL")
        import icalendar

        journal = new_entry(icalendar.Journal(), uid)
        journal.add("DTSTART", parse_when(date, "date") if date else now_utc().date())
        apply_text(journal, {"SUMMARY": summary, "DESCRIPTION": description})
        return await create_entry(app, cal, journal, given=uid is not None)

    @server.tool(annotations=CHANGE)
    async def update_journal(
        calendar: CalendarArg,
        uid: UidArg,
        summary: TextArg = None,
        description: TextArg = None,
        date: TimeArg = None,
    ) -> Annotated[CallToolResult, Written]:
        """Change a journal entry (If-Match on the ETag read); fields not given are kept."""
        if summary is None and description is None and date is None:
            raise InvalidInput("give at least one of summary, description, date")
        cal = await _calendar_for(app, calendar, "VJOURNAL")
        resource = await app.client.find(cal, "VJOURNAL", uid)
        ical = calendar_of(resource)
        journal = master(ical, "VJOURNAL")
        new = {"summary": summary, "description": description, "date": date}
        show_stored(stored.single(cal, resource, journal, "VJOURNAL", changes=stored.changes_of(journal, new, None)))
        apply_text(journal, {"SUMMARY": summary, "DESCRIPTION": description})
        if date is not None:
            journal.pop("DTSTART", None)
            journal.add("DTSTART", parse_when(date, "date"))
        bump(journal)
        written, note = await write_back(app, cal, uid, resource, ical, "VJOURNAL")
        return structured(Written(calendar=cal.path, uid=uid, id=uid, etag=written.etag, action="updated", note=note))

    @server.tool(annotations=DELETE)
    async def delete_journal(
        calendar: CalendarArg, uid: UidArg, ctx: Context, confirm_token: TokenArg = None
    ) -> Annotated[CallToolResult, Deleted] | InputRequiredResult:
        """Delete a journal entry. Always asks a person first."""
        return await delete_entry(calendar, uid, "VJOURNAL", ctx, confirm_token)
