"""The CalDAV backend's client: the reads of entries (:class:`caldav_mcp.reading.EntryReads`) and their writes.

:class:`CalDAVClient` stands on :class:`caldav_mcp.reading.EntryReads`, itself
on :class:`caldav_mcp.calendars.Calendars` (the account's calendars) and
:class:`caldav_mcp.wire.CalDAVWire`, the layer's client in caldav-mcp's words.
What is CalDAV in the writes stays here: the names of new entries and
iCalendar bytes. Every request, and every rule of trust, is the layer's
(:mod:`webdav_core`):

* create: ``PUT`` with ``If-None-Match: *`` (RFC 9110 §13.1.2);
* change: ``PUT`` with ``If-Match`` on the ETag of the version that was read;
* delete: ``DELETE`` with ``If-Match``;
* move: ``MOVE`` with ``Destination``, ``Overwrite: F`` and ``If-Match`` (RFC 4918 §9.9).

Where the server's listing carries no ETag, the entry is read again with GET
(data and ETag together) before a change; a server that gives none even
there is refused (:meth:`webdav_core.WebDavClient.bound_version`), so no
write is ever blind. A 412 becomes :class:`PreconditionFailed` and is never
retried; a DELETE answered 404 or 410 means the entry is already gone.
"""

from __future__ import annotations

import hashlib

from approval_core.serving.stored_text import quoted_name
from caldav_mcp.dav import CONTENT_TYPE, CalendarInfo, Component, Deletion, Resource
from caldav_mcp.errors import Conflict, PreconditionFailed
from caldav_mcp.reading import EntryReads

__all__ = ["CalDAVClient", "CalendarInfo", "Component", "Deletion", "Resource", "resource_name"]


def resource_name(uid: str) -> str:
    """The file name a new entry gets: ``<uid>.ics`` when the UID is plain, else a digest of it.

    A plain UID (letters, digits, ``@ . _ -``, not starting with a dot, at most
    200 characters) is kept readable; any other (slashes, ``%``, dots only...)
    becomes ``sha256(uid)[:40].ics``, so no UID can name a path outside the
    calendar.
    """
    if (
        0 < len(uid) <= 200
        and not uid.startswith(".")
        and all(c.isascii() and (c.isalnum() or c in "@._-") for c in uid)
    ):
        return f"{uid}.ics"
    return f"{hashlib.sha256(uid.encode()).hexdigest()[:40]}.ics"


class CalDAVClient(EntryReads):
    """Async CalDAV client for one account: the entries of its calendars.

    Calls are not serialized: one call held up by a slow server (for at most
    ``CALDAV_TIMEOUT`` per exchange) never makes another wait for it.

    Args:
        settings: The server's settings; missing ones raise :class:`NotConfigured`
            on first use, not at construction.
        headers: Extra HTTP headers for ``CALDAV_URL``'s origin (for example a
            trusted ``X-Remote-User`` behind an authenticating proxy).
    """

    # ------------------------------------------------------------------ writing

    async def create(self, cal: CalendarInfo, uid: str, data: str) -> Resource:
        """PUT a new resource named after ``uid`` with ``If-None-Match: *``.

        Raises:
            Conflict: a resource of that name already exists (412 on create).
        """
        href = f"{cal.path}{resource_name(uid)}"
        self._inside(href)
        try:
            with self.doing(f"creating in {cal.path}"):
                etag = await self.wire().store(href, data.encode(), CONTENT_TYPE, etag=None)
        except PreconditionFailed:
            raise Conflict(f"uid: an entry with UID {quoted_name(uid)} already exists in {cal.path}") from None
        return Resource(href, etag, data)

    async def replace(self, resource: Resource, data: str) -> Resource:
        """PUT ``data`` over ``resource`` with ``If-Match`` on the ETag it was read with (GET for it when none).

        Raises:
            PreconditionFailed: it changed since it was read.
            Conflict: 412 on an unchanged entry: one of the server's own preconditions refused the change.
            BackendError: the server gives no ETag for it at all; nothing was written.
        """
        wire = self.wire()
        self._inside(resource.href)
        with self.doing("writing the entry"):
            version = await wire.bound_version(resource.href, resource.etag, "writing the entry")
            try:
                etag = await wire.store(resource.href, data.encode(), CONTENT_TYPE, etag=version)
            except PreconditionFailed:
                if await wire.current_etag(resource.href) == version:
                    raise Conflict(
                        "the CalDAV server refused this change (412: one of its own preconditions failed, for "
                        "example what an attendee may change in a scheduled event). Nothing was written."
                    ) from None
                raise
        return Resource(resource.href, etag, data)

    async def delete(self, resource: Resource) -> Deletion:
        """DELETE ``resource`` with ``If-Match`` (GET for the ETag when the listing gave none).

        Returns:
            ``"deleted"``, or ``"already gone"`` when the server answers 404 or
            410 (someone else deleted it meanwhile).

        Raises:
            PreconditionFailed: 412, the entry changed since it was read.
            NotAllowed: 403, e.g. a read-only calendar.
            BackendError: the server gives no ETag for it at all; nothing was deleted.
        """
        self._inside(resource.href)
        with self.doing("deleting the entry"):
            deleted = await self.wire().delete(resource.href, resource.etag)
        return "deleted" if deleted else "already gone"

    async def move(self, resource: Resource, destination: CalendarInfo) -> str:
        """MOVE ``resource`` into ``destination`` without overwriting; returns the new href.

        Raises:
            PreconditionFailed: it changed since it was read.
            Conflict: ``destination`` already has an entry of that name.
        """
        name = resource.href.rsplit("/", 1)[-1]
        target = f"{destination.path}{name}"
        self._inside(resource.href)
        self._inside(target)
        try:
            with self.doing("moving the entry"):
                await self.wire().move(resource.href, target, resource.etag)
        except Conflict as exc:
            if exc.status != 412:
                raise
            raise Conflict(f"destination: {destination.path} already has an entry named {quoted_name(name)}") from None
        return target
