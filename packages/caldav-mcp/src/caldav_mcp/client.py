"""The CalDAV backend's reads and writes of entries, on the family's WebDAV layer.

:class:`CalDAVClient` stands on :class:`caldav_mcp.calendars.Calendars` (the
account's calendars), itself on :class:`caldav_mcp.wire.CalDAVWire`, the
layer's client in caldav-mcp's words. What is CalDAV stays here: the
calendar-query filters (RFC 4791 §7.8, §9.7), the names of new entries, and
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

Every href a server names in an answer must be an entry directly inside the
calendar that was asked (:meth:`webdav_core.WebDavClient.member_in`, decoded
exactly once); one that is not fails the query, so nothing is ever read or
written elsewhere.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit
from xml.sax.saxutils import escape as xml_escape

from caldav_mcp.calendars import Calendars
from caldav_mcp.components import decode_object
from caldav_mcp.dav import CONTENT_TYPE, CalendarInfo, Component, Deletion, Resource
from caldav_mcp.errors import BackendError, CalDAVToolError, Conflict, NotFound, PreconditionFailed

__all__ = ["CalDAVClient", "CalendarInfo", "Component", "Deletion", "Resource", "resource_name"]

_CALDAV = "urn:ietf:params:xml:ns:caldav"


def _uids(data: str) -> set[str]:
    """The UID values in iCalendar text (lines unfolded, RFC 5545 §3.1)."""
    unfolded = re.sub(r"\r?\n[ \t]", "", data)
    return {line[4:].strip() for line in unfolded.splitlines() if line.upper().startswith("UID:")}


def _text_match(prop: str, needle: str, collation: str) -> str:
    return (
        f'<C:prop-filter name="{xml_escape(prop)}"><C:text-match collation="{collation}">{xml_escape(needle)}'
        "</C:text-match></C:prop-filter>"
    )


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


class CalDAVClient(Calendars):
    """Async CalDAV client for one account: the entries of its calendars.

    Calls are not serialized: one call held up by a slow server (for at most
    ``CALDAV_TIMEOUT`` per exchange) never makes another wait for it.

    Args:
        settings: The server's settings; missing ones raise :class:`NotConfigured`
            on first use, not at construction.
        headers: Extra HTTP headers for ``CALDAV_URL``'s origin (for example a
            trusted ``X-Remote-User`` behind an authenticating proxy).
    """

    # ------------------------------------------------------------------ reading

    async def query(
        self,
        cal: CalendarInfo,
        component: Component,
        *,
        start: Any = None,
        end: Any = None,
        text: Mapping[str, str] | None = None,
    ) -> list[Resource]:
        """Calendar-query REPORT (RFC 4791 §7.8) for one component type.

        Args:
            cal: The calendar.
            component: VEVENT, VTODO or VJOURNAL.
            start: Time-range start (aware datetime), with ``end``.
            end: Time-range end (aware datetime).
            text: One property → substring to match server-side (text-match).

        Returns:
            Every matching object; one whose bytes cannot be decoded comes
            with ``problem`` set (see :meth:`_objects`), the others are complete.
        """
        from caldav_mcp.wire import time_range

        inner = time_range(start, end) if start is not None else ""
        for prop, needle in (text or {}).items():
            inner += _text_match(prop.upper(), needle, "i;ascii-casemap")
        with self.doing(f"querying {cal.path}"):
            return await self._objects(cal, component, inner)

    async def text_query(
        self, cal: CalendarInfo, prop: str, needle: str, start: dt.datetime, end: dt.datetime
    ) -> list[Resource]:
        """VEVENTs in a window whose ``prop`` contains ``needle`` (RFC 4791 §9.7.5 text-match, i;ascii-casemap).

        Raises:
            BackendError: the server does not answer the query (the caller may fall back).
        """
        from caldav_mcp.wire import time_range

        inner = time_range(start, end) + _text_match(prop, needle, "i;ascii-casemap")
        with self.doing(f"searching {cal.path}"):
            return await self._objects(cal, "VEVENT", inner)

    async def find(self, cal: CalendarInfo, component: Component, uid: str, *, field: str = "uid") -> Resource:
        """The resource holding ``uid`` in ``cal``, with the ETag of exactly the bytes read.

        Where the query's answer carries no ETag, the entry is read again with
        GET, whose ETag belongs to the data it answers with.

        Raises:
            NotFound: no entry of that type with that UID in the calendar.
            BackendError: the entry holding it cannot be decoded (names its path).
        """
        with self.doing(f"looking up {uid!r}"):
            candidates = await self._objects(cal, component, _text_match("UID", uid, "i;octet"))
            unreadable: Resource | None = None
            for resource in candidates:
                if resource.problem:
                    unreadable = unreadable or resource
                elif uid in _uids(resource.data):
                    return resource if resource.etag else await self._get_object(resource.href, None)
            if unreadable is not None and len(candidates) == 1:
                raise BackendError(f"{field}: {unreadable.problem}")
        kind = {"VEVENT": "event", "VTODO": "task", "VJOURNAL": "journal entry"}[component]
        raise NotFound(f"{field}: no {kind} with UID {uid!r} in {cal.path}")

    # ------------------------------------------------------------------ bytes before text

    async def _objects(self, cal: CalendarInfo, component: Component, inner: str) -> list[Resource]:
        """The objects of ``component`` in ``cal`` matching ``inner`` (filter XML).

        Reads a calendar-query REPORT with calendar-data. When its multistatus
        cannot be parsed (a server that folded a line inside a multi-byte UTF-8
        sequence, RFC 5545 §3.1, makes the whole XML body invalid UTF-8), the
        same query is repeated for hrefs and ETags only and each object is
        fetched with GET, its bytes unfolded before decoding
        (:func:`caldav_mcp.components.decode_object`). An object that still
        cannot be decoded is returned with ``problem`` naming it, so that a
        listing keeps the rest.

        Raises:
            BackendError: the REPORT failed (status, or an answer that is not a
                multistatus), or it named an entry not directly inside ``cal``.
        """
        from caldav_mcp.wire import calendar_query
        from webdav_core import parse_multistatus
        from webdav_core.xml import DAV

        wire = self.wire()
        what = f"REPORT {cal.path}"
        body = await wire.report(cal.path, calendar_query(component, inner, with_data=True), what)
        try:
            answer = parse_multistatus(body)
        except ValueError as exc:
            if "malformed XML" not in str(exc):
                raise BackendError(f"{what}: the CalDAV server's answer could not be read: {exc}.") from None
            body = await wire.report(cal.path, calendar_query(component, inner, with_data=False), what)
            try:
                answer = parse_multistatus(body)
            except ValueError as again:
                raise BackendError(f"{what}: the CalDAV server's answer could not be read: {again}.") from None
        found: list[Resource] = []
        for response in answer.responses:
            raw = response.raw or response.href
            if response.status == 404 or urlsplit(raw).path.endswith("/"):
                continue  # not an entry: the collection itself, or a sub-collection
            href = wire.member_in(cal.path, raw)
            if href is None:
                raise BackendError(
                    f"the CalDAV server answered a query on {cal.path} with an entry that is not directly inside "
                    "it; nothing was sent there"
                )
            etag = response.text(DAV, "getetag")
            data = response.props.get(f"{{{_CALDAV}}}calendar-data")
            if data is not None and data.text is not None:
                found.append(Resource(href, etag, data.text))
            else:
                found.append(await self._get_object(href, etag))
        return found

    async def _get_object(self, href: str, etag: str | None) -> Resource:
        """GET one object and decode its bytes (unfolded first); ``problem`` set when they cannot be."""
        self._inside(href)
        answer = await self.wire().fetch(href)
        etag = answer.headers.get("ETag") or etag
        try:
            return Resource(href, etag, decode_object(answer.content))
        except UnicodeDecodeError as exc:
            return Resource(
                href,
                etag,
                "",
                problem=f"the stored entry {href} is not UTF-8 text even after unfolding its lines by octets "
                f"(RFC 5545 §3.1; byte {exc.start} of {len(answer.content)}), so it cannot be read",
            )

    async def freebusy(self, cal: CalendarInfo, start: Any, end: Any) -> str | None:
        """The server's free-busy REPORT (RFC 4791 §7.10) as iCalendar text, or None where it fails."""
        try:
            with self.doing(f"free-busy of {cal.path}"):
                return await self.wire().freebusy(cal.path, start, end)
        except CalDAVToolError:
            return None

    # ------------------------------------------------------------------ writing

    def _inside(self, href: str) -> None:
        """Refuse a path that is not an allowed calendar or an entry directly inside one (nothing is sent)."""
        if not self.known(href):
            raise BackendError(
                "the CalDAV server named an entry outside the calendars this server may use; nothing was sent there"
            )

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
            raise Conflict(f"uid: an entry with UID {uid!r} already exists in {cal.path}") from None
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
            raise Conflict(f"destination: {destination.path} already has an entry named {name!r}") from None
        return target
