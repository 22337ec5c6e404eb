"""The CalDAV backend's reads of entries: calendar-query and calendar-multiget REPORTs, and GET.

:class:`EntryReads` stands on :class:`caldav_mcp.calendars.Calendars` (the
account's calendars); :class:`caldav_mcp.client.CalDAVClient` adds the writes.
What is CalDAV stays here: the calendar-query filters (RFC 4791 §7.8, §9.7)
and iCalendar bytes before text (RFC 5545 §3.1); every request, and every rule
of trust, is the layer's (:mod:`webdav_core`).

Every href a server names in an answer must be an entry directly inside the
calendar that was asked (:meth:`webdav_core.WebDavClient.member_in`, decoded
exactly once); one that is not fails the query, so nothing is ever read or
written elsewhere. A query the server fails as a whole (one stored entry it
cannot send can make it) is answered entry by entry, and the entry it cannot
send is named, never the whole listing lost.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit
from xml.sax.saxutils import escape as xml_escape

from approval_core.serving.stored_text import quoted_name, unmarked
from caldav_mcp.calendars import Calendars
from caldav_mcp.components import decode_object
from caldav_mcp.dav import CalendarInfo, Component, Resource
from caldav_mcp.errors import BackendError, CalDAVToolError, NotFound

__all__ = ["MULTIGET_BATCH", "EntryReads"]

_CALDAV = "urn:ietf:params:xml:ns:caldav"
MULTIGET_BATCH = 50
"""Entries per calendar-multiget REPORT when a calendar is read entry by entry (:meth:`EntryReads._listed`)."""


def _uids(data: str) -> set[str]:
    """The UID values in iCalendar text (lines unfolded, RFC 5545 §3.1)."""
    unfolded = re.sub(r"\r?\n[ \t]", "", data)
    return {line[4:].strip() for line in unfolded.splitlines() if line.upper().startswith("UID:")}


def _text_match(prop: str, needle: str, collation: str, param: str | None = None) -> str:
    """A ``prop-filter`` on ``prop`` with a text-match (RFC 4791 §9.7.5), in its parameter ``param`` if given."""
    match = f'<C:text-match collation="{collation}">{xml_escape(needle)}</C:text-match>'
    if param is not None:
        match = f'<C:param-filter name="{xml_escape(param)}">{match}</C:param-filter>'
    return f'<C:prop-filter name="{xml_escape(prop)}">{match}</C:prop-filter>'


def _holds(data: str, component: Component) -> bool:
    """Whether iCalendar text holds a ``component`` (a whole-calendar read also lists entries of other types)."""
    return f"BEGIN:{component}" in data.upper()


class EntryReads(Calendars):
    """The reads of entries in the account's calendars (the writes are :class:`caldav_mcp.client.CalDAVClient`'s)."""

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
            Every matching object; one whose bytes cannot be decoded, or that
            the server cannot send, comes with ``problem`` set (see
            :meth:`_objects`), the others are complete. Where the server fails
            the query as a whole, every entry of ``component`` in the calendar
            is returned (see :meth:`_listed`): callers filter by window and text
            again, as they do anyway.
        """
        from caldav_mcp.wire import time_range

        inner = time_range(start, end) if start is not None else ""
        for prop, needle in (text or {}).items():
            inner += _text_match(prop.upper(), needle, "i;ascii-casemap")
        with self.doing(f"querying {cal.path}"):
            return await self._objects(cal, component, inner, whole=True)

    async def text_query(
        self, cal: CalendarInfo, prop: str, needle: str, start: dt.datetime, end: dt.datetime, param: str | None = None
    ) -> list[Resource]:
        """VEVENTs in a window whose ``prop`` contains ``needle`` (RFC 4791 §9.7.5 text-match, i;ascii-casemap).

        With ``param``, the text is matched in that parameter of ``prop`` (a
        param-filter, RFC 4791 §9.7.3: an ATTENDEE's CN) instead of its value.

        Raises:
            BackendError: the server does not answer the query (the caller may fall back).
        """
        from caldav_mcp.wire import time_range

        inner = time_range(start, end) + _text_match(prop, needle, "i;ascii-casemap", param)
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
        with self.doing(f"looking up {quoted_name(uid)}"):
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
        raise NotFound(f"{field}: no {kind} with UID {quoted_name(uid)} in {cal.path}")

    # ------------------------------------------------------------------ bytes before text

    async def _objects(
        self, cal: CalendarInfo, component: Component, inner: str, *, whole: bool = False
    ) -> list[Resource]:
        """The objects of ``component`` in ``cal`` matching ``inner`` (filter XML).

        Reads a calendar-query REPORT with calendar-data. When its multistatus
        cannot be parsed (a server that folded a line inside a multi-byte UTF-8
        sequence, RFC 5545 §3.1, makes the whole XML body invalid UTF-8), the
        same query is repeated for hrefs and ETags only and each object is
        fetched with GET, its bytes unfolded before decoding
        (:func:`caldav_mcp.components.decode_object`). An object that still
        cannot be decoded is returned with ``problem`` naming it, so that a
        listing keeps the rest. With ``whole``, a query the server fails as a
        whole (:func:`webdav_core.batches.failed_whole`: a 5xx, or an answer that
        cannot be read) is answered by :meth:`_listed` instead.

        Raises:
            BackendError: the REPORT failed (status, or an answer that is not a
                multistatus), or it named an entry not directly inside ``cal``.
        """
        from webdav_core.batches import failed_whole

        try:
            return await self._queried(cal, component, inner)
        except BackendError as exc:
            if not whole or not failed_whole(exc):
                raise
            return await self._listed(cal, component, exc)

    async def _queried(self, cal: CalendarInfo, component: Component, inner: str) -> list[Resource]:
        from caldav_mcp.wire import calendar_query

        wire = self.wire()
        what = f"REPORT {cal.path}"
        answer = await wire.report(cal.path, calendar_query(component, inner, with_data=True), what)
        try:
            return await self._resources(cal, answer.content)
        except ValueError as exc:
            if "malformed XML" not in str(exc):
                raise BackendError(
                    f"{what}: the CalDAV server's answer could not be read: {exc}.", answer.status_code
                ) from None
        answer = await wire.report(cal.path, calendar_query(component, inner, with_data=False), what)
        try:
            return await self._resources(cal, answer.content)
        except ValueError as again:
            raise BackendError(
                f"{what}: the CalDAV server's answer could not be read: {again}.", answer.status_code
            ) from None

    async def _listed(self, cal: CalendarInfo, component: Component, failure: BackendError) -> list[Resource]:
        """Every ``component`` entry of ``cal``, for a query the server failed as a whole (one stored entry can).

        The calendar's members are listed (PROPFIND depth 1) and read by
        calendar-multiget (RFC 4791 §7.9) in batches; a batch the server fails
        is read one entry at a time by GET (:func:`webdav_core.batches.read_in_batches`).
        An entry the server cannot send even alone comes with ``problem`` naming
        it and why, so a listing names it under ``unreadable`` and keeps the rest.
        """
        from caldav_mcp.wire import PROFILE, log
        from webdav_core.batches import read_in_batches

        log.warning("the server failed a query of %s as a whole (%s); reading its entries one batch at a time",
                    cal.path, failure)  # fmt: skip
        wire = self.wire()
        etags = dict(await wire.list_etags(cal.path))

        async def many(batch: list[str]) -> list[Resource]:
            from caldav_mcp.wire import calendar_multiget

            answer = await wire.report(cal.path, calendar_multiget(batch), f"REPORT {cal.path}")
            try:
                return await self._resources(cal, answer.content, set(batch))
            except ValueError as exc:
                what = f"REPORT {cal.path}: the CalDAV server's answer could not be read: {exc}."
                raise BackendError(what, answer.status_code) from None

        read = await read_in_batches(
            list(etags),
            many,
            lambda href: self._get_object(href, etags[href]),
            errors=PROFILE.errors,
            size=MULTIGET_BATCH,
            where=cal.path,
        )
        found = [r for r in read.found if r.problem or _holds(r.data, component)]
        return found + [
            Resource(
                href, etags[href], "", problem=f"the CalDAV server cannot send the stored entry {href}: {unmarked(why)}"
            )
            for href, why in read.failed
        ]

    async def _resources(self, cal: CalendarInfo, body: bytes, asked: set[str] | None = None) -> list[Resource]:
        """The entries a REPORT's multistatus names (and, for a multiget, that were ``asked``), each once (the first).

        Raises:
            ValueError: the body is not a readable multistatus.
            BackendError: it names an entry not directly inside ``cal``.
        """
        from webdav_core import parse_multistatus
        from webdav_core.xml import DAV

        wire = self.wire()
        answer = parse_multistatus(body)
        found: list[Resource] = []
        named: set[str] = set()
        for response in answer.responses:
            raw = response.raw or response.href
            if response.status == 404 or urlsplit(raw).path.endswith("/"):
                continue  # not an entry: the collection itself, a sub-collection, or gone meanwhile
            href = wire.member_in(cal.path, raw)
            if href is None:
                raise BackendError(
                    f"the CalDAV server answered a query on {cal.path} with an entry that is not directly inside "
                    "it; nothing was sent there"
                )
            if (asked is not None and href not in asked) or href in named:
                continue  # a multiget's answer names only what was asked, and an answer each entry once
            named.add(href)
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

    def _inside(self, href: str) -> None:
        """Refuse a path that is not an allowed calendar or an entry directly inside one (nothing is sent)."""
        if not self.known(href):
            raise BackendError(
                "the CalDAV server named an entry outside the calendars this server may use; nothing was sent there"
            )
