"""A collection's version as the server gives it, and the writes sent to it from here: what a cache checks.

A cache of what a collection holds (a calendar's listed window, an address
book's hrefs and ETags) is kept under :meth:`CollectionVersions.current`: the
collection's CTag (calendarserver.org ``getctag``), else its sync-token
(RFC 6578 §4), together with the count of changing requests this client sent
to the collection's members. Any change by any client changes the first; a
write from here changes the second at once, before the server is asked again.
The values are compared, never interpreted.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from webdav_core import xml
from webdav_core.profile import Profile
from webdav_core.session import ConfinedSession
from webdav_core.xml import CS, DAV, norm_href

__all__ = ["READING_METHODS", "CollectionVersions", "KeptByVersion"]

T = TypeVar("T")

READING_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PROPFIND", "REPORT"})
"""The methods that change nothing; every other one counts as a write to the collection of its target."""

_KINDS = ((CS, "getctag"), (DAV, "sync-token"))


class CollectionVersions:
    """The versions of the collections one client reads, and the writes it sent to each.

    Args:
        session: The client's confined session (the PROPFINDs go through it).
        profile: The server's names and errors.
    """

    def __init__(self, session: ConfinedSession, profile: Profile) -> None:
        self._session = session
        self._profile = profile
        self._kind: dict[str, tuple[str, str] | None] = {}
        self._writes: dict[str, int] = {}
        self._noted: dict[str, tuple[str, float]] = {}

    def sent(self, method: str, *targets: str | None) -> None:
        """Count a request of ``method`` to each of ``targets`` (paths or URLs) as a write when it is one."""
        if method in READING_METHODS:
            return
        for target in targets:
            if target:
                parent = norm_href(target).rstrip("/").rsplit("/", 1)[0] + "/"
                self._writes[parent] = self._writes.get(parent, 0) + 1

    def writes_to(self, collection: str) -> int:
        """How many changing requests were sent to members of ``collection`` (sent, not necessarily done)."""
        return self._writes.get(norm_href(collection).rstrip("/") + "/", 0)

    def note(self, path: str, response: xml.DavResponse) -> None:
        """Note the version a collection listing gave for ``path`` (its ``CS:getctag``, when the response has one).

        A collection listing that asks for ``getctag`` tells each collection's
        version as it was when the listing was answered, so a read that follows
        soon after (:meth:`recent`) needs no request of its own.
        """
        value = response.text(*_KINDS[0])
        if value:
            self._kind[path] = _KINDS[0]
            self._noted[path] = (f"{_KINDS[0][1]}:{value}|{self.writes_to(path)}", time.monotonic())

    def recent(self, path: str, seconds: float) -> str | None:
        """The version :meth:`note` took for ``path`` less than ``seconds`` ago, as :meth:`current` gives it; or None.

        Only for a read that follows, to keep what it reads under: a version taken
        before a read is safe to keep it under, however old (the worst is one read
        again when the collection had changed meanwhile); never to decide that
        something kept is current.
        """
        noted = self._noted.get(path)
        if noted is None or time.monotonic() - noted[1] > seconds:
            return None
        return noted[0]

    async def of(self, path: str) -> str | None:
        """The server's version of the collection at ``path``; None where it offers neither kind.

        A PROPFIND of depth 0 for ``CS:getctag`` alone (Radicale reads every
        member to answer each of the two), then for ``DAV:sync-token`` where that
        is missing; the kind found is remembered, so an unchanged collection
        costs one small request.
        """
        kinds = [self._kind[path]] if path in self._kind else list(_KINDS)
        for kind in kinds:
            if kind is None:
                return None
            ms = await self._session.multistatus("PROPFIND", path, xml.propfind([kind]), "0", f"read {path}")
            value = next((v for r in ms.responses if (v := r.text(*kind))), None)
            if value:
                self._kind[path] = kind
                return f"{kind[1]}:{value}"
        self._kind[path] = None
        return None

    async def current(self, path: str) -> str | None:
        """The version a cache of ``path`` is kept under: the server's, with the writes sent from here.

        None where the server gives no version, or fails to answer the PROPFIND
        (such a collection is read every time).

        Raises:
            unreachable / unauthenticated: as for any request (the read after it would fail the same way).
        """
        errors = self._profile.errors
        try:
            version = await self.of(path)
        except (errors.unreachable, errors.unauthenticated):
            raise
        except errors.backend:
            return None
        return None if version is None else f"{version}|{self.writes_to(path)}"


class KeptByVersion(Generic[T]):
    """Values read from collections (by path), each kept while its collection's version holds.

    Memory: one value per collection path asked for.
    """

    def __init__(self) -> None:
        self._kept: dict[str, tuple[str, T]] = {}

    async def get(self, path: str, versions: CollectionVersions, read: Callable[[], Awaitable[T]]) -> T:
        """The value ``read()`` gave last time while the collection at ``path`` is unchanged, else ``read()``'s now.

        One small request (:meth:`CollectionVersions.current`) before either; a
        collection without a version is read every time and nothing is kept.
        """
        version = await versions.current(path)
        kept = self._kept.get(path)
        if version is not None and kept is not None and kept[0] == version:
            return kept[1]
        value = await read()
        if version is not None:
            self._kept[path] = (version, value)
        return value
