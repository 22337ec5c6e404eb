"""A window of one calendar read once per version: the listing ``list_events`` pages through.

The first call for a window asks the server for the calendar's version (one
small PROPFIND, unless one was learnt moments ago), reads the window (one
calendar-query REPORT, RFC 4791 §7.8) and expands it, reporting progress, and
asks for the version again; what it found is kept under a version that held
across the read (:class:`caldav_mcp.listings.Listings`). A later page, or the same window asked
again, is served from what was kept while the version holds, and is read again
when it does not, saying so.
"""

from __future__ import annotations

import bisect
import datetime as dt
import functools
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import anyio
import anyio.lowlevel

from approval_core import report_progress
from caldav_mcp.client import CalendarInfo
from caldav_mcp.dav import Resource
from caldav_mcp.errors import InvalidInput
from caldav_mcp.listings import CONFIRMED_SECONDS, Listing, Settling
from caldav_mcp.models import Occurrence, Unreadable
from caldav_mcp.tools.common import App, encode_cursor, learn_keeper, version_digest
from caldav_mcp.tools.window_reads import pair_when_due, window_entries
from caldav_mcp.views import instant_text, sort_key
from webdav_core import CollectionVersions

__all__ = ["EXPAND_BATCH", "MAX_COLLECTED", "Found", "listing_of", "page"]

MAX_COLLECTED = 100_000
"""The most occurrences one window may hold; a window with more is refused (narrow it). A year of the benchmark's
20,000-entry calendar (500 of them never-ending series) holds 64,156."""

NOTED_SECONDS = 60.0
"""A calendar's version learnt less than this long ago (seconds; from the calendar list, ``list_calendars``, or
a version request) stands for the version before a first read of one of its windows, without a request of its
own; the version asked after the read decides whether the listing is kept (:func:`_read_settled`)."""

EXPAND_BATCH = 250
"""Entries expanded between two progress reports (and two chances for a cancellation to land)."""

Expand = Callable[[list[Resource], list[Unreadable]], list[Occurrence]]
"""Expands entries into their occurrences in the window, adding the unreadable ones to the list given."""


@dataclass(frozen=True, slots=True)
class Found:
    """A listing for one call.

    Attributes:
        listing: What the window holds.
        reread: Why it was read again for a cursor; None when it was not.
        restarted: The cursor's place was lost with its version: the page starts from the first occurrence.
        settled: Whether the listing's version was known to have held across its read when it was served: a
            cursor of a page served before that carries the read (:attr:`caldav_mcp.listings.Listing.read`).
    """

    listing: Listing
    reread: str | None = None
    restarted: bool = False
    settled: bool = True


@dataclass(frozen=True, slots=True)
class _Read:
    """One read of a window.

    Attributes:
        listing: What it holds, under the version given for the read.
        after: The version asked once the read was done ("" when none), or that request while still out.
        moved: The calendar's last change moved during the read (it may hold changes made after the version).
    """

    listing: Listing
    after: str | Settling
    moved: bool = False


