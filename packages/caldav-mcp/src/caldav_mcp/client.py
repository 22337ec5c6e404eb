"""The CalDAV backend: the ``caldav`` library, called from worker threads.

This module is the one place where backend failures become caldav-mcp's
exceptions (:mod:`caldav_mcp.errors`). It reads with the library's discovery
and REPORT queries, and writes with plain WebDAV requests so that the exact
bytes and preconditions are this server's choice:

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

import contextlib
import datetime as dt
import hashlib
import io
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar
from urllib.parse import urljoin, urlsplit
from xml.sax.saxutils import escape as xml_escape

import anyio.to_thread
from lxml import etree  # pyright: ignore[reportAttributeAccessIssue]

from caldav_mcp.errors import (
    BackendError,
    BadCredentials,
    CalDAVToolError,
    Conflict,
    InvalidInput,
    NotAllowed,
    NotConfigured,
    NotFound,
    OutOfScope,
    PreconditionFailed,
)
from caldav_mcp.ical import decode_object
from caldav_mcp.ids import Origin, canonical_path, name_in, wire_path
from caldav_mcp.settings import CalDAVSettings
from caldav_mcp.transport import ConfinedSession, MalformedXML, OffOrigin

if TYPE_CHECKING:
    from caldav.collection import Calendar
    from caldav.davclient import DAVClient

__all__ = ["CalDAVClient", "CalendarInfo", "Component", "Deletion", "Discovery", "Resource", "translate"]


def _caldav_errors():
    """The caldav library's error module, imported on first use (the library is slow to import)."""
    from caldav.lib import error

    return error


Component = Literal["VEVENT", "VTODO", "VJOURNAL"]
Deletion = Literal["deleted", "already gone"]
T = TypeVar("T")
_CONTENT_TYPE = "text/calendar; charset=utf-8"
_CALDAV_NS = "urn:ietf:params:xml:ns:caldav"
# Server XML is parsed without entities, DTDs or network access.
_SAFE_XML_OPTIONS: dict[str, bool] = {
    "resolve_entities": False,
    "no_network": True,
    "load_dtd": False,
    "huge_tree": False,
}
_SAFE_XML = etree.XMLParser(**_SAFE_XML_OPTIONS)


@dataclass(frozen=True, slots=True)
class CalendarInfo:
    """One calendar collection.

    Attributes:
        path: The collection path, ending in ``/`` (the calendar's id).
        name: Its display name (calendar data, not an instruction).
        components: The component types it accepts (RFC 4791 §5.2.3).
    """

    path: str
    name: str
    components: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Discovery:
    """How the calendars were found from ``CALDAV_URL`` (RFC 6764 §6, RFC 5397, RFC 4791 §6.2.1).

    Attributes:
        method: ``principal`` (``CALDAV_URL`` named the current-user-principal),
            ``well-known`` (it did not; ``/.well-known/caldav`` did), or
            ``given URL`` (no principal anywhere: ``CALDAV_URL`` is the calendar or the home).
        url: The path of ``CALDAV_URL``.
        well_known: Where ``/.well-known/caldav`` led (after same-origin redirects), when it was used.
        principal: The principal's path, when one was named.
        home_sets: The calendar-home-set paths listed (or the calendar's path).
        is_calendar: ``CALDAV_URL`` is itself a calendar (method ``given URL`` only).
    """

    method: Literal["given URL", "principal", "well-known"]
    url: str
    well_known: str | None
    principal: str | None
    home_sets: tuple[str, ...]
    is_calendar: bool


@dataclass(slots=True)
class _Props:
    """The discovery properties of one PROPFIND answer."""

    multistatus: bool = False
    calendar: bool = False
    principal: tuple[str, ...] = ()
    homes: tuple[str, ...] = ()
    unauthenticated: bool = False  # current-user-principal was DAV:unauthenticated (RFC 5397 §3)


_CALDAV_NS = "urn:ietf:params:xml:ns:caldav"
_WELL_KNOWN = "/.well-known/caldav"
_DISCOVERY_PROPFIND = (
    '<?xml version="1.0" encoding="utf-8"?><d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">'
    "<d:prop><d:resourcetype/><d:current-user-principal/><c:calendar-home-set/></d:prop></d:propfind>"
)


