"""The WebDAV client a DAV server builds on: the confined session, discovery, privileges, and the plain methods.

A server's own client (``CardDavClient``, ``CalDAVClient``) subclasses
:class:`WebDavClient` and adds only what is CalDAV or CardDAV: its query
bodies, its collection properties, its data format. Every request still goes
through :class:`~webdav_core.session.ConfinedSession`, and every href a
server names for a member goes through :func:`~webdav_core.paths.member_in`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import httpx2 as httpx

from webdav_core import discovery, privileges, xml
from webdav_core.answer import Answer
from webdav_core.discovery import Discovery
from webdav_core.origin import Origin, cut
from webdav_core.paths import member_in, resolved_member
from webdav_core.profile import Profile
from webdav_core.session import ConfinedSession
from webdav_core.statuses import raise_for_status
from webdav_core.versions import CollectionVersions
from webdav_core.xml import DAV, norm_href

__all__ = ["Account", "SyncResult", "WebDavClient", "account_of"]


class Account(Protocol):
    """A server's connection settings, as the layer reads them (``CalDAVSettings``, ``CardDavSettings``)."""

    @property
    def username(self) -> str | None:
        """The account's user name, or None."""
        ...

    @property
    def password(self) -> str | None:
        """Its password, or None."""
        ...

    @property
    def timeout(self) -> float:
        """Seconds one whole exchange may take."""
        ...

    @property
    def max_response_bytes(self) -> int:
        """The largest answer read, in bytes."""
        ...


def account_of(settings: Account) -> dict[str, Any]:
    """The keyword arguments of :class:`WebDavClient` that come from a server's settings.

    The user name and password (sent only when the origin's 401 asks), the deadline
    of one exchange in seconds, and the largest answer read in bytes.
    """
    return {
        "username": settings.username,
        "password": settings.password,
        "timeout": settings.timeout,
        "max_bytes": settings.max_response_bytes,
    }


@dataclass(frozen=True)
class SyncResult:
    """An RFC 6578 sync-collection answer: the new token, changed (href, ETag) pairs, deleted hrefs."""

    token: str | None
    changed: list[tuple[str, str | None]]
    deleted: list[str]