async def _read(
    app: App,
    cal: CalendarInfo,
    lo: dt.datetime,
    hi: dt.datetime,
    version: str,
    expand: Expand,
    modified: str | None = None,
) -> _Read:
    """Read and expand the window; and whether ``version`` held across the read.

    As soon as the REPORT's answer is in, the calendar's version is asked
    again, and the server answers while this process expands the entries (in
    a worker thread, EXPAND_BATCH at a time, reporting progress between
    batches, where a cancellation also lands). Without a ``version`` (the
    server gives none) nothing is asked.

    ``modified`` is the calendar's settled ``DAV:getlastmodified`` noted with
    ``version`` (:meth:`webdav_core.CollectionVersions.modified_with`). With
    it, that value is asked again too, and the window is served once it is
    expanded and that value has not moved. Where ``version`` is that last
    change itself (:meth:`webdav_core.CollectionVersions.by_modified`: the
    server's CTag costs more and its last change is trusted), nothing else is
    asked and the listing is kept under it. Otherwise the version after the
    read (:func:`_version_after`: no request where the server keeps its last
    change and ``version`` came with it), whose answer decides whether the
    listing is kept, is taken in the server's own task group
    (:class:`caldav_mcp.listings.Background`) and is returned while still
    out. On Radicale 3.9 with 2,000 entries the CTag costs about as much as a
    month's REPORT (it reads every entry) and the last change a sixth.
    """
    resources = await window_entries(app, cal, lo, hi)
    await anyio.lowlevel.checkpoint()  # a call cancelled meanwhile starts nothing, not even in the background
    total = len(resources)
    await report_progress(0, total, "entries read; expanding them")
    items: list[Occurrence] = []
    unreadable: list[Unreadable] = []
    versions = app.client.wire().versions
    by_modified = modified is not None and versions.modified_in(version) == modified
    answer = Settling() if version and not by_modified else None
    moved_to: list[str | None] = []

    async def check() -> None:
        try:
            moved_to.append(await versions.modified(cal.path))
        except Exception:  # not known: taken as moved (the version is asked again, and its failure raised)
            moved_to.append(None)

    async with anyio.create_task_group() as tasks:
        if modified is not None:  # the small request the page waits for is started first
            tasks.start_soon(check)
        if answer is not None:
            ask = functools.partial(
                answer.take, functools.partial(_version_after, versions, cal.path, version, modified)
            )
            if modified is None or not app.background.start(ask):
                tasks.start_soon(ask)
        for done in range(0, total, EXPAND_BATCH):
            batch = resources[done : done + EXPAND_BATCH]
            items.extend(await anyio.to_thread.run_sync(expand, batch, unreadable))
            if len(items) > MAX_COLLECTED:
                tasks.cancel_scope.cancel()
                break
            await report_progress(min(done + EXPAND_BATCH, total), total, "entries expanded")
    if len(items) > MAX_COLLECTED:
        raise InvalidInput(f"end: more than {MAX_COLLECTED} occurrences in this window; narrow it")
    keyed = sorted(((_key(item), item) for item in items), key=lambda pair: pair[0])
    listing = Listing(
        version,
        tuple(item for _, item in keyed),
        tuple(unreadable),
        tuple(resources),
        tuple(key for key, _ in keyed),
        read=app.listings.new_read(),
    )
    if by_modified:
        return _Read(listing, version) if moved_to == [modified] else _Read(listing, "", moved=True)
    if answer is None:
        return _Read(listing, "")
    if moved_to and moved_to[0] != modified:
        return _Read(listing, "", moved=True)
    return _Read(listing, answer.value if answer.ready else answer)


async def _version_after(versions: CollectionVersions, path: str, version: str, modified: str | None) -> str | None:
    """The calendar's version once a read under ``version`` is done: what decides whether the listing is kept.

    Where ``version`` came with a settled last change (``modified``) that the read's own check found unmoved,
    and the server keeps its last change, ``version`` itself, without a request; otherwise the version asked
    again (:meth:`webdav_core.CollectionVersions.current`). With ``modified`` (this runs where no page waits for
    it, :func:`_read`), whether the server keeps its last change is learnt here when not yet known: its one
    sync-token request (:meth:`webdav_core.CollectionVersions.learn_keeper`) is asked once the REPORT is
    answered, never before a read nor beside one, and it settles the listing where a CTag request would have
    cost about as much (Radicale computes both from every entry). A request of it already out is waited for.
    Where that was waited for, the last change is asked once more after it
    (:meth:`webdav_core.CollectionVersions.check`, one small request): the answer's time is when the listing
    counts as confirmed (:class:`caldav_mcp.listings.Settling`), and a change made meanwhile is seen.
    """
    known = versions.keeper_known
    if modified is not None:
        await versions.learn_keeper(path)
    await versions.keeper_settled()
    if modified is not None and versions.modified_keeps() and versions.paired(path, version) == modified:
        if known:  # nothing was waited for: the read's own check of the last change, just answered, stands
            return version
        # The sync-token took its time (it may be held for as long as the timeout): the last change is asked
        # again, so that the listing counts as confirmed when it answers, not when the read's check did.
        return await versions.check(path, version)
    return await versions.current(path)


