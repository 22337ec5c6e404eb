"""caldav-mcp on the family's WebDAV layer: its :data:`PROFILE`, and the CalDAV requests the layer does not know.

Everything HTTP and every rule of trust (one origin, credentials only there
and only when asked, redirects, deadlines, size limits, XML without DTDs, ids
and hrefs confined, RFC 6764 discovery, RFC 3744 privileges, statuses into
errors, If-Match on every change) lives in :mod:`webdav_core`.
:class:`CalDAVWire` adds only what is CalDAV (RFC 4791): the calendars of a
home, calendar-query, calendar-multiget and free-busy-query REPORTs, and the scheduling
addresses of RFC 6638. Imported at the first request (it loads the HTTP
stack), never at start-up.
"""

from __future__ import annotations

import datetime as dt
import logging
from xml.sax.saxutils import escape as xml_escape

import httpx2 as httpx

from approval_core import before_send
from approval_core.serving.stored_text import name_in_text, quoted_name
from caldav_mcp import errors
from caldav_mcp.dav import CalendarInfo
from caldav_mcp.settings import CalDAVSettings
from webdav_core import Answer, Profile, WebDavClient, account_of, errors_of, folder
from webdav_core.profile import CALDAV_DIALECT
from webdav_core.xml import CALDAV, CS, DAV, HEADER, DavResponse, propfind

__all__ = ["ALL_COMPONENTS", "PROFILE", "CalDAVWire", "calendar_multiget", "calendar_query", "time_range"]

log = logging.getLogger("caldav_mcp")

PROFILE = Profile.of(
    CALDAV_DIALECT,
    program="caldav-mcp",
    prefix="CALDAV",
    errors=errors_of(errors, unauthenticated=errors.BadCredentials, forbidden=errors.NotAllowed),
    before_send=before_send,  # APPROVAL_PROFILE=every-write asks before each changing request
    quote=quoted_name,  # an error quotes a path or media type of words fenced
    name=name_in_text,
)
"""caldav-mcp's words, settings and exceptions, for the WebDAV layer."""

ALL_COMPONENTS = ("VEVENT", "VTODO", "VJOURNAL")
"""What a calendar that does not list its supported components is taken to accept (RFC 4791 §5.2.3)."""
_CALENDAR_PROPS = [
    (DAV, "resourcetype"),
    (DAV, "displayname"),
    (CALDAV, "supported-calendar-component-set"),
    (CS, "getctag"),  # each calendar's version, for a listing that follows (WebDavClient.versions)
    (DAV, "getlastmodified"),  # and its last change, which tells cheaply whether it changed during that listing
]
_STAMP = "%Y%m%dT%H%M%SZ"


def time_range(start: dt.datetime, end: dt.datetime) -> str:
    """A ``C:time-range`` element (RFC 4791 §9.9) for aware ``start`` and ``end``, in UTC."""
    return (
        f'<C:time-range start="{start.astimezone(dt.UTC).strftime(_STAMP)}" '
        f'end="{end.astimezone(dt.UTC).strftime(_STAMP)}"/>'
    )


def calendar_query(component: str, inner: str, *, with_data: bool) -> str:
    """A calendar-query REPORT body (RFC 4791 §7.8) for ``component`` with filter XML ``inner``.

    Args:
        component: VEVENT, VTODO or VJOURNAL.
        inner: The elements inside the component's ``comp-filter`` (time-range, prop-filter).
        with_data: Ask for ``calendar-data`` besides ``getetag``.
    """
    data = "<C:calendar-data/>" if with_data else ""
    return (
        f'{HEADER}<C:calendar-query xmlns:D="DAV:" xmlns:C="{CALDAV}">'
        f"<D:prop><D:getetag/>{data}</D:prop>"
        f'<C:filter><C:comp-filter name="VCALENDAR"><C:comp-filter name="{xml_escape(component)}">{inner}'
        "</C:comp-filter></C:comp-filter></C:filter></C:calendar-query>"
    )


def calendar_multiget(hrefs: list[str]) -> str:
    """A calendar-multiget REPORT body (RFC 4791 §7.9) asking ``getetag`` and ``calendar-data`` of ``hrefs``."""
    refs = "".join(f"<D:href>{xml_escape(href)}</D:href>" for href in hrefs)
    return (
        f'{HEADER}<C:calendar-multiget xmlns:D="DAV:" xmlns:C="{CALDAV}">'
        f"<D:prop><D:getetag/><C:calendar-data/></D:prop>{refs}</C:calendar-multiget>"
    )


