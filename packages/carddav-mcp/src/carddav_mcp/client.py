"""A thin CardDAV client (RFC 6352) on the family's WebDAV layer, and the one place backend errors are named.

It speaks exactly what the tools need: PROPFIND (listings with ETags),
REPORT addressbook-query / addressbook-multiget / sync-collection, GET, PUT
with ``If-Match`` or ``If-None-Match: *``, DELETE and MOVE with ``If-Match``,
and extended MKCOL. The confined session, discovery, privileges, member hrefs
and the translation of statuses live in :mod:`webdav_core`; :data:`PROFILE`
tells it carddav-mcp's words and exceptions (:mod:`carddav_mcp.errors`), so
nothing above this module sees an httpx exception or a status code.

A 412 is reported as :class:`PreconditionFailed` and never retried: the card
changed since it was read, and a blind retry would overwrite that change.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass

import httpx2 as httpx

from approval_core import before_send, report_progress
from approval_core.serving.stored_text import name_in_text, quoted_name
from carddav_mcp import davxml, errors
from carddav_mcp.davxml import CARDDAV, DAV, DavResponse, norm_href
from carddav_mcp.errors import (
    AuthenticationFailed,
    CardRejected,
    InvalidInput,
    ResponseTooLarge,
)
from carddav_mcp.settings import CardDavSettings
from webdav_core import (
    MAX_ID_LENGTH,
    MAX_REDIRECTS,
    Answer,
    Discovery,
    Profile,
    SyncResult,
    WebDavClient,
    account_of,
    allows_write,
    errors_of,
    folder,
    resolve_path,
)
from webdav_core.batches import read_in_batches
from webdav_core.origin import shown
from webdav_core.profile import CARDDAV_DIALECT
from webdav_core.versions import settled_modified

log = logging.getLogger("carddav_mcp")

__all__ = [
    "MAX_REDIRECTS",
    "PROFILE",
    "Answer",
    "BookInfo",
    "CardData",
    "CardDavClient",
    "Discovery",
    "SyncResult",
]

PROFILE = Profile.of(
    CARDDAV_DIALECT,
    program="carddav-mcp",
    prefix="CARDDAV",
    before_send=before_send,  # APPROVAL_PROFILE=every-write asks before each changing request
    quote=quoted_name,  # an error quotes a path or media type of words fenced
    name=name_in_text,
    errors=errors_of(
        errors,
        invalid_id=InvalidInput,
        too_large=ResponseTooLarge,
        unauthenticated=AuthenticationFailed,
        rejected=CardRejected,
    ),
)
"""carddav-mcp's words, settings and exceptions, for the WebDAV layer."""


def _listed_under(collection: str, href: str) -> bool:
    """Whether a book listed for ``collection`` is at or under it, at an href an id may name; logs one that is not."""
    try:
        resolve_path("href", href, "a path under the collection listed", PROFILE.errors, from_server=True)
    except InvalidInput:
        log.warning("a listed address book at a path no id may name (a dot segment, ...) was left out")
        return False
    if not href.startswith(folder(collection)) and href != collection:
        log.warning("a listed address book outside the collection that was listed was left out")
        return False
    return True


NOTED_SECONDS = 10.0
"""How long a book's last change noted by :meth:`CardDavClient.book` stands for the book's state (seconds)."""
MULTIGET_BATCH = 250
"""Hrefs per addressbook-multiget REPORT."""
_MAX_HREF = MAX_ID_LENGTH
"""The longest card href taken (as ids: ``backend.MAX_ID_LENGTH``)."""
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


def _book_info(response: DavResponse) -> BookInfo:
    return BookInfo(
        path=folder(response.href),
        display_name=response.text(DAV, "displayname") or None,
        description=response.text(CARDDAV, "addressbook-description") or None,
        writable=allows_write(response) is not False,
    )


def _is_book(response: DavResponse) -> bool:
    return response.has_child(DAV, "resourcetype", (CARDDAV, "addressbook"))


