"""A book's rows (the href and ETag of every card), kept while the book has not changed.

Two validators decide whether rows read earlier still hold, the cheaper first:

* the book's ``DAV:getlastmodified`` (RFC 4918 §15.7), as the PROPFIND of depth 0
  that resolves the book gave it moments before (:meth:`CardDavClient.book`),
  once settled (the server's clock had left the second it names,
  :func:`webdav_core.versions.settled_modified`), on a server known to move it
  with every change of a member (:data:`webdav_core.last_change.KEEPS_MODIFIED`,
  asked once per client before kept rows are first served by it). Rows read after such a value
  are kept under it: any change after that answer lands in a later second, so
  the value moves, and the rows are read again. Nothing more is asked before or
  after the read, so a first page costs no version request at all. On
  Radicale the value comes from the files' times (a few ms for 5,000 cards),
  where the CTag is computed from every card (0.2-0.4 s for 5,000);
* else the book's CTag or sync-token (:class:`webdav_core.KeptByVersion`: asked
  before the read and again after it, the rows kept only when both agree).

Either way the count of writes sent to the book from here is part of what the
rows are kept under, and rows are read again once :data:`webdav_core.versions.KEPT_SECONDS` old.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from webdav_core.versions import CollectionVersions, KeptByVersion

__all__ = ["BookRows", "Rows"]

Rows = list[tuple[str, str | None]]
"""(href, ETag) of every card of a book, sorted by href."""


class BookRows:
    """Rows of books, by book path, each kept under the validator its read was made after.

    Memory: one list of rows per book asked for (about 100 bytes a card).

    Args:
        max_age: Seconds rows are kept after their read, whatever a validator says (default KEPT_SECONDS).
    """

    def __init__(self, max_age: float | None = None) -> None:
        self._by_version: KeptByVersion[Rows] = KeptByVersion(max_age)
        self._by_modified: dict[str, tuple[str, Rows, float]] = {}

    @property
    def max_age(self) -> float:
        """Seconds rows are kept after their read, whatever a validator says."""
        return self._by_version.max_age

    @max_age.setter
    def max_age(self, seconds: float) -> None:
        self._by_version.max_age = seconds

    async def get(
        self, book: str, versions: CollectionVersions, modified: str | None, read: Callable[[], Awaitable[Rows]]
    ) -> Rows:
        """The rows of ``book``: kept ones while they hold, else ``read()``'s, kept for later calls.

        Args:
            book: The book's canonical path.
            versions: The client's collection versions (the CTag path, and the writes sent from here).
            modified: The book's settled ``getlastmodified`` answered moments ago, before any read this call makes;
                None when the server gave none (or not a settled one): the CTag decides then.
            read: One listing of the book (PROPFIND, depth 1).
        """
        if modified is None or versions.modified_untrusted:
            self._by_modified.pop(book, None)
            return await self._by_version.get(book, versions, read)
        key = f"{modified}|{versions.writes_to(book)}"
        kept = self._by_modified.get(book)
        if kept is not None and kept[0] == key and time.monotonic() - kept[2] <= self.max_age:
            if await versions.trusts_modified(book):  # asked once per client, before the first kept rows served
                return kept[1]
            self._by_modified.pop(book, None)
            return await self._by_version.get(book, versions, read)
        rows = await read()
        self._by_modified[book] = (key, rows, time.monotonic())
        return rows
