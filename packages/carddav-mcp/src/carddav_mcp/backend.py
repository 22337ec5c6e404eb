"""What the tools share: the client, the CARDDAV_ADDRESSBOOKS scope, and a card cache.

Every id a tool receives is decoded here, and the address-book limit is
enforced in the same step, so no tool can reach a book outside it (group
members included: they are decoded through :meth:`Backend.card_id`).

Bulk reads (listings, search, groups) go through a cache keyed on each
card's ETag: a PROPFIND lists the ETags, and only cards whose ETag changed
are fetched again (addressbook-multiget). Writes never build on the cache:
they read the card fresh with GET and write with its ETag.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from urllib.parse import unquote

from carddav_mcp.client import BookInfo, CardData, CardDavClient
from carddav_mcp.davxml import norm_href
from carddav_mcp.errors import (
    AuthenticationFailed,
    BackendError,
    Forbidden,
    InvalidInput,
    NotAllowed,
    NotFound,
    Unreachable,
)
from carddav_mcp.settings import ADDRESSBOOKS_ENV, CardDavSettings
from carddav_mcp.vcard import Card

__all__ = ["Backend", "Entry"]

log = logging.getLogger("carddav_mcp")


@dataclass(frozen=True)
class Entry:
    """A card with its parsed form: ``data.href`` is the contact id.

    ``partial`` is True when only some properties were asked for (a listing);
    a server may still have sent the whole card.
    """

    data: CardData
    card: Card
    partial: bool = False


class Backend:
    """The shared state of one server process.

    Args:
        settings: CardDAV settings (may be incomplete: a tool then raises
            :class:`~carddav_mcp.errors.NotConfigured`).
    """

    def __init__(self, settings: CardDavSettings) -> None:
        self.settings = settings
        self._client: CardDavClient | None = None
        self._cache: dict[str, dict[str, Entry]] = {}
        self._rows: dict[str, tuple[str | None, dict[str, str | None]]] = {}

    def client(self) -> CardDavClient:
        """The CardDAV client, made on first use.

        Raises:
            NotConfigured: the settings lack ``CARDDAV_URL`` (or half the credentials).
        """
        if self._client is None:
            self._client = CardDavClient(self.settings)
        return self._client

    async def aclose(self) -> None:
        """Close the client, if one was made."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    # ---------------------------------------------------------------- ids and scope

    def allowed(self, book: str) -> bool:
        """Whether ``CARDDAV_ADDRESSBOOKS`` lets this server use ``book`` (a normalised path)."""
        limit = self.settings.addressbooks
        if not limit:
            return True
        last = book.rstrip("/").rsplit("/", 1)[-1]
        return book in limit or book.rstrip("/") in limit or last in limit

    def book_id(self, field: str, value: str) -> str:
        """Decode an address-book id (its path) and check it is in scope.

        Raises:
            InvalidInput: not a path starting with ``/``.
            NotAllowed: outside ``CARDDAV_ADDRESSBOOKS``.
        """
        if not value.startswith("/") or "#" in value or _dot_segment(value):
            raise InvalidInput(
                field, "must be an address book's path as list_address_books returns it, e.g. /user/work/"
            )
        path = norm_href(value)
        path = path if path.endswith("/") else path + "/"
        if not self.allowed(path):
            raise NotAllowed(
                f"{field}: {path} is not one of the address books this server is limited to ({ADDRESSBOOKS_ENV})."
            )
        return path

    def card_id(self, field: str, value: str) -> tuple[str, str]:
        """Decode a contact id (a card's path) into (href, address-book path), checking the scope.

        Raises:
            InvalidInput: not a card path (``/user/book/card.vcf``).
            NotAllowed: its address book is outside ``CARDDAV_ADDRESSBOOKS``.
        """
        if not value.startswith("/") or value.endswith("/") or "#" in value or _dot_segment(value):
            raise InvalidInput(field, "must be a contact id (a card's path, as list_contacts returns it)")
        href = norm_href(value)
        book = href.rsplit("/", 1)[0] + "/"
        if book.count("/") < 2:
            raise InvalidInput(field, "must be a contact id (a card's path, as list_contacts returns it)")
        self.book_id(field, book)
        return href, book

    # ---------------------------------------------------------------- reading

    async def books(self) -> list[BookInfo]:
        """The address books in scope."""
        return [b for b in await self.client().address_books() if self.allowed(b.path)]

    async def book(self, field: str, value: str) -> BookInfo:
        """The address book a field names: decoded, in scope, existing, and an address book.

        Raises:
            InvalidInput / NotAllowed: see :meth:`book_id`.
            NotFound: nothing there, or it is not an address book.
        """
        path = self.book_id(field, value)
        try:
            info = await self.client().book(path)
        except NotFound:
            info = None
        if info is None:
            raise NotFound(f"{field}: there is no address book at {path}; list_address_books shows the ones there are.")
        return info

    async def rows(self, book: str) -> list[tuple[str, str | None]]:
        """(href, ETag) of every card in ``book``, sorted by href.

        Kept up to date with RFC 6578 sync-collection: the first call lists
        everything and keeps the sync token, later calls fetch only what
        changed since. A token the server no longer accepts leads to a full
        listing; a server without sync-collection is listed by PROPFIND.
        """
        client = self.client()
        token, known = self._rows.get(book, (None, {}))
        try:
            result = await client.sync(book, token)
        except (NotFound, Unreachable, AuthenticationFailed):
            raise
        except BackendError:
            try:
                result = await client.sync(book, None) if token is not None else None
            except BackendError:
                result = None
            if result is None:
                listing = await client.list_etags(book)
                self._rows.pop(book, None)
                return listing
            token, known = None, {}
        current = dict(known) if token is not None else {}
        for href in result.deleted:
            current.pop(href, None)
        current.update(result.changed)
        self._rows[book] = (result.token, current)
        return sorted(current.items())

    async def writable_book(self, field: str, value: str) -> BookInfo:
        """Like :meth:`book`, and the account may write there (checked before anybody is asked).

        Raises:
            Forbidden: the server reports no write privilege on the book.
        """
        info = await self.book(field, value)
        if not info.writable:
            raise Forbidden(
                f"{field}: the address book {info.path} is read-only for this account; nothing was changed."
            )
        return info

    async def entries(
        self,
        book: str,
        hrefs: list[tuple[str, str | None]] | None = None,
        properties: list[str] | None = None,
    ) -> list[Entry]:
        """Parsed cards of ``book`` (all, or the given (href, ETag) rows), fetching only what changed.

        Args:
            book: The address book's path.
            hrefs: (href, ETag) rows to read; default every card of the book.
            properties: Ask the server for only these vCard properties
                (a listing); the entries are then marked partial, and a later
                call without ``properties`` fetches the whole cards.

        Cards the server holds but that do not parse are left out (and logged).
        """
        client = self.client()
        rows = await self.rows(book) if hrefs is None else hrefs
        cached = self._cache.setdefault(book, {})

        def stale(href: str, etag: str | None) -> bool:
            entry = cached.get(href)
            return entry is None or etag is None or entry.data.etag != etag or (entry.partial and not properties)

        wanted = [href for href, etag in rows if stale(href, etag)]
        if wanted:
            for data in await client.multiget(book, wanted, properties):
                try:
                    cached[data.href] = Entry(data, Card.parse(data.text), partial=properties is not None)
                except ValueError as exc:
                    log.warning("skipping an unreadable card at %s: %s", data.href, exc)
        if hrefs is None:
            present = {href for href, _ in rows}
            for gone in set(cached) - present:
                del cached[gone]
        return [cached[href] for href, _ in rows if href in cached]

    async def fresh(self, field: str, href: str) -> Entry:
        """One card read fresh with GET (for a write, or a whole-card read).

        Raises:
            NotFound: no card there.
            BackendError: the server's card is not a readable vCard.
        """
        try:
            data = await self.client().get(href)
        except NotFound:
            raise NotFound(f"{field}: there is no card at {href} (it may have been moved or deleted).", 404) from None
        try:
            return Entry(data, Card.parse(data.text))
        except ValueError as exc:
            raise BackendError(f"{field}: the card at {href} is not a readable vCard ({exc}).") from exc

    async def hrefs_with_uid(self, book: str, uid: str) -> list[str]:
        """Cards of ``book`` whose UID is exactly ``uid`` (addressbook-query)."""
        found = await self.client().query(book, [("UID", uid)])
        return [c.href for c in found if (Card.parse(c.text).uid or "") == uid]


def _dot_segment(path: str) -> bool:
    """Whether ``path`` has a ``.`` or ``..`` segment, percent-encoded ones (``%2e%2e``) included (RFC 3986 §5.2.4)."""
    return any(segment in {".", ".."} for segment in unquote(path).split("/"))