@dataclass(frozen=True, slots=True)
class Resource:
    """One calendar object resource as read from the server.

    Attributes:
        href: Its path on the server.
        etag: The strong ETag it was read with, or None if the server sent none.
        data: The iCalendar text ("" when ``problem`` is set).
        problem: Why its bytes could not be read as text, naming it; None when they could.
    """

    href: str
    etag: str | None
    data: str
    problem: str | None = None


def _auth_error(what: str, status: int | None) -> BackendError:
    if status == 403:
        return NotAllowed(
            f"{what}: the CalDAV server answered 403 Forbidden: this account may not do that there "
            "(for example, a calendar shared with it read-only). Nothing was changed"
        )
    return BadCredentials(
        f"{what}: the CalDAV server refused these credentials (401); check CALDAV_USERNAME and CALDAV_PASSWORD"
    )


def translate(exc: Exception, what: str = "a request to the CalDAV server") -> CalDAVToolError | None:
    """The caldav-mcp error for a failure of the ``caldav`` library, lxml or the HTTP layer; None if unknown.

    The one mapping of backend failures (also given to ``install_error_boundary``
    as ``translate=``). Messages name what was being done and never carry a
    password or the server's text.
    """
    if isinstance(exc, CalDAVToolError):
        return exc
    from lxml import etree as lxml_etree  # pyright: ignore[reportAttributeAccessIssue]

    caldav_error = _caldav_errors()
    status = getattr(exc, "status", None)
    if isinstance(exc, caldav_error.AuthorizationError):
        return _auth_error(what, status if isinstance(status, int) else None)
    if isinstance(exc, caldav_error.NotFoundError):
        return NotFound(f"{what}: the CalDAV server answered 404 Not Found")
    if isinstance(exc, caldav_error.RateLimitError):
        return BackendError(f"{what}: the CalDAV server is busy (429/503 with Retry-After); try again later")
    if isinstance(exc, caldav_error.DAVError):
        code = f" HTTP {status}" if isinstance(status, int) else ""
        return BackendError(f"{what}: the CalDAV server answered with an error ({type(exc).__name__}{code})")
    if isinstance(exc, lxml_etree.XMLSyntaxError):
        return BackendError(f"{what}: the CalDAV server's answer is malformed XML")
    if isinstance(exc, OSError):
        return BackendError(f"{what}: the CalDAV server could not be reached ({type(exc).__name__})")
    return None


@contextlib.contextmanager
def _translated(what: str) -> Iterator[None]:
    """Turn library and network failures into this server's errors, prefixed with ``what``."""
    try:
        yield
    except (InvalidInput, NotFound, OutOfScope, PreconditionFailed, Conflict, NotConfigured, NotAllowed):
        raise
    except BackendError as exc:
        # Raised below the library (transport): say what was being done.
        text = str(exc)
        raise type(exc)(text if text.startswith(what) else f"{what}: {text}") from exc
    except Exception as exc:
        mapped = translate(exc, what)
        if mapped is None:
            raise
        raise mapped from exc


def _status_error(what: str, status: int) -> Exception:
    if status == 412:
        return PreconditionFailed(
            f"{what}: the entry changed on the server since it was read (412 Precondition Failed). "
            "Nothing was written. Read it again and decide on the current version."
        )
    if status in {404, 410}:
        return NotFound(f"{what}: the CalDAV server answered {status}: it is not there (any more)")
    if status in {401, 403}:
        return _auth_error(what, status)
    if status == 409:
        return Conflict(f"{what}: the CalDAV server reported a conflict (409)")
    return BackendError(f"{what}: the CalDAV server answered HTTP {status}")


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


