"""The calendars of the account: RFC 6764 discovery, the calendar home sets, and what the account may write."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urljoin, urlsplit

from lxml import etree  # pyright: ignore[reportAttributeAccessIssue]

from caldav_mcp.errors import (
    BackendError,
    InvalidInput,
    NotAllowed,
    OutOfScope,
)
from caldav_mcp.ids import wire_path

if TYPE_CHECKING:
    from caldav_mcp.transport import ConfinedSession  # imported at the first request: it loads httpcore2

    pass
from caldav_mcp.connection import Connection
from caldav_mcp.dav import (
    CALDAV_NS,
    DISCOVERY_PROPFIND,
    SAFE_XML,
    WELL_KNOWN,
    CalendarInfo,
    Discovery,
    DiscoveryProps,
    auth_error,
    caldav_errors,
    status_error,
)

__all__ = ["Calendars"]


class Calendars(Connection):
    """Discovery (RFC 6764 §6, RFC 5397, RFC 4791 §6.2.1), the allowed calendars, and RFC 3744 write privileges."""

    # ------------------------------------------------------------------ calendars

    def _probe(self, url: str) -> tuple[int, str, DiscoveryProps]:
        """PROPFIND Depth 0 at ``url`` for the discovery properties: (status, URL that answered, properties).

        Redirects are followed by the confined session (same origin only).

        Raises:
            BadCredentials: 401.
            BackendError: a transport refusal (another origin, too large, not WebDAV XML...).
        """
        dav = self._client()
        headers = {**self._headers, "Depth": "0", "Content-Type": "application/xml; charset=utf-8"}
        session: ConfinedSession = dav.session  # pyright: ignore[reportAssignmentType]  (set in _client)
        answer = session.request("PROPFIND", url, data=DISCOVERY_PROPFIND, headers=headers)
        if answer.status_code == 401:
            raise auth_error(f"PROPFIND {urlsplit(url).path}", 401)
        props = DiscoveryProps()
        if answer.status_code != 207 or not answer.content:
            return answer.status_code, answer.url, props
        try:
            tree = etree.fromstring(answer.content, parser=SAFE_XML)
        except etree.XMLSyntaxError:
            return answer.status_code, answer.url, props
        for element in tree.iter("{DAV:}current-user-principal"):
            props.principal += tuple(h.text.strip() for h in element.iter("{DAV:}href") if h.text and h.text.strip())
            props.unauthenticated = props.unauthenticated or element.find("{DAV:}unauthenticated") is not None
        for element in tree.iter(f"{{{CALDAV_NS}}}calendar-home-set"):
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
            from caldav_mcp.transport import OffOrigin

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
            wk_status, wk_answered, wk_props = self._probe(self._origin.url(WELL_KNOWN))
            tried.append(
                f"PROPFIND {WELL_KNOWN} answered HTTP {wk_status}"
                + (f" at {urlsplit(wk_answered).path}" if urlsplit(wk_answered).path != WELL_KNOWN else "")
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
                raise status_error(f"reading the principal {principal}", p_status)
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
            except caldav_errors().DAVError:
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
            except caldav_errors().DAVError:
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
            except caldav_errors().DAVError:
                return None
            if response.status != 207:
                return None
            raw = response.raw if isinstance(response.raw, bytes) else str(response.raw).encode()
            try:
                tree = etree.fromstring(raw, parser=SAFE_XML)
            except etree.XMLSyntaxError:
                return None
            granted = {
                etree.QName(child).localname for privilege in tree.iter("{DAV:}privilege") for child in privilege
            }
            if not granted:
                return None
            return bool(granted & {"write", "write-content", "bind", "all"})

        return await self._run("checking this account's rights", read)