class WebDavClient:
    """Async WebDAV client for one account, confined to the origin of the configured URL.

    Args:
        url: The configured URL (``CARDDAV_URL``).
        profile: The server's names and exception classes.
        credentials: Headers sent to the configured origin only (a trusted ``X-Remote-User``).
        username: The account, or None.
        password: Its password; sent only as the origin's 401 challenge asks.
        timeout: Seconds one whole exchange may take.
        max_bytes: The largest answer read, in bytes.
        transport: An httpx transport (tests of fault handling only).
    """

    member_description = "a member of the collection that was asked"
    """What a member href must be, for the log line when one is left out."""

    def __init__(
        self,
        url: str,
        profile: Profile,
        *,
        credentials: Mapping[str, str] | None = None,
        username: str | None = None,
        password: str | None = None,
        timeout: float,
        max_bytes: int,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.session = ConfinedSession(
            url,
            profile,
            credentials=credentials,
            username=username,
            password=password,
            timeout=timeout,
            max_bytes=max_bytes,
            transport=transport,
        )
        self.profile = profile
        self.base_url = url
        self.versions = CollectionVersions(self.session, profile)
        """The collections' versions and the writes sent to each, for caches the server validates."""
        self._discovery: Discovery | None = None

    @property
    def origin(self) -> Origin:
        """(scheme, host, port) of the configured URL."""
        return self.session.origin

    @property
    def origin_text(self) -> str:
        """``scheme://host:port`` of the configured URL (never with user information)."""
        return self.session.origin_text

    @property
    def _http(self) -> httpx.AsyncClient:
        """The session's httpx client (credentials attached for the configured origin only)."""
        return self.session.http

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self.session.aclose()

    def url(self, path: str) -> httpx.URL:
        """The absolute URL of a server path or of a URL on the configured origin (see :meth:`ConfinedSession.url`)."""
        return self.session.url(path)

    def member_in(self, collection: str, raw: str) -> str | None:
        """The canonical path of a member href listed for ``collection``, or None (see :func:`member_in`)."""
        return member_in(collection, raw, self.session.url, self.profile.errors, describe=self.member_description)

    def _resolved_member(self, collection: str, raw: str) -> str | None:
        """:meth:`member_in` by the full rules, without the quick path for plain hrefs (see :func:`resolved_member`)."""
        return resolved_member(collection, raw, self.session.url, self.profile.errors, describe=self.member_description)

    async def _send(
        self,
        method: str,
        path: str,
        *,
        body: str | bytes | None = None,
        headers: Mapping[str, str] | None = None,
        what: str,
    ) -> Answer:
        self.versions.sent(method, path, (headers or {}).get("Destination"))
        return await self.session.send(method, path, body=body, headers=headers, what=what)

    async def _multistatus(self, method: str, path: str, body: str, depth: str, what: str) -> xml.MultiStatus:
        return await self.session.multistatus(method, path, body, depth, what)

    # ---------------------------------------------------------------- discovery and privileges

    async def options(self, path: str = "") -> set[str]:
        """The DAV compliance classes of ``path`` (OPTIONS, RFC 4918 §10.1), e.g. ``{"1", "3", "addressbook"}``."""
        response = await self._send("OPTIONS", path or self.base_url, what="OPTIONS")
        header = response.headers.get("DAV", "")
        return {part.strip() for part in header.split(",") if part.strip()}

    async def discover(self, *, refresh: bool = False) -> Discovery:
        """The principal and home found from the configured URL (worked out once, again with ``refresh``).

        See :func:`webdav_core.discovery.discover` for the steps and the errors raised.
        """
        if self._discovery is None or refresh:
            self._discovery = await discovery.discover(self.session)
        return self._discovery

    async def principal(self) -> str | None:
        """The current user's principal path (RFC 5397, found as :meth:`discover` does), or None."""
        return (await self.discover()).principal

    async def home(self, principal: str) -> str | None:
        """The principal's home set (RFC 6352 §7.1.1, RFC 4791 §6.2.1), or None."""
        return await discovery.find_home(self.session, principal)

    async def can_write(self, url: str) -> bool | None:
        """Whether the account may write at ``url`` (RFC 3744 §5.4); see :func:`webdav_core.privileges.can_write`."""
        return await privileges.can_write(self.session, url)

    async def supports_sync(self, path: str) -> bool:
        """Whether ``path`` lists the sync-collection REPORT among its supported reports (RFC 6578 §3.1)."""
        body = xml.propfind([(DAV, "supported-report-set")])
        ms = await self._multistatus("PROPFIND", path, body, "0", f"read {path}")
        return any(r.has_child(DAV, "supported-report-set", (DAV, "sync-collection")) for r in ms.responses)

    # ---------------------------------------------------------------- members of a collection

    async def list_etags(self, collection: str) -> list[tuple[str, str | None]]:
        """(href, ETag) of every member of ``collection``, sorted by href (PROPFIND depth 1, RFC 4918 §9.1)."""
        body = xml.propfind([(DAV, "getetag"), (DAV, "resourcetype")])
        ms = await self._multistatus("PROPFIND", collection, body, "1", f"list {collection}")
        own = norm_href(collection)
        rows = [
            (href, r.text(DAV, "getetag"))
            for r in ms.responses
            if r.href.rstrip("/") != own.rstrip("/") and not r.has_child(DAV, "resourcetype", (DAV, "collection"))
            if (href := self.member_in(own, r.raw or r.href)) is not None
        ]
        return sorted(rows)

    async def sync(self, collection: str, token: str | None) -> SyncResult:
        """Changes since ``token`` (RFC 6578 sync-collection); None for a first, full sync."""
        ms = await self._multistatus("REPORT", collection, xml.sync_collection(token), "1", f"sync {collection}")
        own = norm_href(collection)
        changed = [
            (href, r.text(DAV, "getetag"))
            for r in ms.responses
            if r.status != 404 and not r.href.endswith("/")
            if (href := self.member_in(own, r.raw or r.href)) is not None
        ]
        deleted = [
            href for r in ms.responses if r.status == 404 if (href := self.member_in(own, r.raw or r.href)) is not None
        ]
        return SyncResult(ms.sync_token, sorted(changed), sorted(deleted))

    async def fetch(self, href: str) -> Answer:
        """GET one item (RFC 9110 §9.3.1): its whole answer, with its ETag when the server sends one.

        Raises:
            not_found: nothing at ``href``.
            backend: the answer is of a media type that is not one of ``Profile.data_types``
                (a login page, a proxy's answer), named in the message.
        """
        p = self.profile
        response = await self._send(
            "GET", href, headers={"Accept": ", ".join(sorted(p.data_types))}, what=f"read {href}"
        )
        media = response.media_type
        if media and media not in p.data_types:
            raise p.errors.backend(
                f"read {href}: the {p.server} answered with {p.quote(cut(media[:60]))}, not {p.data_name} "
                f"({', '.join(sorted(p.data_types))}).",
                response.status_code,
            )
        return response

    # ---------------------------------------------------------------- writing

    async def current_etag(self, href: str) -> str | None:
        """The ETag a GET of ``href`` answers with (RFC 9110 §8.8.3), or None when the server sends none.

        Raises:
            not_found: nothing at ``href``.
        """
        response = await self._send("GET", href, what=f"read {href}")
        return response.headers.get("ETag")

    async def bound_version(self, href: str, etag: str | None, what: str) -> str:
        """The ETag a change of ``href`` is made conditional on: ``etag``, else the one a GET answers with.

        Every PUT over, DELETE and MOVE of an existing resource carries ``If-Match``
        (RFC 9110 §13.1.1), so a change made meanwhile is never overwritten. A
        listing without ``getetag`` is completed by a GET; a server that gives
        no ETag even there is refused, because the write could not be bound.

        Raises:
            backend: the server gives no ETag for ``href``; nothing was written.
            not_found: ``href`` is gone.
        """
        found = etag or await self.current_etag(href)
        if not found:
            p = self.profile
            raise p.errors.backend(
                f"{what}: the {p.server} gives no ETag for {href}, neither in its listing nor on a GET, so the "
                f"change could not be made conditional on the {p.item} that was read (If-Match, RFC 9110 §13.1.1); "
                "nothing was written.",
                None,
            )
        return found

    async def store(self, href: str, data: bytes, content_type: str, *, etag: str | None) -> str | None:
        """Store ``data`` at ``href``: ``If-Match: etag`` to replace, ``If-None-Match: *`` when ``etag`` is None.

        RFC 9110 §13.1.1, §13.1.2: a replace never overwrites a change made since
        the read, a create never overwrites anything.

        Returns:
            The new ETag, when the server sends one.

        Raises:
            precondition_failed: it changed (or, on create, exists).  rejected: the server refused the data.
        """
        headers = {"Content-Type": content_type}
        headers.update({"If-Match": etag} if etag else {"If-None-Match": "*"})
        response = await self._send("PUT", href, body=data, headers=headers, what=f"write {href}")
        return response.headers.get("ETag")

    async def delete(self, href: str, etag: str | None) -> bool:
        """DELETE ``href`` with ``If-Match`` (the ETag given, else the one a GET answers with).

        Returns:
            True when this request deleted it (200, 204); False when the server
            answered 404 or 410: it is already gone (someone else deleted it
            meanwhile; RFC 9110 §9.3.5), which is not an error.

        Raises:
            precondition_failed: it changed since ``etag`` was read (412).
            backend: the server gives no ETag for it (see :meth:`bound_version`); nothing was sent.
        """
        what = f"delete {href}"
        try:
            version = await self.bound_version(href, etag, what)
            await self._send("DELETE", href, headers={"If-Match": version}, what=what)
        except self.profile.errors.not_found:
            return False
        return True

    async def move(self, href: str, destination: str, etag: str | None) -> None:
        """MOVE ``href`` to ``destination`` (RFC 4918 §9.9) with ``Overwrite: F`` and ``If-Match``.

        Some servers (Radicale 3.9) ignore ``If-Match`` on MOVE, so the ETag is
        compared by a GET first: a resource changed since it was read is never
        moved. A 412 whose source is unchanged means the destination holds that
        name already (``Overwrite: F``).

        Args:
            href: The resource.
            destination: Its path in the other collection.
            etag: The ETag it was read with (None: the one a GET answers with).

        Raises:
            off_origin: ``destination`` is not on the configured origin (nothing sent).
            precondition_failed: it changed since it was read.
            conflict: the destination already holds a resource of that name.
            backend: the server gives no ETag for it; nothing was moved.
        """
        what = f"move {href}"
        target = str(self.url(destination))  # off the origin: refused before anything is sent
        version = await self.bound_version(href, etag, what)
        p = self.profile
        if etag and await self.current_etag(href) != etag:
            raise_for_status(Answer(412, httpx.Headers(), b""), what, p)  # the one wording of a 412
        headers = {"Destination": target, "Overwrite": "F", "If-Match": version}
        try:
            await self._send("MOVE", href, headers=headers, what=what)
        except p.errors.precondition_failed:
            if await self.current_etag(href) != version:
                raise
            name = destination.rstrip("/").rsplit("/", 1)[-1]
            raise p.errors.conflict(
                f"{what}: the destination already has a {p.item} named {p.quote(name)} (412 with Overwrite: F).", 412
            ) from None

    async def mkcol(self, path: str, body: str, *, method: str = "MKCOL") -> None:
        """Create a collection at ``path``: extended MKCOL (RFC 5689 §3), or ``MKCALENDAR`` (RFC 4791 §5.3.1)."""
        await self._send(method, path, body=body, what=f"create {path}")
