"""The CalDAV backend: the ``caldav`` library, called from worker threads; its reads and writes of entries.

:class:`CalDAVClient` stands on :class:`caldav_mcp.calendars.Calendars`
(discovery, the allowed calendars, write privileges), itself on
:class:`caldav_mcp.connection.Connection` (the library's client on a confined
session). Backend failures become caldav-mcp's exceptions in one place,
:mod:`caldav_mcp.dav`. It reads with REPORT queries, and writes with plain
WebDAV requests so that the exact bytes and preconditions are this server's
choice:

* create: ``PUT`` with ``If-None-Match: *`` (RFC 9110 §13.1.2);
* change: ``PUT`` with ``If-Match: <ETag>`` of the version that was read;
* delete: ``DELETE`` with ``If-Match``;
* move: ``MOVE`` with ``Destination``, ``Overwrite: F`` and ``If-Match``
  (RFC 4918 §9.9).

A 412 becomes :class:`PreconditionFailed` and is never retried; a 401 is
:class:`BadCredentials`, a 403 :class:`NotAllowed`; a DELETE answered 404 or
410 means the entry is already gone (not an error).

Ids stay home: calendars are addressed by their collection path
(``/willi/work/``), resolved by :func:`caldav_mcp.ids.canonical_path` (all
percent-decoding, dot-segment removal) and looked up among the calendars this
account has (and ``CALDAV_CALENDARS`` allows); every URL this client builds
(:meth:`CalDAVClient._url`) is a known calendar or one member of one, on
``CALDAV_URL``'s origin. Under the library, :class:`caldav_mcp.transport.ConfinedSession`
refuses any request to another origin, redirects included, bounds every answer
in bytes and time, and refuses DTDs.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit
from xml.sax.saxutils import escape as xml_escape

import anyio.to_thread
from lxml import etree  # pyright: ignore[reportAttributeAccessIssue]

from caldav_mcp.calendars import Calendars
from caldav_mcp.dav import (
    CALDAV_NS,
    CONTENT_TYPE,
    SAFE_XML_OPTIONS,
    CalendarInfo,
    Component,
    Deletion,
    Discovery,
    Resource,
    status_error,
    translate,
)
from caldav_mcp.errors import BackendError, Conflict, NotFound
from caldav_mcp.ical import decode_object

if TYPE_CHECKING:
    from caldav.collection import Calendar

__all__ = [
    "CalDAVClient",
    "CalendarInfo",
    "Component",
    "Deletion",
    "Discovery",
    "Resource",
    "resource_name",
    "translate",
]


def _uids(data: str) -> set[str]:
    """The UID values in iCalendar text (lines unfolded, RFC 5545 §3.1)."""
    unfolded = re.sub(r"\r?\n[ \t]", "", data)
    return {line[4:].strip() for line in unfolded.splitlines() if line.upper().startswith("UID:")}


def _time_range(start: dt.datetime, end: dt.datetime) -> str:
    stamp = "%Y%m%dT%H%M%SZ"
    return (
        f'<C:time-range start="{start.astimezone(dt.UTC).strftime(stamp)}" '
        f'end="{end.astimezone(dt.UTC).strftime(stamp)}"/>'
    )


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
    """Async facade over a synchronous ``DAVClient``; each call runs in a worker thread.

    Calls are not serialized: one call held up by a slow server (for at most
    ``CALDAV_TIMEOUT`` per request, see :mod:`caldav_mcp.transport`) never
    makes another wait for it.

    Args:
        settings: The server's settings; missing ones raise :class:`NotConfigured`
            on first use, not at construction.
        headers: Extra HTTP headers for every request (for example a trusted
            ``X-Remote-User`` behind an authenticating proxy).
    """

    # ------------------------------------------------------------------ reading

    def _calendar_object(self, cal: CalendarInfo) -> Calendar:
        return self._client().calendar(url=self._url(cal.path))

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
        inner = _time_range(start, end) if start is not None else ""
        for prop, needle in (text or {}).items():
            inner += _text_match(prop.upper(), needle, "i;ascii-casemap")
        return await self._run(f"querying {cal.path}", lambda: self._objects(cal, component, inner))

    async def text_query(
        self, cal: CalendarInfo, prop: str, needle: str, start: dt.datetime, end: dt.datetime
    ) -> list[Resource]:
        """VEVENTs in a window whose ``prop`` contains ``needle`` (RFC 4791 §9.7.5 text-match, i;ascii-casemap).

        Raises:
            BackendError: the server does not answer the query (the caller may fall back).
        """
        inner = _time_range(start, end) + _text_match(prop, needle, "i;ascii-casemap")
        return await self._run(f"searching {cal.path}", lambda: self._objects(cal, "VEVENT", inner))

    async def find(self, cal: CalendarInfo, component: Component, uid: str, *, field: str = "uid") -> Resource:
        """The resource holding ``uid`` in ``cal``.

        Raises:
            NotFound: no entry of that type with that UID in the calendar.
            BackendError: the entry holding it cannot be decoded (names its path).
        """

        def run() -> Resource | None:
            candidates = self._objects(cal, component, _text_match("UID", uid, "i;octet"))
            unreadable: Resource | None = None
            for resource in candidates:
                if resource.problem:
                    unreadable = unreadable or resource
                elif uid in _uids(resource.data):
                    return resource
            if unreadable is not None and len(candidates) == 1:
                raise BackendError(f"{field}: {unreadable.problem}")
            return None

        resource = await self._run(f"looking up {uid!r}", run)
        if resource is None:
            kind = {"VEVENT": "event", "VTODO": "task", "VJOURNAL": "journal entry"}[component]
            raise NotFound(f"{field}: no {kind} with UID {uid!r} in {cal.path}")
        return resource

    # ------------------------------------------------------------------ bytes before text

    def _objects(self, cal: CalendarInfo, component: Component, inner: str) -> list[Resource]:
        """The objects of ``component`` in ``cal`` matching ``inner`` (filter XML).

        Reads a calendar-query REPORT with calendar-data. When its multistatus
        cannot be parsed (a server that folded a line inside a multi-byte UTF-8
        sequence, RFC 5545 §3.1, makes the whole XML body invalid UTF-8), the
        same query is repeated for hrefs and ETags only and each object is
        fetched with GET, its bytes unfolded before decoding
        (:func:`caldav_mcp.ical.decode_object`). An object that still cannot
        be decoded is returned with ``problem`` naming it, so that a listing
        keeps the rest.

        Every href in the answer goes through :meth:`_entry_href` (decoded
        once, directly inside ``cal``) before it is used or returned.

        Raises:
            BackendError: the REPORT failed (status, or an answer that is not a
                multistatus), or it named an entry outside ``cal``.
        """
        url = self._url(cal.path)
        from caldav_mcp.transport import MalformedXML  # here: it loads httpcore2 (startup time)

        try:
            rows = self._report(url, component, inner, with_data=True)
        except (MalformedXML, etree.XMLSyntaxError):
            rows = self._report(url, component, inner, with_data=False)
        found: list[Resource] = []
        for raw, etag, data in rows:
            href = self._entry_href(raw, cal)
            found.append(Resource(href, etag, data) if data is not None else self._get_object(href, etag))
        return found

    def _report(self, url: str, component: Component, inner: str, *, with_data: bool) -> list[tuple[str, Any, Any]]:
        data = "<C:calendar-data/>" if with_data else ""
        body = (
            '<?xml version="1.0" encoding="utf-8"?>'
            '<C:calendar-query xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">'
            f"<D:prop><D:getetag/>{data}</D:prop>"
            f'<C:filter><C:comp-filter name="VCALENDAR"><C:comp-filter name="{component}">{inner}'
            "</C:comp-filter></C:comp-filter></C:filter></C:calendar-query>"
        )
        answer = self._send("REPORT", url, body, {"Depth": "1", "Content-Type": "application/xml; charset=utf-8"})
        if answer.status_code != 207:
            raise status_error("querying", answer.status_code)
        rows: list[tuple[str, Any, Any]] = []
        # One response element at a time, each dropped once read: the tree never holds the whole answer.
        for _, item in etree.iterparse(
            io.BytesIO(answer.content), events=("end",), tag="{DAV:}response", **SAFE_XML_OPTIONS
        ):
            href = item.findtext("{DAV:}href")
            if href and not urlsplit(href).path.endswith("/"):  # not the collection itself (or a sub-collection)
                rows.append(
                    (href, item.findtext(".//{DAV:}getetag"), item.findtext(f".//{{{CALDAV_NS}}}calendar-data"))
                )
            item.clear(keep_tail=True)
            while item.getprevious() is not None:
                del item.getparent()[0]
        return rows

    def _get_object(self, href: str, etag: str | None) -> Resource:
        """GET one object and decode its bytes (unfolded first); ``problem`` set when they cannot be."""
        answer = self._send("GET", self._url(href), "", {"Accept": "text/calendar"})
        if answer.status_code >= 300:
            raise status_error(f"reading {href}", answer.status_code)
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

        def run() -> str | None:
            try:
                answer: Any = self._calendar_object(cal).freebusy_request(start, end)  # typed as value or coroutine
                return str(answer.data)
            except Exception:
                return None

        return await anyio.to_thread.run_sync(run)

    # ------------------------------------------------------------------ writing

    async def create(self, cal: CalendarInfo, uid: str, data: str) -> Resource:
        """PUT a new resource named after ``uid`` with ``If-None-Match: *``.

        Raises:
            Conflict: a resource of that name already exists (412 on create).
        """
        href = f"{cal.path}{resource_name(uid)}"

        def run() -> Resource:
            response = self._client().request(
                self._url(href), "PUT", data, {"If-None-Match": "*", "Content-Type": CONTENT_TYPE}
            )
            if response.status == 412:
                raise Conflict(f"uid: an entry with UID {uid!r} already exists in {cal.path}")
            if response.status >= 300:
                raise status_error(f"creating in {cal.path}", response.status)
            return Resource(href, response.headers.get("ETag"), data)

        return await self._run(f"creating in {cal.path}", run)

    async def replace(self, resource: Resource, data: str) -> Resource:
        """PUT ``data`` over ``resource`` with ``If-Match`` on the ETag it was read with."""
        headers = {"Content-Type": CONTENT_TYPE}
        if resource.etag:
            headers["If-Match"] = resource.etag

        def run() -> Resource:
            response = self._client().request(self._url(resource.href), "PUT", data, headers)
            if response.status == 412 and resource.etag:
                current = self._client().request(self._url(resource.href), "HEAD", "", {})
                if current.headers.get("ETag") == resource.etag:
                    raise Conflict(
                        "the CalDAV server refused this change (412: one of its own preconditions failed, for "
                        "example what an attendee may change in a scheduled event). Nothing was written."
                    )
            if response.status >= 300:
                raise status_error("writing the entry", response.status)
            return Resource(resource.href, response.headers.get("ETag"), data)

        return await self._run("writing the entry", run)

    async def delete(self, resource: Resource) -> Deletion:
        """DELETE ``resource`` with ``If-Match``.

        Returns:
            ``"deleted"``, or ``"already gone"`` when the server answers 404 or
            410 (someone else deleted it meanwhile; Radicale and Xandikos both
            answer 404 to a DELETE with If-Match on a missing entry).

        Raises:
            PreconditionFailed: 412, the entry changed since it was read.
            NotAllowed: 403, e.g. a read-only calendar.
        """
        headers = {"If-Match": resource.etag} if resource.etag else {}

        def run() -> Deletion:
            response = self._client().request(self._url(resource.href), "DELETE", "", headers)
            if response.status in {404, 410}:
                return "already gone"
            if response.status >= 300:
                raise status_error("deleting the entry", response.status)
            return "deleted"

        return await self._run("deleting the entry", run)

    async def move(self, resource: Resource, destination: CalendarInfo) -> str:
        """MOVE ``resource`` into ``destination`` without overwriting; returns the new href."""
        name = resource.href.rsplit("/", 1)[-1]
        target = f"{destination.path}{name}"
        headers = {"Destination": self._url(target), "Overwrite": "F"}
        if resource.etag:
            headers["If-Match"] = resource.etag

        def run() -> str:
            if resource.etag:
                # Some servers (Radicale 3.9) ignore If-Match on MOVE: compare the ETag first, so that an
                # entry changed since it was read is never moved on their account either.
                current = self._client().request(self._url(resource.href), "HEAD", "", {})
                if current.status >= 300 or current.headers.get("ETag") != resource.etag:
                    raise status_error("moving the entry", current.status if current.status >= 300 else 412)
            response = self._client().request(self._url(resource.href), "MOVE", "", headers)
            if response.status == 412 and "If-Match" in headers:
                # Either the entry changed, or the destination holds that name: tell them apart.
                current = self._client().request(self._url(resource.href), "HEAD", "", {})
                if current.headers.get("ETag") == resource.etag:
                    raise Conflict(f"destination: {destination.path} already has an entry named {name!r}")
            if response.status >= 300:
                raise status_error("moving the entry", response.status)
            return target

        return await self._run("moving the entry", run)
