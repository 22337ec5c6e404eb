"""What the tools share: the client, the scope of ids, and a card cache.

Every address-book id, contact id and group id a tool receives is resolved
here and nowhere else (:func:`resolve_path`, then :meth:`Backend.book_id` /
:meth:`Backend.card_id`): fully percent-decoded, refused when it holds an
encoded slash, a dot segment (RFC 3986 §5.2.4), a backslash, a scheme, a
host, a query or fragment, a control character or a second layer of
percent-encoding, and re-encoded into one canonical path. That path is then
checked whole against the scope: the address books of
``CARDDAV_ADDRESSBOOKS`` (each compared as a complete path) when it is set,
else the account's address-book home (RFC 6352 §7.1.1). The client then sends
it only to the scheme, host and port of ``CARDDAV_URL``
(:meth:`CardDavClient.url`), so no id can lead a request or a credential to
another server.

Bulk reads (listings, search, groups) go through a cache keyed on each
card's ETag: a PROPFIND lists the hrefs and ETags, and only the cards a call
needs whose ETag changed are fetched (addressbook-multiget): a listing page
reads its own cards, not the book. A text search first asks the server for
the cards that can match (addressbook-query), where the server honours it.
Writes never build on the cache: they read the card fresh with GET and write
with its ETag.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from urllib.parse import quote

from carddav_mcp.client import PROFILE, BookInfo, CardDavClient
from carddav_mcp.davxml import norm_href
from carddav_mcp.entries import PARSE_IN_THREAD_CHARS, Entry, cards_with_uid, parse_card
from carddav_mcp.errors import (
    AuthenticationFailed,
    BackendError,
    Forbidden,
    InvalidInput,
    NotAllowed,
    NotFound,
    ResponseTooLarge,
    Unreachable,
)
from carddav_mcp.narrowing import holds, left_out_cards
from carddav_mcp.rows import BookRows
from carddav_mcp.search import TEXT_PROPERTIES, server_needle
from carddav_mcp.settings import ADDRESSBOOKS_ENV, CardDavSettings
from carddav_mcp.vcard import preload
from webdav_core import paths
from webdav_core.paths import folder as _folder

__all__ = ["MAX_ID_LENGTH", "PARSE_IN_THREAD_CHARS", "Backend", "Entry", "parse_card", "resolve_path"]

log = logging.getLogger("carddav_mcp")

MAX_ID_LENGTH = paths.MAX_ID_LENGTH
"""Characters in an id, as the tools' input schemas also say."""


def resolve_path(field: str, value: str, rule: str) -> str:
    """An id decoded into the one canonical, percent-encoded server path it names.

    The rules are the WebDAV layer's (:func:`webdav_core.resolve_path`: one
    decoding, no dot segments, no encoded slash, no second encoding, no host).

    Raises:
        InvalidInput: the id breaks one of them, naming ``field``.
    """
    return paths.resolve_path(field, value, rule, PROFILE.errors)


_BOOK_RULE = "an address book's id (its path) as list_address_books returns it, e.g. /user/work/"
_CARD_RULE = "a contact id (a card's path, as list_contacts returns it), e.g. /user/work/ada.vcf"


