"""What every tool module shares: the app handle, ids, windows, cursors, annotations."""

from __future__ import annotations

import base64
import datetime as dt
import functools
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from approval_core import ApprovalGate, annotations
from caldav_mcp.client import CalDAVClient
from caldav_mcp.errors import InvalidInput
from caldav_mcp.expansion_cache import ExpansionCache
from caldav_mcp.ical import parse_rid, parse_when, utc_bound
from caldav_mcp.listings import Background, Listings
from caldav_mcp.narrowing import Narrowing

__all__ = [
    "ADD",
    "CHANGE",
    "DELETE",
    "INVITE",
    "MAX_WINDOW_DAYS",
    "MOVE",
    "READ",
    "TOGGLE",
    "App",
    "cursor_read",
    "cursor_version",
    "decode_cursor",
    "encode_cursor",
    "learn_keeper",
    "split_id",
    "version_digest",
    "window",
]

MAX_WINDOW_DAYS = 366

# The four annotations of each kind of tool. openWorldHint follows the family rule (tests/test_guards.py,
# caldav_mcp.guards.OPEN_WORLD): a call that changes or removes an existing entry may make a scheduling
# server (RFC 6638) send iTIP messages to the entry's attendees or organiser, so it is open-world; reading,
# adding (except create_event, which may write attendees) and moving between the account's own calendars are not.
READ = annotations(read_only=True, destructive=False, idempotent=True, open_world=False)
ADD = annotations(read_only=False, destructive=False, idempotent=False, open_world=False)
# create_event: adds, and with attendees a scheduling server sends them invitations (RFC 6638).
INVITE = annotations(read_only=False, destructive=False, idempotent=False, open_world=True)
CHANGE = annotations(read_only=False, destructive=True, idempotent=True, open_world=True)
DELETE = annotations(read_only=False, destructive=True, idempotent=True, open_world=True)
MOVE = annotations(read_only=False, destructive=True, idempotent=True, open_world=False)
# Moves a task between open and done: every other property stays, and the move can be made back.
TOGGLE = annotations(read_only=False, destructive=False, idempotent=True, open_world=True)


@dataclass(frozen=True, slots=True)
class App:
    """What a tool needs: the client, the gate, the expansion cache, the listings kept, the search's trust.

    ``background`` is the server's own task group while it serves (set by its lifespan), for the requests a
    call does not wait for.
    """

    client: CalDAVClient
    gate: ApprovalGate
    expansions: ExpansionCache = field(default_factory=ExpansionCache)
    listings: Listings = field(default_factory=Listings)
    narrowing: Narrowing = field(default_factory=Narrowing)
    background: Background = field(default_factory=Background)


def split_id(event_id: str, field: str = "id") -> tuple[str, str | None]:
    """``uid`` or ``uid#RECURRENCE-ID`` → (uid, recurrence id or None).

    Raises:
        InvalidInput: empty, or the part after the last '#' is not a RECURRENCE-ID.
    """
    if not event_id:
        raise InvalidInput(f"{field}: give an event id or UID from list_events")
    uid, sep, rid = event_id.rpartition("#")
    if sep and uid:
        try:
            return uid, parse_rid(rid, field)
        except InvalidInput:
            pass
    return event_id, None


def window(start: str, end: str, *, max_days: int = MAX_WINDOW_DAYS) -> tuple[dt.datetime, dt.datetime]:
    """A query window as aware datetimes; a date means midnight UTC.

    Raises:
        InvalidInput: unparsable bounds, end not after start, or longer than ``max_days``.
    """
    lo = utc_bound(parse_when(start, "start"))
    hi = utc_bound(parse_when(end, "end"))
    if hi <= lo:
        raise InvalidInput("end: must be after start")
    if hi - lo > dt.timedelta(days=max_days):
        raise InvalidInput(f"end: the window may span at most {max_days} days; page through longer ranges")
    return lo, hi


def encode_cursor(key: Any, query: Any, version: str | None = None, read: str | None = None) -> str:
    """An opaque cursor: the last key returned, bound to the query it continues (and the version it was read at).

    ``read`` is the read a page came from when it was served before that read's version was known to hold
    (:attr:`caldav_mcp.listings.Listing.read`): such a cursor continues only a read known to have held.
    """
    data: dict[str, Any] = {"k": key, "q": query}
    if version is not None:
        data["v"] = version_digest(version)
    if read:
        data["r"] = read
    raw = json.dumps(data, separators=(",", ":"), default=str)
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def version_digest(version: str) -> str:
    """A short digest of a listing's version (16 hex digits of BLAKE2b), as a cursor carries it."""
    return hashlib.blake2b(version.encode(), digest_size=8).hexdigest()


def _payload(cursor: str) -> Any:
    """The JSON a cursor from :func:`encode_cursor` holds (base64url without padding).

    Raises:
        ValueError: not base64 or not JSON.
    """
    return json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))


def cursor_version(cursor: str) -> str | None:
    """The version digest a cursor from :func:`encode_cursor` carries; None when it carries none.

    Call after :func:`decode_cursor` accepted the cursor.
    """
    version = _payload(cursor).get("v")
    return version if isinstance(version, str) else None


def cursor_read(cursor: str) -> str | None:
    """The read a cursor from :func:`encode_cursor` carries; None when it carries none.

    Call after :func:`decode_cursor` accepted the cursor.
    """
    read = _payload(cursor).get("r")
    return read if isinstance(read, str) and read else None


def decode_cursor(cursor: str | None, query: Any) -> Any:
    """The key a cursor continues after, or None without a cursor.

    Raises:
        InvalidInput: the cursor is malformed or belongs to a different query.
    """
    if cursor is None:
        return None
    try:
        data = _payload(cursor)
        key, bound = data["k"], data["q"]
    except (ValueError, KeyError, TypeError, RecursionError):  # json raises RecursionError for deep nesting
        raise InvalidInput("cursor: not a cursor this server returned") from None
    if not isinstance(key, list) or not all(isinstance(part, str) for part in key):
        raise InvalidInput("cursor: not a cursor this server returned")  # every key here is a list of texts
    if bound != json.loads(json.dumps(query, default=str)):
        raise InvalidInput("cursor: it continues a different query; repeat the same arguments with it")
    return key


def learn_keeper(app: App, path: str) -> None:
    """Start learning, in the background, whether this server keeps a calendar's last change; once known, nothing.

    One PROPFIND for the sync-token of ``path`` (:meth:`webdav_core.CollectionVersions.learn_keeper`), started
    at the calendar list (``list_calendars``) and after any listing while it is not known, never waited for:
    until it answers, kept listings are checked by the CTag.
    """
    versions = app.client.wire().versions
    if not versions.keeper_known:
        app.background.start(functools.partial(versions.learn_keeper, path))
