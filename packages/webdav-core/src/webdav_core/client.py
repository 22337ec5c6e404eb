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

import httpx2 as httpx

from webdav_core import discovery, privileges, xml
from webdav_core.answer import Answer
from webdav_core.discovery import Discovery
from webdav_core.origin import Origin
from webdav_core.paths import member_in, resolved_member
from webdav_core.profile import Profile
from webdav_core.session import ConfinedSession
from webdav_core.xml import DAV, norm_href

__all__ = ["SyncResult", "WebDavClient"]


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
        credentials: Headers sent to the configured origin only (``Authorization`` and header credentials).
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
        credentials: Mapping[str, str],
        timeout: float,
        max_bytes: int,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.session = ConfinedSession(
            url, profile, credentials=credentials, timeout=timeout, max_bytes=max_bytes, transport=transport
        )
        self.profile = profile
        self.base_url = url
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

    # ---------------------------------------------------------------- writing

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
        """DELETE ``href``, with ``If-Match`` when its ETag is known.

        Returns:
            True when this request deleted it (200, 204); False when the server
            answered 404 or 410: it is already gone (someone else deleted it
            meanwhile; RFC 9110 §9.3.5), which is not an error.

        Raises:
            precondition_failed: it changed since ``etag`` was read (412).
        """
        try:
            await self._send("DELETE", href, headers={"If-Match": etag} if etag else {}, what=f"delete {href}")
        except self.profile.errors.not_found:
            return False
        return True

    async def move(self, href: str, destination: str, etag: str | None) -> None:
        """MOVE ``href`` to ``destination`` (RFC 4918 §9.9) with ``Overwrite: F`` and ``If-Match``.

        Raises:
            off_origin: ``destination`` is not on the configured origin (nothing sent).
        """
        headers = {"Destination": str(self.url(destination)), "Overwrite": "F"}
        if etag:
            headers["If-Match"] = etag
        await self._send("MOVE", href, headers=headers, what=f"move {href}")

    async def mkcol(self, path: str, body: str) -> None:
        """Create a collection at ``path`` with an extended MKCOL body (RFC 5689 §3)."""
        await self._send("MKCOL", path, body=body, what=f"create {path}")
