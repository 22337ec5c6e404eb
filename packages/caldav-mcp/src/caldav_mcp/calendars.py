"""The calendars of the account: how they were found, which may be used, and what the account may write.

Discovery (RFC 6764 §6, RFC 5397, RFC 4791 §6.2.1), the confinement of ids
and hrefs and the write privilege (RFC 3744 §5.4) are the WebDAV layer's
(:mod:`webdav_core`); here they are applied to calendars: the calendars of
every calendar home set, each confined to its home (an href off it, ``/etc/``
or another account's, is left out and never asked), narrowed by
``CALDAV_CALENDARS``. The layer's client (:class:`caldav_mcp.wire.CalDAVWire`)
is made at the first request, so the server starts without the HTTP stack.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from approval_core.serving.stored_text import quoted_name
from caldav_mcp.dav import CalendarInfo
from caldav_mcp.errors import BackendError, InvalidInput, NotAllowed, NotConfigured, NotFound, OutOfScope
from caldav_mcp.settings import CalDAVSettings

if TYPE_CHECKING:
    from caldav_mcp.wire import CalDAVWire
    from webdav_core import Discovery

__all__ = ["Calendars", "home_sets"]


def home_sets(found: Discovery) -> tuple[str, ...]:
    """The collections whose calendars are listed: the home sets, else the principal, else the configured URL."""
    if found.homes:
        return found.homes
    return (found.principal,) if found.principal else (found.url if found.url.endswith("/") else found.url + "/",)


class Calendars:
    """The account's calendars on the WebDAV layer, opened on first use.

    Args:
        settings: The server's settings; missing ones raise :class:`NotConfigured`
            on first use, not at construction.
        headers: Extra headers for ``CALDAV_URL``'s origin only (a trusted ``X-Remote-User``).
    """

    def __init__(self, settings: CalDAVSettings, *, headers: Mapping[str, str] | None = None) -> None:
        self.settings = settings
        self._headers = dict(headers or {})
        self._wire: CalDAVWire | None = None
        self._calendars: dict[str, CalendarInfo] | None = None
        self._scheduling: bool | None = None

    # ------------------------------------------------------------------ plumbing

    def wire(self) -> CalDAVWire:
        """The layer's client for this account (made at the first call).

        Raises:
            NotConfigured: CALDAV_URL, CALDAV_USERNAME or CALDAV_PASSWORD is missing.
        """
        if self._wire is None:
            missing = self.settings.missing()
            if missing:
                raise NotConfigured(
                    f"caldav-mcp is missing settings: set {', '.join(missing)} in its environment "
                    "(CALDAV_URL may be a server root, a principal or a calendar URL) and restart it; "
                    "or, with no CalDAV server, set CALDAV_EMBEDDED=true for calendars kept on this machine"
                )
            from caldav_mcp.wire import CalDAVWire  # the HTTP stack, at the first request

            self._wire = CalDAVWire(self.settings, self._headers)
        return self._wire

    async def close(self) -> None:
        """Close the connection pool (a later call opens a new one)."""
        if self._wire is not None:
            await self._wire.aclose()

    @contextlib.contextmanager
    def doing(self, what: str) -> Iterator[None]:
        """Say what was being done, and where, in front of a backend error's message.

        Raises:
            BackendError (the same kind): ``"<what> at <origin>: <the layer's message>"``.
        """
        try:
            yield
        except BackendError as exc:
            where = f"{what} at {self._origin()}"
            text = str(exc)
            if text.startswith(where):
                raise
            raise type(exc)(f"{where}: {text}", exc.status) from exc

    def _origin(self) -> str:
        from urllib.parse import urlsplit

        parts = urlsplit(self.settings.url or "")
        return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"

    def resolve(self, value: str, field: str) -> str:
        """A caller's calendar id as the one canonical collection path (:func:`webdav_core.resolve_path`).

        Raises:
            InvalidInput: the id breaks a rule of ids (a dot segment, an encoded slash, a host...).
        """
        from caldav_mcp.wire import PROFILE
        from webdav_core import folder, resolve_path

        return folder(resolve_path(field, value, "a calendar id from list_calendars", PROFILE.errors))

    # ------------------------------------------------------------------ calendars

    async def discovery(self) -> Discovery:
        """How the calendars were found from ``CALDAV_URL`` (worked out once; RFC 6764 §6, RFC 5397)."""
        wire = self.wire()
        with self.doing("finding the calendars"):
            return await wire.discover()

    async def _find(self, rediscover: bool) -> dict[str, CalendarInfo]:
        wire = self.wire()
        found = await wire.discover(refresh=rediscover)
        listed: list[CalendarInfo] = []
        if found.method == "given URL" and found.given_is_collection:
            own = await wire.calendar_at(found.url if found.url.endswith("/") else found.url + "/")
            listed = [own] if own is not None else []
        else:
            for home in home_sets(found):
                listed += await wire.calendars_in(home)
        calendars = {c.path: c for c in listed}
        allowed = set(self.settings.calendars)
        if allowed:
            paths = set()
            for entry in allowed:
                if entry.startswith("/"):
                    with contextlib.suppress(InvalidInput):
                        paths.add(self.resolve(entry, "CALDAV_CALENDARS"))
            calendars = {p: c for p, c in calendars.items() if p in paths or c.name in allowed}
        return calendars

    async def calendars(self, *, refresh: bool = False, rediscover: bool = False) -> list[CalendarInfo]:
        """The calendars of the account's home sets that ``CALDAV_CALENDARS`` allows.

        Listed once, again with ``refresh``. RFC 6764 discovery (the principal and
        its home sets) is worked out on the first listing and kept; ``rediscover``
        works it out again (a home set that has gone is also looked for again).

        Raises:
            NotConfigured: settings missing.  BackendError (or a kind of it): discovery or the listing failed.
        """
        if self._calendars is None or refresh or rediscover:
            self.wire()
            with self.doing("listing calendars"):
                try:
                    self._calendars = await self._find(rediscover)
                except NotFound:
                    if rediscover:
                        raise
                    self._calendars = await self._find(True)  # the home set moved: discovery again
        return list(self._calendars.values())

    async def calendar(self, path: str, *, field: str = "calendar") -> CalendarInfo:
        """Resolve a calendar id (its collection path) into one of the allowed calendars.

        The one place a caller's calendar id is resolved (by :func:`webdav_core.resolve_path`).

        Raises:
            InvalidInput: ``path`` breaks an id rule (the message names ``field``).
            OutOfScope: no such calendar for this account (or not allowed).
        """
        self.wire()  # NotConfigured first
        key = self.resolve(path, field)
        for refresh in (False, True):
            known = {c.path: c for c in await self.calendars(refresh=refresh)}
            if key in known:
                return known[key]
        raise OutOfScope(
            f"{field}: {quoted_name(path[:120])} is not one of the calendars this server may use; call list_calendars"
        )

    def known(self, path: str) -> bool:
        """Whether ``path`` is an allowed calendar, or an entry directly inside one."""
        calendars = self._calendars or {}
        parent = path if path.endswith("/") else path.rsplit("/", 1)[0] + "/"
        return parent in calendars

    # ------------------------------------------------------------------ the server and the account

    async def scheduling(self) -> bool:
        """Whether the server does RFC 6638 scheduling (``calendar-auto-schedule`` in its DAV header)."""
        if self._scheduling is None:
            with self.doing("probing the server"):
                found = await self.discovery()
                where = found.principal or home_sets(found)[0]
                self._scheduling = "calendar-auto-schedule" in await self.wire().options(where)
        return self._scheduling

    async def user_addresses(self) -> list[str]:
        """This account's calendar user addresses (RFC 6638 §2.4.1), lowercased, ``mailto:`` only."""
        found = await self.discovery()
        if found.principal is None:
            return []
        try:
            with self.doing("reading the account's addresses"):
                addresses = await self.wire().user_addresses(found.principal)
        except BackendError:
            return []
        # Only mailto: addresses can match an ATTENDEE; servers also list principal URLs here.
        return [a.lower() for a in addresses if a.lower().startswith("mailto:")]

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
                href (``Resource.href``), both canonical and inside an allowed calendar.

        Returns:
            True when the server grants ``write``, ``write-content``, ``bind`` or
            ``all`` there; False when it lists the privileges and none of those;
            None when it does not say (or the answer cannot be read).
        """
        if not self.known(url):
            return None
        try:
            with self.doing("checking this account's rights"):
                return await self.wire().can_write(url)
        except BackendError as exc:
            if exc.status is None:
                raise  # no answer at all: not a "does not say"
            return None
