"""When a collection's version or last change, read as a time, can be compared: settled values and trusted servers.

Two kinds of value a server gives for a collection name the second of its last
change: SOGo 5.8's CTag and sync-token (a Unix time) and any server's
``DAV:getlastmodified`` (an HTTP-date, RFC 4918 §15.7). A second change within
that second leaves them as they were, so they are compared only once the
server's clock (its ``Date`` header, RFC 9110 §6.6.1) has left it behind
(:func:`is_unsettled`, :func:`settled_modified`). A collection's last change is
trusted to move with every change of a member only on the servers in
:data:`KEEPS_MODIFIED` (:func:`keeper_of`).
"""

from __future__ import annotations

import time
from email.utils import parsedate_to_datetime

__all__ = ["KEEPS_MODIFIED", "NEAR_SECONDS", "is_unsettled", "keeper_of", "settled_modified"]

KEEPS_MODIFIED = (("Radicale", "http://radicale.org/ns/sync/"),)
"""The servers whose collections' ``DAV:getlastmodified`` moves with every change of a member, each by the start of
its collections' sync-token (RFC 6578 §4): a create, a change, a delete, a MOVE in or out, by any client. Radicale's
file storage dates a collection by the newest of its folder's and files' times (the integration suite checks each
kind of change on every server it runs). DAViCal and Cyrus move it too, but their CTag is cheap, and DAViCal dates
it by PostgreSQL's clock, not Apache's behind the answer's ``Date``; Xandikos gives none; SOGo gives the time of the
answer. Any other server is checked by its CTag."""

NEAR_SECONDS = 86_400
"""How far from the server's clock a number of seconds may be and still be read as the time of a change."""


def is_unsettled(value: str, date: str | None, now: float | None = None) -> bool:
    """Whether ``value`` reads as the Unix time of a second the server's clock has not yet left.

    ``date`` is the answer's ``Date`` header; without a readable one, the local
    clock ``now`` (default: the time now) stands in, and a value within
    NEAR_SECONDS of it either way is taken as unsettled. An opaque version (a
    hash, a URI, a counter far from the clock) is always settled.
    """
    if not value.isdigit() or len(value) > 12:
        return False
    stamp = int(value)
    try:
        server_now = int(parsedate_to_datetime(date).timestamp()) if date else None
    except (TypeError, ValueError):
        server_now = None
    if server_now is None:
        local = time.time() if now is None else now
        return abs(stamp - local) <= NEAR_SECONDS
    return server_now <= stamp <= server_now + NEAR_SECONDS


def keeper_of(sync_token: str | None) -> str | None:
    """The name of the server in :data:`KEEPS_MODIFIED` that gives a collection this sync-token; None for any other."""
    if not sync_token:
        return None
    return next((name for name, start in KEEPS_MODIFIED if sync_token.startswith(start)), None)


def settled_modified(value: str | None, date: str | None) -> str | None:
    """A collection's ``DAV:getlastmodified`` (an HTTP-date, RFC 4918 §15.7) once the server's clock left its second.

    ``date`` is the same answer's ``Date`` header. The value has a resolution of
    one second, so a change made within the second it names may leave it as it
    is; once the server's clock is past that second, any later change names a
    later one. The ``Date`` must be two seconds later, not one: the server reads
    the value before it dates its answer, and a change landing between the two
    within the named second would otherwise share it. None when the value is
    missing, unreadable, or not yet settled.
    """
    if not value or not date:
        return None
    try:
        changed, now = parsedate_to_datetime(value).timestamp(), parsedate_to_datetime(date).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return value if changed + 1 < now else None
