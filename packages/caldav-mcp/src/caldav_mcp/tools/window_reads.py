"""The entries of a window of one calendar: read by calendar-query REPORT, or taken from a listing kept for it.

:func:`window_entries` reads them (RFC 4791 §7.8), halving a window the server
refuses; :func:`kept_entries` gives those of a listing kept for a window that
holds the one asked, while the calendar's version holds
(:mod:`caldav_mcp.tools.windows` keeps the listings). Where a kept listing is
confirmed by the calendar's last change alone, :func:`pair_when_due` asks the
CTag with it now and then, so that a server whose last change stays while its
CTag moves is found out.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools

from caldav_mcp.client import CalendarInfo
from caldav_mcp.dav import Resource
from caldav_mcp.errors import BackendError, InvalidInput
from caldav_mcp.tools.common import App
from webdav_core import CollectionVersions

__all__ = ["MAX_SPLITS", "PAIRED_SECONDS", "kept_entries", "pair_when_due", "window_entries"]

MAX_SPLITS = 4
"""How many times a window the server refuses with 400 is halved: at most 16 parts, and 1 + 2 + 4 + 8 + 16 = 31
REPORTs in all (a part refused after the last halving ends the call)."""

PAIRED_SECONDS = 60.0
"""Where kept listings are checked by the calendar's last change alone, the CTag is asked with it in the
background (never waited for) when no answer gave the two together for longer than this (seconds): a server
whose last change stays while the CTag moves is found out (:meth:`webdav_core.CollectionVersions.modified_keeps`)
within about this time, and kept listings are then checked by the CTag."""


async def window_entries(
    app: App, cal: CalendarInfo, lo: dt.datetime, hi: dt.datetime, depth: int = 0
) -> list[Resource]:
    """The VEVENT entries of ``cal`` overlapping ``[lo, hi)``, by calendar-query REPORTs.

    A server that refuses the REPORT with 400 (Radicale refuses one that would
    hold more than its ``max_expand_occurrence`` entries, 10,000 by default) is
    asked for each half of the window instead, down to MAX_SPLITS halvings; an
    entry in both halves is kept once.

    Raises:
        InvalidInput: still refused after MAX_SPLITS halvings, or for a window of a day or less: narrow it.
        BackendError: any other failure of the REPORT.
    """
    try:
        return await app.client.query(cal, "VEVENT", start=lo, end=hi)
    except BackendError as exc:
        if exc.status != 400:
            raise
        if depth >= MAX_SPLITS or hi - lo <= dt.timedelta(days=1):
            raise InvalidInput(
                f"end: the CalDAV server refused to list {cal.path} from {lo.isoformat()} to {hi.isoformat()} "
                "(HTTP 400), even in parts. Servers refuse a REPORT holding more entries than their limit "
                "(Radicale: max_expand_occurrence, 10,000 by default); narrow the window."
            ) from None
    middle = lo + (hi - lo) / 2
    found = {r.href: r for r in await window_entries(app, cal, lo, middle, depth + 1)}
    for resource in await window_entries(app, cal, middle, hi, depth + 1):
        found.setdefault(resource.href, resource)
    return list(found.values())


async def kept_entries(app: App, cal: CalendarInfo, lo: dt.datetime, hi: dt.datetime) -> list[Resource] | None:
    """The entries of a listing kept for a window of ``cal`` holding ``[lo, hi)``, while its version holds.

    One small request (the calendar's version) where such a listing is kept;
    None, without a request, where none is, and None when the calendar changed.
    They are a superset of the entries in ``[lo, hi)``: the caller expands them
    in its own window.
    """
    for waiting in app.listings.waiting(cal.path, lo, hi):  # a listing whose version request is out may be kept
        await waiting.wait()
    found = app.listings.covering(cal.path, lo, hi)
    if not found:
        return None
    versions = app.client.wire().versions
    now: dict[bool, str] = {}  # the version now, by kind: the last change (True) or the CTag / sync-token
    for key, listing in found:
        kind = versions.modified_in(listing.version) is not None
        if kind not in now:
            now[kind] = await versions.check(cal.path, listing.version) or ""
        if now[kind] and listing.version == now[kind]:
            app.listings.confirm(key)
            pair_when_due(app, cal.path, listing.version)
            return list(listing.resources)
    return None


def pair_when_due(app: App, path: str, version: str) -> None:
    """Ask the CTag with the last change in the background where ``version`` was just confirmed by the last change.

    That is a version of the last change itself (:meth:`webdav_core.CollectionVersions.by_modified`) or a CTag
    version paired with it (:meth:`webdav_core.CollectionVersions.paired`): neither asks the CTag, so where no
    answer gave the two together for PAIRED_SECONDS, one is asked (never waited for), and a server whose last
    change stays while its CTag moves is found out.
    """
    versions = app.client.wire().versions
    by_last_change = versions.modified_in(version) is not None or versions.paired(path, version) is not None
    if by_last_change and versions.paired_since(path) > PAIRED_SECONDS:
        app.background.start(functools.partial(_pair, versions, path))


async def _pair(versions: CollectionVersions, path: str) -> None:
    """Ask the calendar's version with its last change (compared with the last pair seen); a failure tells nothing."""
    with contextlib.suppress(Exception):
        await versions.current(path)