def _key(item: Occurrence) -> tuple[str, str]:
    start, uid = sort_key(item)
    return start, uid


async def _read_settled(
    app: App,
    cal: CalendarInfo,
    lo: dt.datetime,
    hi: dt.datetime,
    version: str,
    expand: Expand,
    modified: str | None = None,
) -> tuple[Listing, str | Settling]:
    """Read the window under ``version`` (taken before the read), kept under it only while it holds after the read.

    A version that is a digest of what the calendar holds (Radicale's CTag) comes
    back when a change is undone: a change made after ``version`` was taken, seen
    by the read and undone later would leave the listing showing it under a
    version that matches again. So the version is asked again after the read
    (:func:`_read`; with ``modified``, the calendar's last change instead, the
    version itself then answered later); changed, the window is read once more
    under the new one, waiting for the version after that read; changed again,
    or not given, that listing is served (marked not trusted) but not kept.
    Returns the listing and the version last asked, or that request while
    still out (a :class:`caldav_mcp.listings.Settling`: the listing is kept only
    if it answers ``version``).
    """
    read = await _read(app, cal, lo, hi, version, expand, modified)
    after = read.after
    if read.moved:
        after = await app.client.wire().versions.current(cal.path) or ""
    elif not version or isinstance(after, Settling) or after == version:
        return read.listing, after
    if not after:
        return replace(read.listing, trusted=False), after
    again = await _read(app, cal, lo, hi, after, expand)  # changed meanwhile: once more, under the new one
    if again.after == after:
        return again.listing, after
    return replace(again.listing, trusted=False), again.after


async def listing_of(
    app: App,
    cal: CalendarInfo,
    lo: dt.datetime,
    hi: dt.datetime,
    expand: Expand,
    *,
    continuing: bool = False,
    cursor_version: str | None = None,
    cursor_read: str | None = None,
) -> Found:
    """The listing of ``[lo, hi)`` in ``cal`` for one call.

    ``continuing`` is set when a cursor was given, and ``cursor_version`` is the
    digest of the version that cursor was read at (None when it carries none).
    Served from what is kept without asking the server when a cursor continues
    a listing confirmed less than CONFIRMED_SECONDS ago; else after one request
    for the calendar's version, from what is kept when it still holds, or read
    again (:func:`_read_settled`: the version is asked again after the read).
    A cursor whose listing changed gets the new one with ``reread`` saying so;
    its caller starts again from the first occurrence. A server that gives no
    version is read on every call (nothing is kept).

    Raises:
        InvalidInput: see :func:`window_entries`; or too many occurrences (from ``expand``).
        BackendError: the server failed.
    """
    key = (cal.path, lo, hi)
    if cursor_read is not None and not app.listings.ours(cursor_read):
        cursor_read = None  # another process's read: whether it held is not known here (its version decides)

    def unheld(listing: Listing) -> bool:
        """Whether the cursor's page may not be continued by ``listing``: it is not that very read.

        The page was served before its read was known to hold, and no answer known here says it did: it may join
        no other read, even of the same version (a digest comes back).
        """
        return cursor_read is not None and cursor_read != listing.read and not app.listings.held(cursor_read)

    def spoiled() -> bool:
        """Whether the cursor's version was served for this window while it did not hold.

        A page served under it was read from another state and continues nothing. Asked at each use: a read
        may spoil it meanwhile.
        """
        return cursor_version in {version_digest(v) for v in app.listings.spoiled(key)}

    waiting = app.listings.pending(key)
    if waiting is not None:  # the version asked after its read is still out: whether it may be kept is not known
        await waiting.wait()
    kept = app.listings.get(key)
    versions = app.client.wire().versions
    writes = versions.writes_to(cal.path)
    if (
        kept is not None
        and cursor_version is not None
        and kept[1] < CONFIRMED_SECONDS
        and kept[0].version.rpartition("|")[2] == str(writes)  # nothing written here since
        and version_digest(kept[0].version) == cursor_version
        and not spoiled()
        and not unheld(kept[0])
    ):
        return Found(kept[0])
    # Where nothing is kept, the read follows anyway: a version the calendar list gave moments ago will do, and
    # its settled last change, where this server's is trusted and cheaper than its CTag, is the version itself.
    noted = versions.recent(cal.path, NOTED_SECONDS) if kept is None else None
    modified = versions.modified_with(cal.path, noted) if noted else None
    if kept is not None:
        version = await versions.check(cal.path, kept[0].version) or ""  # of the kind the kept listing was read at
    elif noted and modified is not None and versions.modified_keeps():
        version = versions.by_modified(cal.path, modified)
    else:
        # Nothing noted lately: the cheapest check this server keeps (its last change, else the CTag) before the
        # read. "": the server gives none; nothing is kept.
        version = noted or await versions.cheapest(cal.path) or ""
    # The settled last change the version came with (the calendar list's, or the version request's own answer):
    # the read then checks that alone after its REPORT, and what the version is now is settled in the background.
    modified = versions.modified_in(version) or modified or (versions.paired(cal.path, version) if version else None)
    settled = True
    if kept is not None and version and kept[0].version == version:
        app.listings.confirm(key)
        listing = kept[0]
        pair_when_due(app, cal.path, version)
    else:
        listing, after = await _read_settled(app, cal, lo, hi, version, expand, modified)
        settled = listing.trusted and bool(listing.version) and after == listing.version
        app.listings.put(key, listing, after if isinstance(after, Settling) else None)
        if not listing.trusted and isinstance(after, str) and after:  # another version was found after the read
            app.listings.spoil(key, listing.version)
    learn_keeper(app, cal.path)  # never asked before a read: learnt once it is done, where nothing waits for it
    found = functools.partial(Found, listing, settled=settled)
    if not continuing:
        return found()
    if cursor_version is None or not listing.version:
        return found(
            "the calendar's version is not known for the page this cursor continues or for now, so the window was "
            "read again: this page continues after the cursor's place in what the calendar holds now, which may "
            "differ from what the earlier pages held"
        )
    if version_digest(listing.version) != cursor_version or spoiled():
        return found(
            "the calendar changed since the page this cursor continues, so the window was read again: this page "
            "starts again from its first occurrence",
            restarted=True,
        )
    if unheld(listing):
        return found(
            "the calendar may have changed while the page this cursor continues was read (no answer known here "
            "says it did not), so the window was read again: this page starts again from its first occurrence",
            restarted=True,
        )
    if kept is None or kept[0] is not listing:
        return found("the listing behind this cursor was no longer kept; the window was read again, unchanged")
    return found()


