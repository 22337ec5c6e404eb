"""Occurrences already expanded, kept between calls of one server (``list_events``)."""

from __future__ import annotations

import datetime as dt
import hashlib
import threading
from collections import OrderedDict

from caldav_mcp.models import Occurrence

__all__ = ["MAX_CACHED_OCCURRENCES", "ExpansionCache"]

MAX_CACHED_OCCURRENCES = 25_000
"""The most occurrences an :class:`ExpansionCache` holds, over all its entries and windows."""

Key = tuple[bytes, dt.datetime, dt.datetime]


class ExpansionCache:
    """The occurrences of entries already expanded, by entry text and window (least recently used dropped first).

    A listing read again, its next page or the same window asked once more,
    parses and expands only the entries whose text changed since: the key is a
    BLAKE2b digest (16 bytes) of an entry's iCalendar text together with the
    window, so an entry changed on the server (other bytes) is expanded anew
    whatever its ETag says, and the answer never depends on the cache. An
    entry that could not be read is never kept. Holds at most ``limit``
    occurrences in all (default MAX_CACHED_OCCURRENCES), so its memory is
    bounded whatever the calendars hold. Safe to share between threads.
    """

    def __init__(self, limit: int = MAX_CACHED_OCCURRENCES) -> None:
        self.limit = limit
        self._held = 0
        self._items: OrderedDict[Key, tuple[Occurrence, ...]] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(data: str, lo: dt.datetime, hi: dt.datetime) -> Key:
        """The key of one entry's text in the window ``[lo, hi)``."""
        return hashlib.blake2b(data.encode("utf-8", "surrogatepass"), digest_size=16).digest(), lo, hi

    def get(self, key: Key) -> tuple[Occurrence, ...] | None:
        """The occurrences kept under ``key`` (now the most recently used), or None."""
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: Key, items: tuple[Occurrence, ...]) -> None:
        """Keep ``items`` under ``key``, dropping the least recently used entries beyond ``limit`` occurrences."""
        if len(items) > self.limit:
            return
        with self._lock:
            old = self._items.pop(key, None)
            self._held -= len(old) if old is not None else 0
            self._items[key] = items
            self._held += len(items)
            while self._held > self.limit:
                _, dropped = self._items.popitem(last=False)
                self._held -= len(dropped)

    def __len__(self) -> int:
        """How many entry-and-window pairs are kept."""
        return len(self._items)