@dataclass(frozen=True)
class _Scope:
    """Which address books ids may name: exact book paths (the limit), or everything under some roots (home)."""

    books: frozenset[str]
    roots: tuple[str, ...]

    def admits(self, book: str) -> bool:
        return book in self.books or any(book.startswith(root) for root in self.roots)


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
        self._rows = BookRows()
        self._scope: _Scope | None = None
        self._listed = False  # whether the scope has looked for name entries among the listed books

    def client(self) -> CardDavClient:
        """The CardDAV client, made on first use.

        Raises:
            NotConfigured: the settings lack ``CARDDAV_URL`` (or half the credentials).
        """
        if self._client is None:
            self._client = CardDavClient(self.settings)
            preload()  # the card parser's library, imported while the first requests are out
        return self._client

    async def aclose(self) -> None:
        """Close the client, if one was made."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    # ---------------------------------------------------------------- ids and scope

    async def scope(self, *, refresh: bool = False) -> _Scope:
        """The address books ids may name, worked out once (again with ``refresh``).

        The home is the account's ``addressbook-home-set`` (RFC 6352 §7.1.1),
        found from ``CARDDAV_URL`` as :meth:`CardDavClient.discover` does (RFC 6764),
        or, when the server publishes none, the path of ``CARDDAV_URL``.
        With ``CARDDAV_ADDRESSBOOKS``: each entry that is a path is one book
        (resolved like an id); each entry that is a name is the book of that
        name in the home and, once an id missed (``refresh``), every listed
        book whose last segment is that name. Without it: every path under
        the home.
        """
        if self._scope is not None and not refresh:
            return self._scope
        limit = self.settings.addressbooks
        client = self.client()
        home = (await client.discover(refresh=refresh)).home
        if not home or not home.startswith("/") or home.startswith("//"):
            home = norm_href(client.base_url)
        home = _folder(home)
        if limit:
            paths = {_folder(resolve_path(ADDRESSBOOKS_ENV, e, _BOOK_RULE)) for e in limit if e.startswith("/")}
            names = {e.strip("/") for e in limit if not e.startswith("/")}
            paths |= {_folder(resolve_path(ADDRESSBOOKS_ENV, home + quote(n, safe=""), _BOOK_RULE)) for n in names}
            if names and refresh:  # a book of that name elsewhere (shared with the account), looked for on a miss
                listed = await client.address_books()
                paths |= {b.path for b in listed if b.path.rstrip("/").rsplit("/", 1)[-1] in names}
            self._scope = _Scope(frozenset(paths), ())
        else:
            self._scope = _Scope(frozenset(), (home,))
        return self._scope

    async def allowed(self, book: str) -> bool:
        """Whether ``book`` (a canonical path ending in ``/``) is in scope.

        On the first miss, when ``CARDDAV_ADDRESSBOOKS`` names books by name,
        the books are listed once to find books of those names outside the home.
        """
        if (await self.scope()).admits(book):
            return True
        if not self._listed and any(not e.startswith("/") for e in self.settings.addressbooks):
            self._listed = True
            return (await self.scope(refresh=True)).admits(book)
        return False

    async def book_id(self, field: str, value: str) -> str:
        """Resolve an address-book id (its path) and check it is in scope.

        Returns:
            The book's canonical path, ending in ``/``.

        Raises:
            InvalidInput: not a path this server hands out (see :func:`resolve_path`).
            NotAllowed: outside ``CARDDAV_ADDRESSBOOKS``, or outside the account's home.
        """
        path = _folder(resolve_path(field, value, _BOOK_RULE))
        if not await self.allowed(path):
            raise NotAllowed(self._outside(field, path))
        return path

    def card_path(self, field: str, value: str) -> tuple[str, str]:
        """Resolve a contact id into (href, address-book path), checked against the scope already worked out.

        For synchronous code whose ids must also lie in a book this call has
        already resolved (group members in their group's book); everywhere
        else use :meth:`card_id`. Before the scope is known (no book resolved
        yet) only the form of the id is checked.

        Raises:
            InvalidInput: not a card path (``/user/book/card.vcf``).
            NotAllowed: its book is outside the scope worked out so far.
        """
        if value.endswith("/"):
            raise InvalidInput(field, f"must be {_CARD_RULE}; this one names a collection")
        href = resolve_path(field, value, _CARD_RULE)
        book = href.rsplit("/", 1)[0] + "/"
        if book.count("/") < 2:
            raise InvalidInput(field, f"must be {_CARD_RULE}")
        if self._scope is not None and not self._scope.admits(book):
            raise NotAllowed(self._outside(field, book))
        return href, book

    async def card_id(self, field: str, value: str) -> tuple[str, str]:
        """Resolve a contact or group id into (href, address-book path) and check its book is in scope.

        Raises:
            InvalidInput: not a card path (``/user/book/card.vcf``).
            NotAllowed: its address book is outside the scope.
        """
        href, book = self.card_path(field, value)
        if not await self.allowed(book):
            raise NotAllowed(self._outside(field, book))
        return href, book

    def _outside(self, field: str, path: str) -> str:
        if self.settings.addressbooks:
            return f"{field}: {path} is not one of the address books this server is limited to ({ADDRESSBOOKS_ENV})."
        return f"{field}: {path} is outside this account's address books; list_address_books shows them."

    # ---------------------------------------------------------------- reading

    async def books(self) -> list[BookInfo]:
        """The address books in scope."""
        listed = await self.client().address_books()
        scope = await self.scope()
        names = {e.strip("/") for e in self.settings.addressbooks if not e.startswith("/")}
        named = {b.path for b in listed if b.path.rstrip("/").rsplit("/", 1)[-1] in names}
        if not named <= scope.books:
            self._scope = scope = _Scope(scope.books | named, scope.roots)
        return [b for b in listed if scope.admits(b.path)]

    async def book(self, field: str, value: str) -> BookInfo:
        """The address book a field names: decoded, in scope, existing, and an address book.

        Raises:
            InvalidInput / NotAllowed: see :meth:`book_id`.
            NotFound: nothing there, or it is not an address book.
        """
        path = await self.book_id(field, value)
        try:
            info = await self.client().book(path)
        except NotFound:
            info = None
        if info is None:
            raise NotFound(f"{field}: there is no address book at {path}; list_address_books shows the ones there are.")
        return info

    async def rows(self, book: str) -> list[tuple[str, str | None]]:
        """(href, ETag) of every card in ``book``, sorted by href, as the server holds them now.

        Kept between calls (:class:`carddav_mcp.rows.BookRows`: under the book's settled last change that
        :meth:`book` just read, else its CTag); read again, one PROPFIND of depth 1 for ``DAV:getetag``, when it
        changed. Not RFC 6578 sync-collection: Radicale's first one records history for every card.
        """
        client = self.client()
        return await self._rows.get(book, client.versions, client.modified_noted(book), lambda: client.list_etags(book))

    async def text_candidates(self, book: str, query: str) -> list[Entry] | None:
        """The cards of ``book`` that may match the text ``query``, read by a server-side query; None to read all.

        When :func:`~carddav_mcp.search.server_needle` finds a piece of the
        query every matching card must hold, and the server honours
        ``text-match`` (:meth:`CardDavClient.honours_text_match`, learnt from its answers),
        one addressbook-query REPORT (RFC 6352 §8.6, §10.5) asks for the cards
        holding it in FN, NICKNAME, EMAIL, TEL or ORG. The result is a superset
        of the matches, sorted by href; the caller decides on each card with
        :func:`~carddav_mcp.search.match_text`. Cards already held with the same
        ETag are not parsed again; the cards read are kept (whole). An answer
        holding a card without the needle shows that the server ignored the
        filter, and the first answer is checked against a full read for cards it
        left out (SOGo): either way later searches read every card.

        Returns None (the caller then reads every card) for a phone query, a query without such a piece, a
        server that ignores, refuses or misapplies the filter, or an answer over ``CARDDAV_MAX_RESPONSE_BYTES``.

        Raises:
            Unreachable / AuthenticationFailed / NotFound: as for any read.
        """
        needle = server_needle(query)
        if needle is None:
            return None
        client = self.client()
        if not client.honours_text_match():
            return None
        try:
            found = await client.text_query(book, TEXT_PROPERTIES, needle)
        except (Unreachable, AuthenticationFailed, NotFound):
            raise
        except ResponseTooLarge as exc:  # too many candidates this time; the server may still filter
            log.info("a server-side search of %s answered too much (%s); reading every card instead", book, exc)
            return None
        except BackendError as exc:
            log.info("a server-side search of %s was refused (%s); reading every card instead", book, exc)
            client.text_match_ignored()
            return None
        cached = self._cache.setdefault(book, {})
        entries: list[Entry] = []
        for data in found:
            entry = cached.get(data.href)
            if entry is None or entry.partial or data.etag is None or entry.data.etag != data.etag:
                try:
                    entry = cached[data.href] = Entry(data, await parse_card(data.text))
                except ValueError as exc:
                    log.warning("skipping an unreadable card at %s: %s", data.href, exc)
                    continue
            entries.append(entry)
        if any(not holds(e, needle) for e in entries):
            client.text_match_ignored()  # it sent a card without the text: the filter was not applied
        elif not client.text_match_checked() and await left_out_cards(
            client, book, lambda: self.entries(book), entries, needle
        ):
            return None
        return entries

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
                    cached[data.href] = Entry(data, await parse_card(data.text), partial=properties is not None)
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
            return Entry(data, await parse_card(data.text))
        except ValueError as exc:
            raise BackendError(f"{field}: the card at {href} is not a readable vCard ({exc}).") from exc

    async def hrefs_with_uid(self, book: str, uid: str) -> list[str]:
        """Cards of ``book`` whose UID is exactly ``uid`` (see :func:`carddav_mcp.entries.cards_with_uid`)."""
        return await cards_with_uid(self.client(), book, uid)