def page(
    listing: Listing,
    limit: int,
    after: Any,
    query: Any,
    keep: Callable[[Occurrence], bool] | None = None,
    settled: bool = True,
) -> tuple[list[Occurrence], str | None]:
    """One page after the key ``after`` (None: from the first), and the cursor for the next one (None on the last).

    Unless ``settled`` (the listing's version known to have held across its read), the cursor carries the read.

    The place is found by bisection over the listing's sort keys, so a page costs the same wherever it lies.
    ``keep``, when given, chooses the occurrences a page holds (the others are passed over, also when deciding
    whether more follow).

    Raises:
        InvalidInput: ``after`` is not a key this server writes into a cursor.
    """
    start = 0
    if after is not None:
        if not (isinstance(after, list) and len(after) == 2 and all(isinstance(part, str) for part in after)):
            raise InvalidInput("cursor: not a cursor this server returned")
        # instant_text: a cursor written by an earlier release, whose key kept the start's own offset
        start = bisect.bisect_right(listing.keys, (instant_text(after[0]), after[1]))
    if keep is None:
        chosen = list(listing.items[start : start + limit])
        last = start + limit - 1
        more = start + limit < len(listing.items)
    else:
        chosen, last, more = [], start - 1, False
        for index in range(start, len(listing.items)):
            if not keep(listing.items[index]):
                continue
            if len(chosen) == limit:
                more = True
                break
            chosen.append(listing.items[index])
            last = index
    if not (more and chosen):
        return chosen, None
    return chosen, encode_cursor(
        list(listing.keys[last]), query, listing.version or None, None if settled else listing.read
    )
