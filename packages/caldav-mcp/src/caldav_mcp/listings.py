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
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import anyio
from anyio.abc import TaskGroup

from caldav_mcp.dav import Resource
from caldav_mcp.models import Occurrence, Unreadable

__all__ = [
    "CONFIRMED_SECONDS",
    "KEPT_SECONDS",
    "MAX_HELD_READS",
    "MAX_KEPT_OCCURRENCES",
    "MAX_KEPT_TEXT",
    "MAX_SPOILED_VERSIONS",
    "MAX_SPOILED_WINDOWS",
    "Background",
    "Listing",
    "Listings",
    "Settling",
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

MAX_SPOILED_WINDOWS = 1_000
"""The most windows for which the versions a listing was served under, and did not hold across its read, are
remembered (the least recently spoiled forgotten first)."""

MAX_HELD_READS = 4_096
"""The most reads whose version was found to hold that are remembered (the oldest forgotten first): a cursor of a
page served before that was known continues only a read remembered here (:meth:`Listings.held`); one forgotten
starts over, never joins another state of the calendar."""

MAX_SPOILED_VERSIONS = 16
"""The most such versions remembered for one window (the oldest forgotten first): a cursor is continued soon
after its page, so it carries one of the latest."""

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
        read: A random token of the read it came from: a cursor of a page served before ``version`` was known
            to have held carries it (:meth:`Listings.held`).
    """

    version: str
    items: tuple[Occurrence, ...]
    unreadable: tuple[Unreadable, ...]
    resources: tuple[Resource, ...] = ()
    keys: tuple[tuple[str, str], ...] = ()
    trusted: bool = True
    read: str = ""

    @property
    def size(self) -> int:
        """What the listing counts for against the limit: itself, its occurrences and its entries."""
        return 1 + len(self.items) + len(self.resources)

    @property
    def text(self) -> int:
        """The characters of its entries' text (what it counts for against the limit on text)."""
        return sum(len(r.data) for r in self.resources)


class Settling:
    """The calendar's version asked once a read is done, while the request may still be out.

    The first page of a window is served as soon as it is expanded; the
    version that tells whether the listing may be kept can come later, and
    the listing waits for it (:meth:`Listings.put`). ``value`` is the version
    (a string, "" when the server gave none or the request failed) once
    ``ready``; :meth:`wait` waits for it.
    """

    def __init__(self) -> None:
        self.value = ""
        self.ready = False
        self.answered_at = 0.0
        self._done = anyio.Event()
        self._then: list[Callable[[], None]] = []

    async def take(self, ask: Callable[[], Awaitable[str | None]]) -> None:
        """Ask (one version request) and keep the answer; a failure or a cancellation leaves "" (nothing kept)."""
        try:
            self.value = await ask() or ""
        except Exception:  # the page was served; the listing just is not kept
            self.value = ""
        finally:
            self.ready = True
            self.answered_at = time.monotonic()
            self._done.set()
            for then in self._then:
                then()

    async def wait(self) -> str:
        """The version once answered ("" for none)."""
        await self._done.wait()
        return self.value

    def then(self, action: Callable[[], None]) -> None:
        """Run ``action`` once answered (at once if it already is)."""
        if self.ready:
            action()
        else:
            self._then.append(action)


@dataclass(slots=True)
class Background:
    """Where a request a call does not wait for runs: the server's own task group, while it serves (else none)."""

    group: TaskGroup | None = None

    def start(self, work: Callable[[], Coroutine[Any, Any, None]]) -> bool:
        """Start ``work`` there; False when the server has no task group (the caller then waits for the work)."""
        if self.group is None:
            return False
        self.group.start_soon(work)
        return True


@dataclass(slots=True)
class _Kept:
    listing: Listing
    text: int
    read_at: float
    confirmed_at: float
    pending: Settling | None = None


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
        self._spoiled: OrderedDict[WindowKey, OrderedDict[str, None]] = OrderedDict()
        self._held_reads: OrderedDict[str, None] = OrderedDict()
        self._origin = secrets.token_hex(4)  # this process's reads, told from another's (a replica's, an earlier one)
        self._lock = threading.Lock()

    def pending(self, key: WindowKey) -> Settling | None:
        """The version request the listing kept for ``key`` still waits for; None when it waits for none."""
        with self._lock:
            kept = self._items.get(key)
            return kept.pending if kept is not None and kept.pending is not None and not kept.pending.ready else None

    def waiting(self, calendar: str, lo: dt.datetime, hi: dt.datetime) -> list[Settling]:
        """The version requests still out for listings kept for ``calendar`` whose window holds all of ``[lo, hi)``."""
        with self._lock:
            return [
                kept.pending
                for key, kept in self._items.items()
                if key[0] == calendar
                and key[1] <= lo
                and hi <= key[2]
                and kept.pending is not None
                and not kept.pending.ready
            ]

    def spoiled(self, key: WindowKey) -> frozenset[str]:
        """The versions a listing of ``key`` was served under that did not hold across its read.

        A cursor carrying one of them continues nothing: the calendar may show
        that version again (a digest such as Radicale's CTag comes back when a
        change is undone) while the page was read from another state.
        """
        with self._lock:
            return frozenset(self._spoiled.get(key, ()))

    def new_read(self) -> str:
        """A token for a new read (:attr:`Listing.read`): random, and telling that this process made it."""
        return f"{self._origin}.{secrets.token_hex(8)}"

    def ours(self, read: str) -> bool:
        """Whether ``read`` (from a cursor) is a token :meth:`new_read` gave here, so :meth:`held` can tell."""
        return read.startswith(f"{self._origin}.")

    def held(self, read: str) -> bool:
        """Whether the version of the read ``read`` (a :attr:`Listing.read`) was found to hold across it.

        False for a read of this process not known to have held (its version moved, its answer failed, or it was
        forgotten past MAX_HELD_READS): a cursor of such a read's page starts over. A read another process made
        (:meth:`ours` False) is not known here either way.
        """
        with self._lock:
            return read in self._held_reads

    def _hold(self, read: str) -> None:
        """Remember that ``read``'s version held (called with the lock taken); the oldest forgotten first."""
        if not read:
            return
        self._held_reads[read] = None
        self._held_reads.move_to_end(read)
        while len(self._held_reads) > MAX_HELD_READS:
            self._held_reads.popitem(last=False)

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
                if key[0] == calendar
                and key[1] <= lo
                and hi <= key[2]
                and now - kept.read_at <= self.kept_seconds
                and kept.pending is None
            ]

    def confirm(self, key: WindowKey) -> None:
        """Note that the listing's version was just found current on the server."""
        with self._lock:
            kept = self._items.get(key)
            if kept is not None:
                kept.confirmed_at = time.monotonic()

    def put(self, key: WindowKey, listing: Listing, pending: Settling | None = None) -> None:
        """Keep ``listing`` for ``key``, dropping the least recently used beyond the limit (never one too big).

        A listing whose version did not hold across its read, or is not known
        to have (not ``trusted``), is not kept. With ``pending``, the listing
        is kept once that version request answers with the listing's version;
        it is dropped when it answers another one (that version then spoiled
        for ``key``, :meth:`spoil`) or none; until then :meth:`pending` gives
        the request.
        """
        text = listing.text
        if listing.trusted and listing.version:  # whether its read held is remembered, kept or not (too big)
            if pending is None:
                with self._lock:
                    self._hold(listing.read)
            else:
                pending.then(lambda: self._held_if(listing, pending))
        if not listing.trusted or not listing.version or listing.size > self.limit or text > self.text_limit:
            return
        now = time.monotonic()
        with self._lock:
            self._drop(key)
            self._items[key] = _Kept(listing, text, now, now, pending)
            self._held += listing.size
            self._text += text
            while self._held > self.limit or self._text > self.text_limit:
                self._drop(next(iter(self._items)))
        if pending is not None:
            pending.then(lambda: self._settle(key, listing, pending))

    def _held_if(self, listing: Listing, answer: Settling) -> None:
        """Remember ``listing``'s read as held when ``answer`` is its version."""
        if answer.value == listing.version:
            with self._lock:
                self._hold(listing.read)

    def _settle(self, key: WindowKey, listing: Listing, answer: Settling) -> None:
        """Keep ``listing`` (confirmed when the answer came) if ``answer`` is its version; else drop it.

        An answer naming another version also spoils the listing's version for ``key`` (:meth:`spoil`); no
        answer (the request failed) tells nothing about it.
        """
        with self._lock:
            kept = self._items.get(key)
            ours = kept if kept is not None and kept.listing is listing else None
            if answer.value == listing.version:
                if ours is not None:
                    ours.pending = None
                    ours.confirmed_at = answer.answered_at
                return
            if ours is not None:
                self._drop(key)
        if answer.value:  # another version: the read may hold changes made after the listing's version
            self.spoil(key, listing.version)

    def spoil(self, key: WindowKey, version: str) -> None:
        """Note that a listing of ``key`` was served under ``version`` though another one was found after its read.

        Bounded: MAX_SPOILED_VERSIONS a window, MAX_SPOILED_WINDOWS windows, the oldest forgotten first.
        """
        if not version:
            return
        with self._lock:
            versions = self._spoiled.setdefault(key, OrderedDict())
            versions[version] = None
            versions.move_to_end(version)
            while len(versions) > MAX_SPOILED_VERSIONS:
                versions.popitem(last=False)
            self._spoiled.move_to_end(key)
            while len(self._spoiled) > MAX_SPOILED_WINDOWS:
                self._spoiled.popitem(last=False)

    def _drop(self, key: WindowKey) -> None:
        kept = self._items.pop(key, None)
        if kept is not None:
            self._held -= kept.listing.size
            self._text -= kept.text

    def __len__(self) -> int:
        """How many windows are kept."""
        return len(self._items)
