"""Undo: keeping what a guarded change removes (the journal), list_restorable and restore_entry.

A guarded tool asks through :func:`gate` (``await undo.gate(app, resource).check(ctx, ...)``, the gate's own
arguments), which words the dialog "recoverable for N day(s) with restore_entry" only where the journal will
hold the entry as it was read (:mod:`approval_core.records.journal`); it then writes through
:func:`write_back`, :func:`remove` or :func:`move_entry`, which keep the entry just before the write.
``list_restorable`` shows ids, places, sizes and times, never a kept text; ``restore_entry`` asks, then puts
the entry back with one conditional write (:mod:`webdav_core.restore`).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, InputRequiredResult
from pydantic import Field

from approval_core import (
    Approved,
    Decision,
    Dialog,
    JournalUnavailable,
    Keeping,
    NotApproved,
    RestorableList,
    Restored,
    RestoreIdArg,
    RestoreTokenArg,
    annotations,
    restorable,
    structured,
)
from approval_core.records.journal import Kind
from approval_core.records.restorable import utc_text
from approval_core.serving.stored_text import name_in_text
from caldav_mcp import dialogs, stored
from caldav_mcp.client import CalendarInfo, Component, Resource
from caldav_mcp.dav import CONTENT_TYPE
from caldav_mcp.errors import BackendError, InvalidInput, NotFound, OutOfScope
from caldav_mcp.tools import write_back as plain
from caldav_mcp.tools.common import READ, App
from webdav_core.restore import plan_restore, put_back

if TYPE_CHECKING:
    import icalendar

__all__ = ["RESTORE", "gate", "keeping", "move_entry", "register", "remove", "undo_days", "write_back"]

RESTORE = annotations(read_only=False, destructive=True, idempotent=True, open_world=True)
"""restore_entry: it may write over the version a change left (destructive); a repeat finds the entry restored
and changes nothing (idempotent); on a scheduling server a restored entry with attendees is sent (open world)."""


def undo_days(app: App, resource: Resource) -> int | None:
    """How long the journal would keep ``resource`` as read (for the dialog); None when it would not."""
    journal = app.gate.journal
    if journal is None or resource.problem is not None or not journal.keeps(len(resource.data.encode())):
        return None
    return journal.days


@contextlib.asynccontextmanager
async def keeping(
    app: App,
    decision: Approved,
    tool: str,
    kind: Kind,
    cal: CalendarInfo,
    resource: Resource,
    after_href: str | None = None,
    made: tuple[str, str] | None = None,
) -> AsyncGenerator[Keeping]:
    """Keep ``resource`` as read while the ``async with`` block changes it (see ``Journal.keeping``).

    ``made``: ``(href, uid)`` of an entry the same change created (a split's new series).

    Raises:
        BackendError: the journal could not keep it; the block did not run and nothing was changed.
    """
    journal = app.gate.journal
    if journal is None or resource.problem is not None:
        yield Keeping(None)
        return
    try:
        async with journal.keeping(
            decision,
            tool=tool,
            kind=kind,
            collection=cal.path,
            href=resource.href,
            etag=resource.etag,
            data=resource.data,
            content_type=CONTENT_TYPE,
            after_href=after_href,
            made=made,
        ) as handle:
            yield handle
            if kind == "overwritten" and handle.entry_id is not None and handle.after_etag is None:
                # The PUT's answer named no ETag (DAViCal): ask for the version it left, for the restore's If-Match.
                with contextlib.suppress(BackendError):
                    handle.left(await app.client.wire().current_etag(resource.href))
    except JournalUnavailable as exc:  # raised before the block runs: nothing was changed
        raise BackendError(str(exc)) from None


class _UndoGate:
    """The app's gate, with the dialog worded for the undo journal (:func:`dialogs.with_undo`)."""

    def __init__(self, app: App, resource: Resource) -> None:
        self._app = app
        self._resource = resource

    async def check(self, ctx: Context, *, dialog: Dialog, **arguments: Any) -> Decision:
        """``app.gate.check(ctx, dialog=..., **arguments)`` with the dialog saying how long it stays recoverable."""
        worded = dialogs.with_undo(dialog, undo_days(self._app, self._resource))
        return await self._app.gate.check(ctx, dialog=worded, **arguments)


def gate(app: App, resource: Resource) -> _UndoGate:
    """The gate for a guarded change of ``resource`` (see the module docstring)."""
    return _UndoGate(app, resource)


async def write_back(
    app: App,
    decision: Approved,
    tool: str,
    cal: CalendarInfo,
    uid: str,
    resource: Resource,
    ical: icalendar.Calendar,
    kind: Component = "VEVENT",
    made: tuple[str, str] | None = None,
) -> tuple[Resource, str | None]:
    """:func:`caldav_mcp.tools.write_back.write_back`, the entry as read kept first (``overwritten``).

    ``made``: ``(href, uid)`` of the new series a split created first, noted in the journal entry so a restore
    of the old series refuses while the new one is there (both would show).
    """
    async with keeping(app, decision, tool, "overwritten", cal, resource, made=made) as kept:
        written, note = await plain.write_back(app, cal, uid, resource, ical, kind)
        kept.left(written.etag)
    return written, note


async def remove(
    app: App, decision: Approved, tool: str, cal: CalendarInfo, uid: str, resource: Resource, kind: Component = "VEVENT"
) -> tuple[bool, str | None]:
    """:func:`caldav_mcp.tools.write_back.remove`, the entry as read kept first (``deleted``)."""
    async with keeping(app, decision, tool, "deleted", cal, resource):
        return await plain.remove(app, cal, uid, resource, kind)


async def move_entry(
    app: App, decision: Approved, cal: CalendarInfo, uid: str, resource: Resource, target: CalendarInfo
) -> str | None:
    """:func:`caldav_mcp.tools.write_back.move_entry`, the entry as read kept first (``moved``, from move_event)."""
    moved_to = target.path + resource.href.rsplit("/", 1)[-1]
    async with keeping(app, decision, "move_event", "moved", cal, resource, after_href=moved_to):
        return await plain.move_entry(app, cal, uid, resource, target)


def _folder(href: str) -> str:
    return href.rsplit("/", 1)[0] + "/"


def register(server: MCPServer[Any], app: App) -> None:
    """Add list_restorable and restore_entry to ``server``."""

    @server.tool(annotations=READ)
    async def list_restorable(
        calendar: Annotated[str | None, Field(description="Only this calendar's entries; omit for all.")] = None,
    ) -> Annotated[CallToolResult, RestorableList]:
        """What guarded changes removed and can still be put back with restore_entry, newest first.

        Ids, places, sizes and times only (never the kept text), and the approval behind each change.
        """
        path = None if calendar is None else (await app.client.calendar(calendar)).path
        return structured(await restorable(app.gate.journal, path))

    @server.tool(annotations=RESTORE)
    async def restore_entry(
        calendar: Annotated[str, Field(description="The calendar the entry was in (list_restorable's collection).")],
        id: RestoreIdArg,
        ctx: Context,
        confirm_token: RestoreTokenArg = None,
    ) -> Annotated[CallToolResult, Restored] | InputRequiredResult:
        """Put back an entry that a guarded change deleted, overwrote or moved (an id from list_restorable).

        Always asks. Where the entry is gone it is written with If-None-Match: *; where the change left a
        version it is written over exactly that version (If-Match); a moved entry is moved back. An entry
        changed since is not overwritten: the call refuses and says so.
        """
        cal = await app.client.calendar(calendar)
        journal = app.gate.journal
        if journal is None:
            raise NotFound("id: this server keeps no undo journal (APPROVAL_UNDO_DAYS=0); nothing can be restored")
        entry = await journal.entry(id)
        if entry is None:
            raise NotFound(
                f"id: the undo journal holds no entry {name_in_text(id)} for this caller (never kept, restored "
                f"already, older than {journal.days} day(s), or it does not open); list_restorable shows what can be "
                "restored"
            )
        if entry.collection != cal.path:
            raise InvalidInput(
                f"calendar: journal entry {name_in_text(id)} was kept from another calendar; it goes back only there"
            )
        places = {entry.href: cal.path}
        if entry.kind == "moved":
            places[entry.after_href] = (await app.client.calendar(_folder(entry.after_href), field="id")).path
        for href, folder in places.items():
            if not app.client.known(href) or _folder(href) != folder:
                raise OutOfScope(f"id: the journal names a place outside the calendars this server may use ({href})")
        wire = app.client.wire()
        with app.client.doing("looking where the entry was"):
            plan = await plan_restore(
                wire,
                kind=entry.kind,
                href=entry.href,
                after_href=entry.after_href,
                after_etag=entry.after_etag,
                data=entry.data,
                tool=entry.tool,
                made=entry.made,
            )
        await app.client.require_write(cal.path)
        decision = await app.gate.check(
            ctx,
            tool="restore_entry",
            target={"id": id, "calendar": cal.path, "href": entry.href, "how": plan.action, "from": plan.source},
            dialog=dialogs.restore_entry(
                plan.action, cal.path, restore_id=id, kept_at=utc_text(entry.kept_at), undoes=entry.tool
            ),
            version=plan.version or "absent",
            confirm_token=confirm_token,
            stored=stored.restore_view(cal, entry.href, entry.data, entry.tool),
        )
        if isinstance(decision, NotApproved):
            return decision.result
        with app.client.doing("restoring the entry"):
            etag = await put_back(wire, plan, entry.data, entry.content_type)
        await journal.spend(id)
        return structured(Restored(id=id, collection=cal.path, href=entry.href, how=plan.action, etag=etag))
