"""A thin CardDAV client (RFC 6352) on httpx, and the one place backend errors are translated.

It speaks exactly what the tools need: PROPFIND (discovery, listings with
ETags), REPORT addressbook-query / addressbook-multiget / sync-collection,
GET, PUT with ``If-Match`` or ``If-None-Match: *``, DELETE and MOVE with
``If-Match``, and extended MKCOL. Every HTTP failure becomes one of the
exceptions of :mod:`carddav_mcp.errors` in :meth:`CardDavClient._send`;
nothing above this module sees an httpx exception or a status code.

A 412 is reported as :class:`PreconditionFailed` and never retried: the card
changed since it was read, and a blind retry would overwrite that change.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urljoin

import httpx2 as httpx

from carddav_mcp import davxml
from carddav_mcp.davxml import CARDDAV, DAV, DavResponse, norm_href
from carddav_mcp.errors import (
    AuthenticationFailed,
    BackendError,
    CardRejected,
    Conflict,
    Forbidden,
    NotFound,
    PreconditionFailed,
    Unreachable,
)
from carddav_mcp.settings import CardDavSettings

__all__ = ["BookInfo", "CardData", "CardDavClient", "SyncResult"]

MULTIGET_BATCH = 250
"""Hrefs per addressbook-multiget REPORT."""

_WRITE_PRIVILEGES = {"write", "write-content", "bind", "all"}
_BOOK_PROPS = [
    (DAV, "resourcetype"),
    (DAV, "displayname"),
    (CARDDAV, "addressbook-description"),
    (DAV, "current-user-privilege-set"),
]  # not DAV:sync-token: Radicale computes it over every card, ~1 s for 5,000


@dataclass(frozen=True)
class BookInfo:
    """An address book as the server describes it.

    Attributes:
        path: Normalised collection path, ending in ``/``.
        display_name: ``DAV:displayname``, or None.
        description: ``CARDDAV:addressbook-description``, or None.
        writable: False only when the server reports privileges without a
            write privilege (RFC 3744 §5.4); True when it reports none.
    """

    path: str
    display_name: str | None
    description: str | None
    writable: bool


@dataclass(frozen=True)
class CardData:
    """One vCard resource: its href (normalised path), ETag and text."""

    href: str
    etag: str | None
    text: str


@dataclass(frozen=True)
class SyncResult:
    """An RFC 6578 sync-collection answer: the new token, changed (href, ETag) pairs, deleted hrefs."""

    token: str | None
    changed: list[tuple[str, str | None]]
    deleted: list[str]


def _book_info(response: DavResponse) -> BookInfo:
    privileges = response.props.get(f"{{{DAV}}}current-user-privilege-set")
    writable = True
    if privileges is not None:
        names = {el.tag.split("}")[-1] for el in privileges.iter() if el.tag != privileges.tag}
        writable = bool(names & _WRITE_PRIVILEGES)
    path = response.href if response.href.endswith("/") else response.href + "/"
    return BookInfo(
        path=path,
        display_name=response.text(DAV, "displayname") or None,
        description=response.text(CARDDAV, "addressbook-description") or None,
        writable=writable,
    )


def _is_book(response: DavResponse) -> bool:
    return response.has_child(DAV, "resourcetype", (CARDDAV, "addressbook"))


class CardDavClient:
    """Async CardDAV client for one account.

    Args:
        settings: Where to connect (``settings.require()`` must pass).
        transport: An httpx transport (tests of fault handling only).
    """

    def __init__(self, settings: CardDavSettings, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.base_url = settings.require()
        auth = (
            httpx.BasicAuth(settings.username, settings.password) if settings.username and settings.password else None
        )
        self._http = httpx.AsyncClient(
            auth=auth,
            headers=dict(settings.extra_headers),
            timeout=settings.timeout,
            transport=transport,
            follow_redirects=False,
        )

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    def url(self, path: str) -> str:
        """The absolute URL of a server path."""
        return urljoin(self.base_url, path)

    # ---------------------------------------------------------------- transport and error translation

    async def _send(
        self,
        method: str,
        path: str,
        *,
        body: str | bytes | None = None,
        headers: Mapping[str, str] | None = None,
        what: str,
    ) -> httpx.Response:
        """Send one request; translate every failure into a :mod:`carddav_mcp.errors` exception."""
        sent = dict(headers or {})
        if body is not None and "Content-Type" not in sent:
            sent["Content-Type"] = "application/xml; charset=utf-8"
        try:
            response = await self._http.request(method, self.url(path), content=body, headers=sent)
        except httpx.TimeoutException as exc:
            raise Unreachable(f"{what}: the CardDAV server did not answer in time.") from exc
        except httpx.HTTPError as exc:
            raise Unreachable(f"{what}: could not reach the CardDAV server ({type(exc).__name__}).") from exc
        status = response.status_code
        if status < 300:
            return response
        text = response.text[:2000]
        if status == 401:
            raise AuthenticationFailed(
                f"{what}: the server did not accept the credentials; check CARDDAV_USERNAME and CARDDAV_PASSWORD.",
                status,
            )
        if status == 403:
            raise Forbidden(f"{what}: this account may not do that there (403).", status)
        if status in {404, 410}:
            raise NotFound(f"{what}: not found on the server ({status}).", status)
        if status == 409 or "uid-conflict" in text:
            raise Conflict(f"{what}: the server reports a conflict ({status}); a card with that UID may exist.", status)
        if status == 412 and "valid-address-data" not in text and "supported-address-data" not in text:
            raise PreconditionFailed(
                f"{what}: the card changed on the server since it was read (412), so nothing was written. "
                "Read it again and repeat the change if it still applies.",
                status,
            )
        if status in {400, 412, 415, 422}:
            raise CardRejected(f"{what}: the server refused the vCard as invalid ({status}).", status)
        raise BackendError(f"{what}: the CardDAV server answered {status}.", status)

    async def _multistatus(self, method: str, path: str, body: str, depth: str, what: str) -> davxml.MultiStatus:
        response = await self._send(method, path, body=body, headers={"Depth": depth}, what=what)
        try:
            return davxml.parse_multistatus(response.content)
        except ValueError as exc:
            raise BackendError(f"{what}: the server's answer could not be read: {exc}.", response.status_code) from exc

    # ---------------------------------------------------------------- discovery

    async def options(self, path: str = "") -> set[str]:
        """The DAV compliance classes of ``path`` (OPTIONS, RFC 4918 §10.1), e.g. ``{"1", "3", "addressbook"}``."""
        response = await self._send("OPTIONS", path or self.base_url, what="OPTIONS")
        header = response.headers.get("DAV", "")
        return {part.strip() for part in header.split(",") if part.strip()}

    async def principal(self) -> str | None:
        """The current user's principal path (RFC 5397), or None if the server does not say."""
        ms = await self._multistatus(
            "PROPFIND", self.base_url, davxml.propfind([(DAV, "current-user-principal")]), "0", "find the principal"
        )
        for response in ms.responses:
            hrefs = response.hrefs(DAV, "current-user-principal")
            if hrefs:
                return hrefs[0]
        return None

    async def home(self, principal: str) -> str | None:
        """The principal's ``addressbook-home-set`` (RFC 6352 §7.1.1), or None."""
        ms = await self._multistatus(
            "PROPFIND", principal, davxml.propfind([(CARDDAV, "addressbook-home-set")]), "0", "find the home"
        )
        for response in ms.responses:
            hrefs = response.hrefs(CARDDAV, "addressbook-home-set")
            if hrefs:
                return hrefs[0]
        return None

    async def address_books(self) -> list[BookInfo]:
        """Every address book reachable from the configured URL, sorted by path.

        The URL may be an address book, a home, a principal or the server root.
        """
        start = norm_href(self.base_url)
        ms = await self._multistatus("PROPFIND", start, davxml.propfind(_BOOK_PROPS), "1", "list address books")
        books = {r.href: _book_info(r) for r in ms.responses if _is_book(r)}
        if not books:
            principal = await self.principal()
            home = await self.home(principal) if principal else None
            if home and home != start:
                ms = await self._multistatus("PROPFIND", home, davxml.propfind(_BOOK_PROPS), "1", "list address books")
                books = {r.href: _book_info(r) for r in ms.responses if _is_book(r)}
        return sorted(books.values(), key=lambda b: b.path)

    async def book(self, path: str) -> BookInfo | None:
        """The address book at ``path``, or None when that path is something else.

        Raises:
            NotFound: nothing at ``path``.
        """
        ms = await self._multistatus("PROPFIND", path, davxml.propfind(_BOOK_PROPS), "0", f"read {path}")
        for response in ms.responses:
            if _is_book(response):
                return _book_info(response)
        return None

    async def supports_sync(self, path: str) -> bool:
        """Whether ``path`` lists the sync-collection REPORT among its supported reports (RFC 6578 §3.1)."""
        body = davxml.propfind([(DAV, "supported-report-set")])
        ms = await self._multistatus("PROPFIND", path, body, "0", f"read {path}")
        return any(r.has_child(DAV, "supported-report-set", (DAV, "sync-collection")) for r in ms.responses)

    # ---------------------------------------------------------------- reading cards

    async def list_etags(self, book: str) -> list[tuple[str, str | None]]:
        """(href, ETag) of every card in ``book``, sorted by href (PROPFIND depth 1)."""
        ms = await self._multistatus(
            "PROPFIND", book, davxml.propfind([(DAV, "getetag"), (DAV, "resourcetype")]), "1", f"list {book}"
        )
        own = norm_href(book)
        rows = [
            (r.href, r.text(DAV, "getetag"))
            for r in ms.responses
            if r.href.rstrip("/") != own.rstrip("/") and not r.has_child(DAV, "resourcetype", (DAV, "collection"))
        ]
        return sorted(rows)

    def _cards(self, ms: davxml.MultiStatus) -> list[CardData]:
        return [
            CardData(r.href, r.text(DAV, "getetag"), r.props[f"{{{CARDDAV}}}address-data"].text or "")
            for r in ms.responses
            if r.status == 200 and f"{{{CARDDAV}}}address-data" in r.props
        ]

    async def multiget(self, book: str, hrefs: Iterable[str], properties: list[str] | None = None) -> list[CardData]:
        """The cards at ``hrefs`` (addressbook-multiget, in batches); missing ones are left out."""
        wanted = list(hrefs)
        cards: list[CardData] = []
        for start in range(0, len(wanted), MULTIGET_BATCH):
            body = davxml.multiget(wanted[start : start + MULTIGET_BATCH], properties)
            cards.extend(self._cards(await self._multistatus("REPORT", book, body, "1", f"read cards in {book}")))
        return cards

    async def query(self, book: str, prop_filters: list[tuple[str, str]], *, anyof: bool = False) -> list[CardData]:
        """Cards of ``book`` whose properties equal the given texts (addressbook-query)."""
        body = davxml.addressbook_query(prop_filters, anyof=anyof)
        return self._cards(await self._multistatus("REPORT", book, body, "1", f"search {book}"))

    async def get(self, href: str) -> CardData:
        """One card, fresh from the server (GET), with its ETag.

        Raises:
            NotFound: no card at ``href``.
        """
        response = await self._send("GET", href, what=f"read {href}")
        return CardData(norm_href(href), response.headers.get("ETag"), response.text)

    async def sync(self, book: str, token: str | None) -> SyncResult:
        """Changes since ``token`` (RFC 6578); None for a first, full sync."""
        ms = await self._multistatus("REPORT", book, davxml.sync_collection(token), "1", f"sync {book}")
        changed = [
            (r.href, r.text(DAV, "getetag")) for r in ms.responses if r.status != 404 and not r.href.endswith("/")
        ]
        deleted = [r.href for r in ms.responses if r.status == 404]
        return SyncResult(ms.sync_token, sorted(changed), sorted(deleted))

    # ---------------------------------------------------------------- writing

    async def put(self, href: str, text: str, *, etag: str | None) -> str | None:
        """Write a card: ``If-Match: etag`` to replace, ``If-None-Match: *`` when ``etag`` is None.

        Returns:
            The new ETag, when the server sends one.

        Raises:
            PreconditionFailed: the card changed (or, on create, exists).
            CardRejected: the server refused the vCard.
        """
        headers = {"Content-Type": "text/vcard; charset=utf-8"}
        headers.update({"If-Match": etag} if etag else {"If-None-Match": "*"})
        response = await self._send("PUT", href, body=text.encode(), headers=headers, what=f"write {href}")
        return response.headers.get("ETag")

    async def delete(self, href: str, etag: str | None) -> None:
        """DELETE a card, with ``If-Match`` when its ETag is known (200 and 204 both succeed)."""
        await self._send("DELETE", href, headers={"If-Match": etag} if etag else {}, what=f"delete {href}")

    async def move(self, href: str, destination: str, etag: str | None) -> None:
        """MOVE a card to ``destination`` (RFC 4918 §9.9) with ``Overwrite: F`` and ``If-Match``."""
        headers = {"Destination": self.url(destination), "Overwrite": "F"}
        if etag:
            headers["If-Match"] = etag
        await self._send("MOVE", href, headers=headers, what=f"move {href}")

    async def make_address_book(self, path: str, display_name: str) -> None:
        """Create an address book at ``path`` (extended MKCOL, RFC 5689)."""
        await self._send("MKCOL", path, body=davxml.mkcol_addressbook(display_name), what=f"create {path}")
