"""Windows already listed, kept behind their cursors and checked against the calendar's version (``list_events``).

A listing is read from the server once per window and version: the first
call reads and expands the window, and its later pages, or the same window
asked again while the calendar is unchanged, come from what was kept. Whether
the calendar changed is the server's word, its CTag or sync-token
together with the count of writes this server sent to it
(:meth:`webdav_core.CollectionVersions.current`).
A kept listing is one version of the window, whole: pages are never served
from two versions.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from caldav_mcp.dav import Resource
from caldav_mcp.models import Occurrence, Unreadable

__all__ = [
    "CONFIRMED_SECONDS",
    "KEPT_SECONDS",
    "MAX_KEPT_OCCURRENCES",
    "MAX_KEPT_TEXT",
    "Listing",
    "Listings",
    "WindowKey",
]

KEPT_SECONDS = 600.0
"""How long a listing is kept after it was read (seconds); a cursor older than that reads the window again."""

CONFIRMED_SECONDS = 5.0
"""A later page of a listing whose version was confirmed less than this long ago (seconds) is served without
asking the server again. Paging is a run of calls seconds apart; asking for the version before each page would
cost more than the page itself on a server that reads every entry to answer it (Radicale: about 70 ms for
2,000 entries). A call without a cursor always asks."""

MAX_KEPT_OCCURRENCES = 100_000
"""The most occurrences and entries kept over all listings, each listing counting one more for itself (so
windows holding nothing are bounded too); the least recently used listing goes first."""

MAX_KEPT_TEXT = 64 * 1024 * 1024
"""The most characters of entries' iCalendar text kept over all listings (a server decides how long an entry
is); the least recently used listing goes first."""

WindowKey = tuple[str, dt.datetime, dt.datetime]
"""(calendar path, window start, window end), both ends aware UTC."""


@dataclass(frozen=True, slots=True)
class Listing:
    """One window of one calendar, as one version of it held it.

    Attributes:
        version: The calendar's version when it was read ("" when the server gives none: never kept).
        items: Every occurrence in the window, in start order.
        unreadable: The entries left out, with why.
        resources: The entries the window's REPORT answered (a search of any window inside it starts there).
        keys: Each occurrence's place in start order (:func:`caldav_mcp.views.sort_key`), for finding a page.
        trusted: Whether ``version`` held across the read; a listing that was not is served, never kept.
    """

    version: str
    items: tuple[Occurrence, ...]
    unreadable: tuple[Unreadable, ...]
    resources: tuple[Resource, ...] = ()
    keys: tuple[tuple[str, str], ...] = ()
    trusted: bool = True

    @property
    def size(self) -> int:
        """What the listing counts for against the limit: itself, its occurrences and its entries."""
        return 1 + len(self.items) + len(self.resources)

    @property
    def text(self) -> int:
        """The characters of its entries' text (what it counts for against the limit on text)."""
        return sum(len(r.data) for r in self.resources)


@dataclass(slots=True)
class _Kept:
    listing: Listing
    text: int
    read_at: float
    confirmed_at: float


class Listings:
    """Listings by window, bounded by count of occurrences and by age. Safe to share between tasks and threads.

    Args:
        limit: The most occurrences held in all (default MAX_KEPT_OCCURRENCES).
        kept_seconds: How long a listing is kept after its read (default KEPT_SECONDS).
        text_limit: The most characters of entries' text held in all (default MAX_KEPT_TEXT).
    """

    def __init__(
        self, limit: int = MAX_KEPT_OCCURRENCES, kept_seconds: float = KEPT_SECONDS, text_limit: int = MAX_KEPT_TEXT
    ) -> None:
        self.limit = limit
        self.kept_seconds = kept_seconds
        self.text_limit = text_limit
        self._held = 0
        self._text = 0
        self._items: OrderedDict[WindowKey, _Kept] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: WindowKey) -> tuple[Listing, float] | None:
        """The listing kept for ``key`` and the seconds since its version was last confirmed; None when none."""
        now = time.monotonic()
        with self._lock:
            kept = self._items.get(key)
            if kept is None:
                return None
            if now - kept.read_at > self.kept_seconds:
                self._drop(key)
                return None
            self._items.move_to_end(key)
            return kept.listing, now - kept.confirmed_at

    def covering(self, calendar: str, lo: dt.datetime, hi: dt.datetime) -> list[tuple[WindowKey, Listing]]:
        """The listings kept for ``calendar`` whose window holds all of ``[lo, hi)``, the most recent first."""
        now = time.monotonic()
        with self._lock:
            return [
                (key, kept.listing)
                for key, kept in reversed(self._items.items())
                if key[0] == calendar and key[1] <= lo and hi <= key[2] and now - kept.read_at <= self.kept_seconds
            ]

    def confirm(self, key: WindowKey) -> None:
        """Note that the listing's version was just found current on the server."""
        with self._lock:
            kept = self._items.get(key)
            if kept is not None:
                kept.confirmed_at = time.monotonic()

    def put(self, key: WindowKey, listing: Listing) -> None:
        """Keep ``listing`` for ``key``, dropping the least recently used beyond the limit (never one too big)."""
        text = listing.text
        if not listing.version or listing.size > self.limit or text > self.text_limit:
            return
        now = time.monotonic()
        with self._lock:
            self._drop(key)
            self._items[key] = _Kept(listing, text, now, now)
            self._held += listing.size
            self._text += text
            while self._held > self.limit or self._text > self.text_limit:
                self._drop(next(iter(self._items)))

    def _drop(self, key: WindowKey) -> None:
        kept = self._items.pop(key, None)
        if kept is not None:
            self._held -= kept.listing.size
            self._text -= kept.text

    def __len__(self) -> int:
        """How many windows are kept."""
        return len(self._items)