class CalDAVClient:
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

    def __init__(self, settings: CalDAVSettings, *, headers: Mapping[str, str] | None = None) -> None:
        self.settings = settings
        self._headers = dict(headers or {})
        self._lock = threading.Lock()
        self._dav: DAVClient | None = None
        self._origin = Origin(settings.url) if settings.url else None
        self._calendars: dict[str, CalendarInfo] | None = None
        self._scheduling: bool | None = None
        self._discovery: Discovery | None = None

    # ------------------------------------------------------------------ plumbing

    def close(self) -> None:
        """Close the HTTP session (a later call opens a new one)."""
        with self._lock:
            if self._dav is not None:
                self._dav.close()
                self._dav = None

    async def _run(self, what: str, fn: Callable[[], T]) -> T:
        where = f"{what} at {self._origin}" if self._origin is not None else what

        def call() -> T:
            with _translated(where):
                return fn()

        return await anyio.to_thread.run_sync(call)

    def _client(self) -> DAVClient:
        with self._lock:
            return self._dav or self._open()

    def _open(self) -> DAVClient:
        if self._dav is None:
            missing = self.settings.missing()
            if missing:
                raise NotConfigured(
                    f"caldav-mcp is missing settings: set {', '.join(missing)} in its environment "
                    "(CALDAV_URL may be a server root, a principal or a calendar URL) and restart it; "
                    "or, with no CalDAV server, set CALDAV_EMBEDDED=true for calendars kept on this machine"
                )
            assert self.settings.url is not None
            kwargs: dict[str, Any] = {}
            if self._headers:
                kwargs["headers"] = self._headers
            from caldav.davclient import DAVClient

            # The library gets no credentials: the confined session holds them and sends them to this origin only.
            dav = DAVClient(url=self.settings.url, enable_rfc6764=False, **kwargs)
            dav.session.close()
            dav.session = ConfinedSession(  # pyright: ignore[reportAttributeAccessIssue]  (typed for niquests)
                self.settings.url,
                username=self.settings.username,
                password=self.settings.password,
                timeout=self.settings.timeout,
                max_bytes=self.settings.max_response_bytes,
            )
            self._dav = dav
        return self._dav

    def _canonical(self, value: str, field: str) -> str:
        assert self._origin is not None
        return canonical_path(value, field, self._origin)

    def _url(self, path: str) -> str:
        """The absolute URL of canonical ``path``: a known calendar, or one entry directly in one.

        ``path`` is never decoded again here: it is a calendar's id
        (:meth:`calendar`) or an entry's href already decoded once
        (:meth:`_entry_href`), and :func:`wire_path` encodes it back.

        Raises:
            BackendError: ``path`` is outside every allowed calendar; nothing is sent.
        """
        assert self._origin is not None
        known = self._calendars or {}
        inside = path in known or any(name_in(path, cal) for cal in known)
        if not inside:
            raise BackendError(
                "the CalDAV server named an entry outside the calendars this server may use; nothing was sent there"
            )
        return self._origin.url(wire_path(path))

    def _entry_href(self, href: str, cal: CalendarInfo) -> str:
        """The canonical path of an entry the server named (``DAV:href``) in answer to a query on ``cal``.

        Decoded exactly once (:func:`caldav_mcp.ids.canonical_path` with
        ``from_server``), and it must name a resource directly inside ``cal``
        (RFC 4791 §7.8: a calendar-query on a collection answers with its
        members), so no href can point a later PUT, DELETE or MOVE at another
        calendar, even an allowed one.

        Raises:
            BackendError: the href is refused or lies outside ``cal``.
        """
        assert self._origin is not None
        try:
            path = canonical_path(href, "href", self._origin, from_server=True)
        except InvalidInput as exc:
            raise BackendError(f"the CalDAV server named an entry address that is refused ({exc})") from None
        if name_in(path, cal.path) is None:
            raise BackendError(
                f"the CalDAV server answered a query on {cal.path} with an entry that is not directly inside it; "
                "nothing was sent there"
            )
        return path

    # ------------------------------------------------------------------ calendars

    def _probe(self, url: str) -> tuple[int, str, _Props]:
        """PROPFIND Depth 0 at ``url`` for the discovery properties: (status, URL that answered, properties).

        Redirects are followed by the confined session (same origin only).

        Raises:
            BadCredentials: 401.
            BackendError: a transport refusal (another origin, too large, not WebDAV XML...).
        """
        dav = self._client()
        headers = {**self._headers, "Depth": "0", "Content-Type": "application/xml; charset=utf-8"}
        session: ConfinedSession = dav.session  # pyright: ignore[reportAssignmentType]  (set in _client)
        answer = session.request("PROPFIND", url, data=_DISCOVERY_PROPFIND, headers=headers)
        if answer.status_code == 401:
            raise _auth_error(f"PROPFIND {urlsplit(url).path}", 401)
        props = _Props()
        if answer.status_code != 207 or not answer.content:
            return answer.status_code, answer.url, props
        try:
            tree = etree.fromstring(answer.content, parser=_SAFE_XML)
        except etree.XMLSyntaxError:
            return answer.status_code, answer.url, props
        for element in tree.iter("{DAV:}current-user-principal"):
            props.principal += tuple(h.text.strip() for h in element.iter("{DAV:}href") if h.text and h.text.strip())
            props.unauthenticated = props.unauthenticated or element.find("{DAV:}unauthenticated") is not None
        for element in tree.iter(f"{{{_CALDAV_NS}}}calendar-home-set"):
            props.homes += tuple(h.text.strip() for h in element.iter("{DAV:}href") if h.text and h.text.strip())
        for element in tree.iter("{DAV:}resourcetype"):
            props.calendar = props.calendar or any(
                etree.QName(child).localname == "calendar" for child in element if isinstance(child.tag, str)
            )
        props.multistatus = True
        return answer.status_code, answer.url, props

    def _server_path(self, href: str, base: str, what: str) -> str:
        """A path a server named (``href``, relative to ``base``), confined to this origin; ends in ``/``."""
        assert self._origin is not None
        target = urljoin(base, href)
        if not self._origin.same(target):
            raise OffOrigin(
                f"the CalDAV server named a {what} on another origin; caldav-mcp sends requests and credentials "
                f"only to {self._origin} (CALDAV_URL), so it did not follow. If that server is the right one, set "
                "CALDAV_URL to it"
            )
        try:
            path = self._canonical(urlsplit(target).path, what)
        except InvalidInput as exc:
            raise BackendError(f"the CalDAV server named a {what} address that is refused ({exc})") from None
        return path if path.endswith("/") else path + "/"

    def _locate(self) -> Discovery:
        """Find the calendar home set(s) from ``CALDAV_URL`` (RFC 6764 §6, RFC 5397, RFC 4791 §6.2.1).

        1. PROPFIND ``CALDAV_URL``: a ``current-user-principal`` there leads on (``principal``).
           When it answers ``DAV:unauthenticated`` (RFC 5397 §3: it did not ask
           for the credentials, as Cyrus does on its root) and the well-known
           request of step 2 was challenged, it is asked again with them.
        2. Otherwise (an error status such as DAViCal's 405 on ``/``, or no
           principal named), PROPFIND ``/.well-known/caldav`` on the same origin,
           following its redirects (same origin only): a principal named there
           leads on (``well-known``).
        3. Otherwise ``CALDAV_URL`` itself is used: a calendar, or a collection
           of calendars (``given URL``).

        The principal's ``calendar-home-set`` gives the homes; a principal that
        names none is its own home.

        Raises:
            BadCredentials: 401 anywhere.
            OffOrigin: a redirect or a named principal/home on another origin.
            BackendError: nothing usable was found (the message lists what answered what).
        """
        assert self.settings.url is not None
        assert self._origin is not None
        given_url = self.settings.url
        given = urlsplit(given_url).path or "/"
        status, answered, props = self._probe(given_url)
        method: Literal["given URL", "principal", "well-known"] = "principal"
        well_known: str | None = None
        base = answered
        tried = [f"PROPFIND {given} answered HTTP {status}" + ("" if props.multistatus else " (no WebDAV properties)")]
        if not props.principal:
            wk_status, wk_answered, wk_props = self._probe(self._origin.url(_WELL_KNOWN))
            tried.append(
                f"PROPFIND {_WELL_KNOWN} answered HTTP {wk_status}"
                + (f" at {urlsplit(wk_answered).path}" if urlsplit(wk_answered).path != _WELL_KNOWN else "")
            )
            session: ConfinedSession = self._client().session  # pyright: ignore[reportAssignmentType]
            if props.unauthenticated and session.authenticated:
                # CALDAV_URL answered without asking for the credentials (Cyrus on its root: DAV:unauthenticated,
                # RFC 5397 §3, not a 401); the well-known request was challenged, so the credentials now go with
                # every request: ask CALDAV_URL again, as every later call will.
                status, answered, props = self._probe(given_url)
                base = answered
                tried.append(f"PROPFIND {given} with the credentials answered HTTP {status}")
            if props.principal:
                pass
            elif wk_props.principal:
                method, well_known, base, props = "well-known", urlsplit(wk_answered).path, wk_answered, wk_props
            elif props.multistatus:
                path = self._server_path(given, given_url, "calendar")
                return Discovery("given URL", given, None, None, (path,), props.calendar)
            else:
                raise BackendError(
                    f"no calendars could be found from CALDAV_URL ({'; '.join(tried)}; no current-user-principal "
                    "was named, RFC 6764 §6). Set CALDAV_URL to your principal or calendar-home URL"
                )
        principal = self._server_path(props.principal[0], base, "principal")
        homes = props.homes if principal == urlsplit(answered).path else ()
        if not homes:
            p_status, p_answered, p_props = self._probe(self._origin.url(wire_path(principal)))
            if p_status != 207:
                raise _status_error(f"reading the principal {principal}", p_status)
            homes, base = p_props.homes, p_answered
        home_sets = tuple(dict.fromkeys(self._server_path(h, base, "calendar-home-set") for h in homes)) or (principal,)
        return Discovery(method, given, well_known, principal, home_sets, False)

    def _discovered(self) -> Discovery:
        if self._discovery is None:
            self._discovery = self._locate()
            if self._discovery.principal is not None:
                from caldav.collection import Principal

                dav = self._client()
                assert self._origin is not None
                dav._principal = Principal(client=dav, url=self._origin.url(wire_path(self._discovery.principal)))
        return self._discovery

    def _discover(self) -> dict[str, CalendarInfo]:
        from caldav.collection import CalendarSet

        dav = self._client()
        assert self._origin is not None
        self._discovery = None
        found_where = self._discovered()
        if found_where.method == "given URL" and found_where.is_calendar:
            found = [dav.calendar(url=self._origin.url(wire_path(found_where.home_sets[0])))]
        else:
            found: list[Any] = []
            for home in found_where.home_sets:
                listed: Any = CalendarSet(client=dav, url=self._origin.url(wire_path(home))).calendars()
                found += listed
        calendars: dict[str, CalendarInfo] = {}
        for cal in found:
            try:
                path = self._canonical(urlsplit(str(cal.url)).path, "calendar")
            except InvalidInput:
                continue  # a collection address this server would refuse as an id: not offered
            if not path.endswith("/"):
                path += "/"
            name = cal.get_display_name() or path.rstrip("/").rsplit("/", 1)[-1]
            try:
                components = tuple(cal.get_supported_components())
            except _caldav_errors().DAVError:
                components = ("VEVENT", "VTODO", "VJOURNAL")
            calendars[path] = CalendarInfo(path, str(name), components)
        allowed = set(self.settings.calendars)
        if allowed:
            paths = set()
            for entry in allowed:
                if entry.startswith("/"):
                    with contextlib.suppress(InvalidInput):
                        paths.add(self._canonical(entry, "CALDAV_CALENDARS").rstrip("/") + "/")
            calendars = {p: c for p, c in calendars.items() if p in paths or c.name in allowed}
        return calendars

    async def discovery(self) -> Discovery:
        """How the calendars were found from ``CALDAV_URL`` (worked out on first use; see :meth:`_locate`)."""
        return await self._run("finding the calendars", self._discovered)

    async def calendars(self, *, refresh: bool = False) -> list[CalendarInfo]:
        """The calendars this account has and ``CALDAV_CALENDARS`` allows."""
        if self._calendars is None or refresh:
            self._calendars = await self._run("listing calendars", self._discover)
        return list(self._calendars.values())

    async def calendar(self, path: str, *, field: str = "calendar") -> CalendarInfo:
        """Resolve a calendar id (its collection path) into one of the allowed calendars.

        The one place a caller's calendar id is resolved (see :mod:`caldav_mcp.ids`).

        Raises:
            InvalidInput: ``path`` breaks an id rule (the message names ``field``).
            OutOfScope: no such calendar for this account (or not allowed).
        """
        self._client()  # NotConfigured first
        key = self._canonical(path, field)
        key = key if key.endswith("/") else key + "/"
        for refresh in (False, True):
            known = {c.path: c for c in await self.calendars(refresh=refresh)}
            if key in known:
                return known[key]
        raise OutOfScope(
            f"{field}: {path[:120]!r} is not one of the calendars this server may use; call list_calendars"
        )

    async def scheduling(self) -> bool:
        """Whether the server does RFC 6638 scheduling (``calendar-auto-schedule`` in its DAV header)."""
        if self._scheduling is None:

            def probe() -> bool:
                dav = self._client()
                found = self._discovered()
                assert self._origin is not None
                where = self._origin.url(wire_path(found.principal or found.home_sets[0]))
                return "calendar-auto-schedule" in (dav.options(where).headers.get("DAV") or "")

            self._scheduling = await self._run("probing the server", probe)
        return self._scheduling

    async def user_addresses(self) -> list[str]:
        """This account's calendar user addresses (RFC 6638 §2.4.1), lowercased, ``mailto:`` kept."""

        def read() -> list[str]:
            try:
                addresses: list[Any] = self._client().principal().calendar_user_address_set()  # pyright: ignore[reportAssignmentType]
            except _caldav_errors().DAVError:
                return []
            # Only mailto: addresses can match an ATTENDEE; servers also list principal URLs here.
            return [str(a).lower() for a in addresses if a and str(a).lower().startswith("mailto:")]

        return await self._run("reading the account's addresses", read)

    async def writable(self, cal: CalendarInfo) -> bool | None:
        """Whether this account may write into ``cal``; see :meth:`can_write`."""
        return await self.can_write(cal.path)

    async def require_write(self, path: str, *, field: str = "calendar") -> None:
        """Refuse before asking anyone when the server says this account may not write at ``path``.

        Guarded tools call it just before ``gate.check``, so no dialog is shown
        for something that cannot be done. A server that does not publish
        ``current-user-privilege-set`` (None from :meth:`can_write`) is not
        refused here; its 403 on the write is then reported as :class:`NotAllowed`.

        Raises:
            NotAllowed: the server lists this account's privileges at ``path`` and no write privilege.
        """
        if await self.can_write(path) is False:
            raise NotAllowed(
                f"{field}: this account may not change entries in {path} (the server grants it no write "
                "privilege there, RFC 3744 current-user-privilege-set; a calendar shared read-only?). "
                "Nothing was asked or changed"
            )

    async def can_write(self, url: str) -> bool | None:
        """Whether this account may change ``url``: RFC 3744 §5.4 ``current-user-privilege-set``.

        Args:
            url: A calendar path (as :meth:`calendar` gives it) or an entry's
                href (``Resource.href``), both canonical; confined like every other URL.

        Returns:
            True when the server grants ``DAV:write``, ``write-content``,
            ``bind``, ``unbind`` or ``all`` there; False when it lists the
            privileges and none of those; None when it does not say (no
            207, no privileges listed, or an answer that cannot be read).
            Radicale lists ``read`` and ``read-free-busy`` only on a read-only
            calendar; Xandikos lists ``all`` for the owner.
        """

        def read() -> bool | None:
            body = (
                '<?xml version="1.0" encoding="utf-8"?><d:propfind xmlns:d="DAV:"><d:prop>'
                "<d:current-user-privilege-set/></d:prop></d:propfind>"
            )
            try:
                response = self._client().request(self._url(url), "PROPFIND", body, {"Depth": "0"})
            except _caldav_errors().DAVError:
                return None
            if response.status != 207:
                return None
            raw = response.raw if isinstance(response.raw, bytes) else str(response.raw).encode()
            try:
                tree = etree.fromstring(raw, parser=_SAFE_XML)
            except etree.XMLSyntaxError:
                return None
            granted = {
                etree.QName(child).localname for privilege in tree.iter("{DAV:}privilege") for child in privilege
            }
            if not granted:
                return None
            return bool(granted & {"write", "write-content", "bind", "all"})

        return await self._run("checking this account's rights", read)

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

    def _send(self, method: str, url: str, body: str, headers: Mapping[str, str]) -> Any:
        """One request through the confined session, answered with its raw bytes (``.content``)."""
        session: ConfinedSession = self._client().session  # pyright: ignore[reportAssignmentType]
        return session.request(method, url, body, {**self._headers, **headers})

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
            raise _status_error("querying", answer.status_code)
        rows: list[tuple[str, Any, Any]] = []
        # One response element at a time, each dropped once read: the tree never holds the whole answer.
        for _, item in etree.iterparse(
            io.BytesIO(answer.content), events=("end",), tag="{DAV:}response", **_SAFE_XML_OPTIONS
        ):
            href = item.findtext("{DAV:}href")
            if href and not urlsplit(href).path.endswith("/"):  # not the collection itself (or a sub-collection)
                rows.append(
                    (href, item.findtext(".//{DAV:}getetag"), item.findtext(f".//{{{_CALDAV_NS}}}calendar-data"))
                )
            item.clear(keep_tail=True)
            while item.getprevious() is not None:
                del item.getparent()[0]
        return rows

    def _get_object(self, href: str, etag: str | None) -> Resource:
        """GET one object and decode its bytes (unfolded first); ``problem`` set when they cannot be."""
        answer = self._send("GET", self._url(href), "", {"Accept": "text/calendar"})
        if answer.status_code >= 300:
            raise _status_error(f"reading {href}", answer.status_code)
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

    def _request(self, what: str, url: str, method: str, body: str, headers: dict[str, str]) -> Any:
        response = self._client().request(url, method, body, headers)
        if response.status >= 300:
            raise _status_error(what, response.status)
        return response

    async def create(self, cal: CalendarInfo, uid: str, data: str) -> Resource:
        """PUT a new resource named after ``uid`` with ``If-None-Match: *``.

        Raises:
            Conflict: a resource of that name already exists (412 on create).
        """
        href = f"{cal.path}{resource_name(uid)}"

        def run() -> Resource:
            response = self._client().request(
                self._url(href), "PUT", data, {"If-None-Match": "*", "Content-Type": _CONTENT_TYPE}
            )
            if response.status == 412:
                raise Conflict(f"uid: an entry with UID {uid!r} already exists in {cal.path}")
            if response.status >= 300:
                raise _status_error(f"creating in {cal.path}", response.status)
            return Resource(href, response.headers.get("ETag"), data)

        return await self._run(f"creating in {cal.path}", run)

    async def replace(self, resource: Resource, data: str) -> Resource:
        """PUT ``data`` over ``resource`` with ``If-Match`` on the ETag it was read with."""
        headers = {"Content-Type": _CONTENT_TYPE}
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
                raise _status_error("writing the entry", response.status)
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
                raise _status_error("deleting the entry", response.status)
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
                    raise _status_error("moving the entry", current.status if current.status >= 300 else 412)
            response = self._client().request(self._url(resource.href), "MOVE", "", headers)
            if response.status == 412 and "If-Match" in headers:
                # Either the entry changed, or the destination holds that name: tell them apart.
                current = self._client().request(self._url(resource.href), "HEAD", "", {})
                if current.headers.get("ETag") == resource.etag:
                    raise Conflict(f"destination: {destination.path} already has an entry named {name!r}")
            if response.status >= 300:
                raise _status_error("moving the entry", response.status)
            return target

        return await self._run("moving the entry", run)