def _calendar(response: DavResponse, path: str) -> CalendarInfo:
    components = tuple(
        name
        for node in response.props.get(f"{{{CALDAV}}}supported-calendar-component-set", [])
        if (name := (node.get("name") or "").upper())
    )
    name = response.text(DAV, "displayname") or path.rstrip("/").rsplit("/", 1)[-1]
    return CalendarInfo(path, name, components or ALL_COMPONENTS)


class CalDAVWire(WebDavClient):
    """The account's WebDAV client, in caldav-mcp's words, with the CalDAV requests.

    Args:
        settings: The server's settings (``settings.url`` set).
        headers: Headers for ``CALDAV_URL``'s origin only (a trusted ``X-Remote-User``).
        transport: An httpx transport (tests of fault handling only).
    """

    member_description = "an entry directly inside the calendar that was asked"

    def __init__(
        self, settings: CalDAVSettings, headers: dict[str, str], transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        assert settings.url is not None
        super().__init__(settings.url, PROFILE, credentials=headers, transport=transport, **account_of(settings))

    def calendar_in(self, home: str, raw: str) -> str | None:
        """The canonical path of a calendar a server listed in ``home``, or None (logged) when it is not one.

        A calendar is a collection directly inside the home set (RFC 4791 §6.2.1):
        one segment below ``home`` on the configured origin, by the rules of member
        hrefs (:func:`webdav_core.member_in`). ``/etc/``, another account's
        ``/other/cal/``, a dot segment, another host: left out, never asked.
        """
        path = self.member_in(home, raw.rstrip("/"))
        return folder(path) if path is not None else None

    async def calendars_in(self, home: str) -> list[CalendarInfo]:
        """The calendars directly inside ``home`` (PROPFIND depth 1, RFC 4918 §9.1), confined to it."""
        what = f"list {home}"
        answer = await self.session.send(
            "PROPFIND", home, body=propfind(_CALENDAR_PROPS), headers={"Depth": "1"}, what=what
        )
        found: list[CalendarInfo] = []
        for response in self.session.parsed(answer, what).responses:
            if not response.has_child(DAV, "resourcetype", PROFILE.collection_type):
                continue
            path = self.calendar_in(home, response.raw or response.href)
            if path is not None:
                found.append(_calendar(response, path))
                self.versions.note(path, response, answer.headers.get("Date"))
        return found

    async def calendar_at(self, path: str) -> CalendarInfo | None:
        """The calendar at ``path`` itself (PROPFIND depth 0), or None when it is not a calendar."""
        what = f"read {path}"
        answer = await self.session.send(
            "PROPFIND", path, body=propfind(_CALENDAR_PROPS), headers={"Depth": "0"}, what=what
        )
        for response in self.session.parsed(answer, what).responses:
            if response.has_child(DAV, "resourcetype", PROFILE.collection_type):
                self.versions.note(path, response, answer.headers.get("Date"))
                return _calendar(response, path)
        return None

    async def report(self, path: str, body: str, what: str) -> Answer:
        """A REPORT with ``Depth: 1`` on ``path``: its whole 2xx answer (a multistatus, not yet parsed)."""
        return await self._send("REPORT", path, body=body, headers={"Depth": "1"}, what=what)

    async def freebusy(self, path: str, start: dt.datetime, end: dt.datetime) -> str | None:
        """The server's free-busy-query REPORT (RFC 4791 §7.10) on ``path``: its VFREEBUSY text, or None."""
        body = f'{HEADER}<C:free-busy-query xmlns:C="{CALDAV}">{time_range(start, end)}</C:free-busy-query>'
        answer = await self.session.send(
            "REPORT", path, body=body, headers={"Depth": "1"}, what=f"free-busy {path}", xml_answer=False
        )
        text = answer.text
        return text if text.lstrip().startswith("BEGIN:VCALENDAR") else None

    async def user_addresses(self, principal: str) -> list[str]:
        """The principal's ``calendar-user-address-set`` (RFC 6638 §2.4.1), as the server lists them."""
        body = propfind([(CALDAV, "calendar-user-address-set")])
        ms = await self._multistatus("PROPFIND", principal, body, "0", f"read {principal}")
        return [href for r in ms.responses for href in r.raw_hrefs(CALDAV, "calendar-user-address-set")]
