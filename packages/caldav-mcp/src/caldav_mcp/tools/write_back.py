"""Writes whose answer may be lost: write back, remove and move an entry, and say what reading back showed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from caldav_mcp.client import CalendarInfo, Component, Resource
from caldav_mcp.editing import serialise
from caldav_mcp.errors import BackendError, NotFound
from caldav_mcp.tools.common import App
from caldav_mcp.tools.outcome import fingerprint, loss_of, unsettled

if TYPE_CHECKING:  # imported where a call needs it: listing the tools does not (startup time)
    import icalendar

__all__ = ["move_entry", "remove", "write_back"]

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


async def move_entry(app: App, cal: CalendarInfo, uid: str, resource: Resource, target: CalendarInfo) -> str | None:
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
