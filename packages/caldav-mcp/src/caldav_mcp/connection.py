"""The connection under the CalDAV client: a ``caldav.DAVClient`` on a confined session, run in worker threads.

The library gets no credentials: :class:`caldav_mcp.transport.ConfinedSession`
holds them and sends them to ``CALDAV_URL``'s origin only. Every URL built
here (:meth:`Connection._url`) is a known calendar or one member of one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import anyio.to_thread

from caldav_mcp.dav import (
    CalendarInfo,
    Discovery,
    T,
    status_error,
    translated,
)
from caldav_mcp.errors import BackendError, InvalidInput, NotConfigured
from caldav_mcp.ids import Origin, canonical_path, name_in, wire_path
from caldav_mcp.settings import CalDAVSettings

if TYPE_CHECKING:
    from caldav.davclient import DAVClient

    from caldav_mcp.transport import ConfinedSession  # imported at the first request: it loads httpcore2

__all__ = ["Connection"]


class Connection:
    """The account's DAVClient, opened on first use, and the rules every URL it is given keeps.

    Args:
        settings: The server's settings; missing ones raise :class:`NotConfigured`
            on first use, not at construction.
        headers: Extra HTTP headers for every request.
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
            with translated(where):
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
            from caldav_mcp.transport import ConfinedSession

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

    def _send(self, method: str, url: str, body: str, headers: Mapping[str, str]) -> Any:
        """One request through the confined session, answered with its raw bytes (``.content``)."""
        session: ConfinedSession = self._client().session  # pyright: ignore[reportAssignmentType]
        return session.request(method, url, body, {**self._headers, **headers})

    def _request(self, what: str, url: str, method: str, body: str, headers: dict[str, str]) -> Any:
        response = self._client().request(url, method, body, headers)
        if response.status >= 300:
            raise status_error(what, response.status)
        return response