class CardDavClient(WebDavClient):
    """Async CardDAV client for one account, confined to the origin of ``CARDDAV_URL``.

    Every request goes through :class:`webdav_core.ConfinedSession`: its URL
    must have the scheme, host and port of ``CARDDAV_URL`` (else
    :class:`OffOrigin`, and nothing is sent); the credentials (basic auth and
    ``extra_headers``) are attached only to requests for that origin; a
    redirect is followed only within the origin, at most :data:`MAX_REDIRECTS`
    times; an answer is read as a stream and stopped at
    ``max_response_bytes``; the whole exchange, redirects and body included,
    ends after ``timeout`` seconds.

    Args:
        settings: Where to connect (``settings.require()`` must pass).
        transport: An httpx transport (tests of fault handling only).
    """

    member_description = "a card of the address book that was asked"

    def __init__(self, settings: CardDavSettings, transport: httpx.AsyncBaseTransport | None = None) -> None:
        url = settings.require()
        super().__init__(url, PROFILE, credentials=settings.extra_headers, transport=transport, **account_of(settings))
        self._text_match: bool | None = None
        self._modified: dict[str, tuple[str, float]] = {}  # path -> (settled getlastmodified, when it was answered)

    def card_in(self, book: str, raw: str) -> str | None:
        """The canonical path of a card href a server listed for ``book``, or None (logged) when it is not one.

        Taken only when it resolves, by the rules of ids, to ``book`` followed
        by exactly one segment on the configured origin (see
        :func:`webdav_core.member_in`).

        Args:
            book: The address book that was asked, canonical, ending in ``/``.
            raw: The href as the server wrote it.
        """
        return self.member_in(book, raw)

    def _resolved_card(self, book: str, raw: str) -> str | None:
        """:meth:`card_in` by the rules of ids, for any href (no quick path)."""
        return self._resolved_member(book, raw)

    # ---------------------------------------------------------------- address books

    async def address_books(self) -> list[BookInfo]:
        """Every address book reachable from the configured URL, sorted by path.

        The URL may be an address book, a home, a principal or the server root
        (see :meth:`discover`). Only books at or under the collection listed
        are taken, at an href an id may name (:func:`webdav_core.resolve_path`:
        no dot segment, encoded slash or control character): a ``/u/../etc/``
        or a book outside the home a server slipped into its answer is left
        out and logged.
        """
        found = await self.discover()
        start = norm_href(self.base_url) or "/"
        books: dict[str, BookInfo] = {}
        if found.method != "well-known":  # CARDDAV_URL answers PROPFIND: it may be a book or a home
            ms = await self._multistatus("PROPFIND", start, davxml.propfind(_BOOK_PROPS), "1", "list address books")
            books = {r.href: _book_info(r) for r in ms.responses if _is_book(r) and _listed_under(start, r.href)}
        if not books and found.home and found.home != start:
            home = found.home
            ms = await self._multistatus("PROPFIND", home, davxml.propfind(_BOOK_PROPS), "1", "list address books")
            books = {r.href: _book_info(r) for r in ms.responses if _is_book(r) and _listed_under(home, r.href)}
        return sorted(books.values(), key=lambda b: b.path)

    async def book(self, path: str) -> BookInfo | None:
        """The address book at ``path``, or None when that path is something else.

        The same PROPFIND asks for the book's ``DAV:getlastmodified``; a settled
        value (:func:`webdav_core.versions.settled_modified`) is noted for the
        next :meth:`modified_noted` of ``path``.

        Raises:
            NotFound: nothing at ``path``.
        """
        what = f"read {path}"
        body = davxml.propfind([*_BOOK_PROPS, (DAV, "getlastmodified")])
        answer = await self.session.send("PROPFIND", path, body=body, headers={"Depth": "0"}, what=what)
        self._modified.pop(path, None)
        for response in self.session.parsed(answer, what).responses:
            if _is_book(response):
                modified = settled_modified(response.text(DAV, "getlastmodified"), answer.headers.get("Date"))
                info = _book_info(response)
                if modified is not None:
                    self._modified[path] = self._modified[info.path] = (modified, time.monotonic())
                return info
        return None

    def modified_noted(self, path: str) -> str | None:
        """The settled last change :meth:`book` noted for ``path`` less than NOTED_SECONDS ago, once; else None.

        Taken once: it stands for the book's state at that answer, before
        whatever the caller reads next, and only for that read.
        """
        noted = self._modified.pop(path, None)
        if noted is None or time.monotonic() - noted[1] > NOTED_SECONDS:
            return None
        return noted[0]

    async def make_address_book(self, path: str, display_name: str) -> None:
        """Create an address book at ``path`` (extended MKCOL, RFC 5689)."""
        await self.mkcol(path, davxml.mkcol_addressbook(display_name))

    # ---------------------------------------------------------------- reading cards

    def _cards(self, ms: davxml.MultiStatus, book: str, asked: set[str] | None = None) -> list[CardData]:
        """The cards of a REPORT answer that lie in ``book`` (and, for a multiget, were asked for)."""
        cards: list[CardData] = []
        for r in ms.responses:
            if r.status != 200 or f"{{{CARDDAV}}}address-data" not in r.props:
                continue
            href = self.card_in(norm_href(book), r.raw or r.href)
            if href is None:
                continue
            if asked is not None and href not in asked:
                log.warning("left out %s in the multiget answer for %s: it was not asked for", shown(href), book)
                continue
            cards.append(CardData(href, r.text(DAV, "getetag"), r.props[f"{{{CARDDAV}}}address-data"].text or ""))
        return cards

    async def multiget(self, book: str, hrefs: Iterable[str], properties: list[str] | None = None) -> list[CardData]:
        """The cards at ``hrefs`` (addressbook-multiget, RFC 6352 §8.7, in batches); missing ones are left out.

        A batch the server fails as a whole (one stored card can make it fail) is read card by card with GET
        (:func:`webdav_core.batches.read_in_batches`); a card the server cannot send either is left out, named in
        the log.
        """

        async def many(batch: list[str]) -> list[CardData]:
            body = davxml.multiget(batch, properties)
            answer = await self._multistatus("REPORT", book, body, "1", f"read cards in {book}")
            return self._cards(answer, book, {norm_href(h) for h in batch})

        async def progress(done: int, total: int) -> None:  # a long read: say how far it has come
            await report_progress(done, total, "cards read")

        read = await read_in_batches(
            list(hrefs), many, self.get, errors=self.profile.errors, size=MULTIGET_BATCH, where=book, progress=progress
        )
        return read.found

    async def query(self, book: str, prop_filters: list[tuple[str, str]], *, anyof: bool = False) -> list[CardData]:
        """Cards of ``book`` whose properties equal the given texts (addressbook-query, RFC 6352 §8.6)."""
        body = davxml.addressbook_query(prop_filters, anyof=anyof)
        return self._cards(await self._multistatus("REPORT", book, body, "1", f"search {book}"), book)

    async def text_query(self, book: str, names: list[str], text: str) -> list[CardData]:
        """Cards of ``book`` where any of the vCard properties ``names`` contains ``text``, sorted by href.

        One addressbook-query REPORT (RFC 6352 §8.6) with a ``text-match``
        (§10.5.4, match-type ``contains``, collation ``i;unicode-casemap``) per
        property. The server decides what matches: callers check each card again.

        Raises:
            ResponseTooLarge: the answer is larger than ``max_response_bytes``.
            BackendError: the server refused the query (e.g. 403 supported-filter, 501).
        """
        body = davxml.addressbook_text_query(names, text)
        cards = self._cards(await self._multistatus("REPORT", book, body, "1", f"search {book}"), book)
        return sorted(cards, key=lambda c: c.href)

    def honours_text_match(self) -> bool:
        """Whether to ask this server for a ``text-match`` addressbook-query (learnt from its answers, then kept).

        No separate probe is sent: on a server that filters by parsing every
        card (Radicale) a probe costs as much as the search itself. The first
        search asks; a server that refuses the query, or answers with a card
        that does not hold the text asked for (it ignored the filter), is
        noted by :meth:`text_match_ignored` and later searches read whole
        books. Asking a server that ignores the filter costs one answer
        holding the whole book, which is still right: every card is matched
        again locally. The first answer is also checked for what it left out
        (:meth:`text_match_checked`): a server that misses cards holding the text
        (SOGo matches FN by the surname only) is not asked again.
        """
        return self._text_match is not False

    def text_match_checked(self) -> bool:
        """Whether a server-side answer was already found complete (the first one is checked by a full read)."""
        return self._text_match is True

    def text_match_complete(self) -> None:
        """Note that a server-side answer held every card a full read found (kept for the life of the client)."""
        if self._text_match is None:
            self._text_match = True

    def text_match_ignored(self) -> None:
        """Note that the server refuses or ignores ``text-match`` (kept for the life of the client)."""
        if self._text_match is not False:
            log.info("the server does not filter addressbook-query by text-match; searches read whole books")
        self._text_match = False

    async def get(self, href: str) -> CardData:
        """One card, fresh from the server (GET), with its ETag.

        Raises:
            NotFound: no card at ``href``.
            BackendError: the answer is not a vCard (RFC 6350 §10.1 ``text/vcard``).
        """
        response = await self.fetch(href)
        return CardData(norm_href(href), response.headers.get("ETag"), response.text)

    # ---------------------------------------------------------------- writing

    async def put(self, href: str, text: str, *, etag: str | None) -> str | None:
        """Write a card: ``If-Match: etag`` to replace, ``If-None-Match: *`` when ``etag`` is None.

        Returns:
            The new ETag, when the server sends one.

        Raises:
            PreconditionFailed: the card changed (or, on create, exists).
            CardRejected: the server refused the vCard.
        """
        return await self.store(href, text.encode(), "text/vcard; charset=utf-8", etag=etag)
