"""Creating an entry so that a create can be repeated without a duplicate.

Every create is a ``PUT`` with ``If-None-Match: *`` (RFC 9110 §13.1.2) to a
name made from the entry's UID, and the caller may choose that UID. Then:

* a repeat of the same call with the same ``uid`` finds the entry and answers
  "already exists" with its id; it never stores a second copy;
* when the PUT fails without an answer that says what happened (the
  connection dropped after the request left, a timeout, a 5xx), the entry is
  looked up by its UID and the answer says "created" or "not created"; after
  a timeout an entry not (yet) found is "not known", since the server may
  still be storing it; if the lookup fails too, that is unknown as well, and
  repeating the call with the same ``uid`` is safe.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

from mcp_types import CallToolResult
from pydantic import Field

from approval_core import structured
from approval_core.serving.stored_text import quoted_name
from caldav_mcp.client import CalendarInfo, Component
from caldav_mcp.editing import new_calendar, serialise
from caldav_mcp.errors import BackendError, Conflict, NotFound
from caldav_mcp.models import Written
from caldav_mcp.tools.common import App
from caldav_mcp.tools.outcome import loss_of

if TYPE_CHECKING:  # icalendar is imported where a call needs it: listing the tools does not (startup time)
    import icalendar

__all__ = ["UID_PATTERN", "NewUidArg", "create_entry"]

UID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9@._+=-]{0,199}$"
"""A caller-given UID: 1..200 characters, letters, digits and ``@ . _ + = -``, starting with a letter or digit."""

NewUidArg = Annotated[
    str | None,
    Field(
        description="Optional UID for the new entry (RFC 5545 §3.8.4.7), chosen by the caller so that a repeated "
        "call cannot make a second copy: 1-200 characters, letters, digits and @ . _ + = - , starting with a "
        "letter or digit. Omit for a fresh one; the answer gives the UID either way.",
        pattern=UID_PATTERN,
        min_length=1,
        max_length=200,
    ),
]

_NOUN: dict[str, str] = {"VEVENT": "event", "VTODO": "task", "VJOURNAL": "journal entry"}
_GETTER: dict[str, str] = {"VEVENT": "get_event", "VTODO": "get_task", "VJOURNAL": "get_journal"}


def _exists(uid: str, cal: CalendarInfo) -> Conflict:
    return Conflict(
        f"uid: an entry with UID {quoted_name(uid)} already exists in {cal.path} (its id is "
        f"{quoted_name(uid)}); nothing was written. "
        "If this repeats a create whose answer was lost, that entry is the one it created."
    )


async def create_entry(
    app: App, cal: CalendarInfo, component: icalendar.Component, *, given: bool, told: Mapping[str, Any] | None = None
) -> CallToolResult:
    """Store a new entry (``If-None-Match: *``) in its own VCALENDAR and say what was created.

    Args:
        app: The tool's app handle.
        cal: The calendar to create it in.
        component: The VEVENT, VTODO or VJOURNAL, with its UID.
        given: Whether the caller chose the UID (then an existing entry with it is looked for first).
        told: More fields of the result (:class:`caldav_mcp.models.Written`): what the server does with the
            attendees (``attendees_told``, ``scheduling``).

    Raises:
        Conflict: an entry with this UID already exists (the message gives its id).
        BackendError: the server failed; the message says whether the entry was created, was not, or
            (only when the check failed too) that this is unknown and a repeat with the same uid is safe.
    """
    uid = str(component["UID"])
    kind: Component = component.name  # pyright: ignore[reportAssignmentType]
    if given:
        try:
            await app.client.find(cal, kind, uid)
        except NotFound:
            pass
        else:
            raise _exists(uid, cal)
    ical = new_calendar()
    ical.add_component(component)
    try:
        created = await app.client.create(cal, uid, serialise(ical))
    except Conflict:
        try:
            await app.client.find(cal, kind, uid)
        except (NotFound, BackendError):
            raise
        raise _exists(uid, cal) from None
    except BackendError as failure:
        return await _after_failure(app, cal, kind, uid, failure, told or {})
    return structured(Written(calendar=cal.path, uid=uid, id=uid, etag=created.etag, action="created", **(told or {})))


async def _after_failure(
    app: App, cal: CalendarInfo, kind: Component, uid: str, failure: BackendError, told: Mapping[str, Any]
) -> CallToolResult:
    """Find out whether a PUT that failed without a clear answer stored the entry."""
    again = quoted_name(uid, '"')  # the uid to pass again: fenced when of words
    try:
        stored = await app.client.find(cal, kind, uid)
    except NotFound:
        if loss_of(failure) == "timed out":
            raise BackendError(
                f"{failure} Checked afterwards: no {_NOUN[kind]} with UID {quoted_name(uid)} is in {cal.path} yet, "
                "but the server may still be storing it: whether it was created is NOT KNOWN. Check later with "
                f"{_GETTER[kind]} (uid {again}) or repeat the call with uid={again}: that creates it, or answers "
                "that it already exists; it can never make a second copy."
            ) from None
        raise BackendError(
            f"{failure} Checked afterwards: no {_NOUN[kind]} with UID {quoted_name(uid)} is in {cal.path}, so it "
            f"was NOT created. Repeating the call with uid={again} is safe: it can never make a second copy."
        ) from None
    except BackendError as check:
        raise BackendError(
            f"{failure} Whether it was stored could not be checked either ({check}). Repeat the call with "
            f"uid={again}: it creates the {_NOUN[kind]}, or answers that it already exists; it can never "
            "make a second copy."
        ) from None
    return structured(
        Written(
            calendar=cal.path,
            uid=uid,
            id=uid,
            etag=stored.etag,
            action="created",
            note=f"The server's answer to the write was lost ({failure}); reading back showed the "
            f"{_NOUN[kind]} was stored.",
            **told,
        )
    )
