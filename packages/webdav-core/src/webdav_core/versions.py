"""A collection's version as a cache of its members may trust it: its CTag, else its sync-token.

A cache keeps what it read with the version the server gave just before, and
serves it again only while the server gives that same version. That holds
only if every later change gives a new one. SOGo 5.8 answers both ``CS:getctag``
and ``DAV:sync-token`` with the Unix time, in seconds, of the collection's last
change: a second change within that second leaves the version as it was. Such
a value says "unchanged" only once the server's clock (its ``Date`` header,
RFC 9110 §6.6.1) has passed that second; until then it is made unique here, so
that it never equals a version kept before or after it, and the collection is
read again.
"""

from __future__ import annotations

import itertools
import time
from email.utils import parsedate_to_datetime

from webdav_core import xml
from webdav_core.answer import Answer
from webdav_core.session import ConfinedSession

__all__ = ["NEAR_SECONDS", "is_unsettled", "read", "version_of"]

NEAR_SECONDS = 86_400
"""How far from the server's clock a number of seconds may be and still be read as the time of a change."""

_unsettled = itertools.count(1)


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


def version_of(kind: str, value: str, answer: Answer) -> str:
    """The version to compare: ``kind:value``, made unique while :func:`is_unsettled` says so."""
    if is_unsettled(value, answer.headers.get("Date")):
        return f"{kind}:{value}~unsettled-{next(_unsettled)}"
    return f"{kind}:{value}"


async def read(session: ConfinedSession, path: str, kind: tuple[str, str]) -> str | None:
    """The version of the collection at ``path`` as the property ``kind`` gives it (PROPFIND, depth 0), or None."""
    what = f"read {path}"
    answer = await session.send("PROPFIND", path, body=xml.propfind([kind]), headers={"Depth": "0"}, what=what)
    value = next((v for r in session.parsed(answer, what).responses if (v := r.text(*kind))), None)
    return version_of(kind[1], value, answer) if value else None
