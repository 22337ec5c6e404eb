"""A collection's version as the server gives it, and the writes sent to it from here: what a cache checks.

A cache of what a collection holds (a calendar's listed window, an address
book's hrefs and ETags) is kept under :meth:`CollectionVersions.current`: the
collection's CTag (calendarserver.org ``getctag``), else its sync-token
(RFC 6578 §4), together with the count of changing requests this client sent
to the collection's members. Any change by any client changes the first; a
write from here changes the second at once, before the server is asked again.
The values are compared, never interpreted, with one exception: SOGo 5.8
answers both properties with the Unix time, in seconds, of the collection's
last change, so a second change within that second leaves the version as it
was. Such a value says "unchanged" only once the server's clock (its ``Date``
header, RFC 9110 §6.6.1) has left that second; until then it is made unique
here (:func:`is_unsettled`), so the collection is read again.

Where the CTag is costly (Radicale computes it from every member: on 2,000
entries it costs about as much as a month's calendar-query), a cache may be
kept under the collection's settled ``DAV:getlastmodified`` instead
(:meth:`CollectionVersions.check`, :meth:`CollectionVersions.modified_keeps`):
one second of resolution, so only once the server's clock has left the second
after the one it names, only on a server known to move it with every change of
a member (:data:`KEEPS_MODIFIED`: Radicale's file storage, told by the start of
its sync-token, asked once), and only while that server has not been seen to
leave it as it was while the CTag moved (each answer that gives both is
compared with the last one). What each kind costs on this server is timed as
it is asked.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from webdav_core import xml
from webdav_core.keeper import MODIFIED, VERSION_KINDS, LastChangeTrust
from webdav_core.last_change import KEEPS_MODIFIED, NEAR_SECONDS, is_unsettled, keeper_of, settled_modified
from webdav_core.profile import Profile
from webdav_core.session import ConfinedSession
from webdav_core.xml import DAV, norm_href

__all__ = [
    "KEEPS_MODIFIED",
    "KEPT_SECONDS",
    "MODIFIED",
    "NEAR_SECONDS",
    "READING_METHODS",
    "CollectionVersions",
    "KeptByVersion",
    "is_unsettled",
    "keeper_of",
    "settled_modified",
]

T = TypeVar("T")

READING_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PROPFIND", "REPORT"})
"""The methods that change nothing; every other one counts as a write to the collection of its target."""

_MODIFIED = (DAV, "getlastmodified")

KEPT_SECONDS = 600.0
"""How long :class:`KeptByVersion` keeps a value after its read, however its collection's version holds."""

_unsettled = itertools.count(1)

log = logging.getLogger("webdav_core")


def _version(kind: tuple[str, str], value: str, date: str | None) -> str:
    """``kind:value``, made unique while :func:`is_unsettled` says so."""
    if is_unsettled(value, date):
        return f"{kind[1]}:{value}~unsettled-{next(_unsettled)}"
    return f"{kind[1]}:{value}"


class CollectionVersions(LastChangeTrust):
    """The versions of the collections one client reads, and the writes it sent to each.

    Whether a collection's last change can stand for its version is learnt by
    :class:`webdav_core.keeper.LastChangeTrust`, which this extends.

    Args:
        session: The client's confined session (the PROPFINDs go through it).
        profile: The server's names and errors.
    """

    def __init__(self, session: ConfinedSession, profile: Profile) -> None:
        super().__init__(session, profile)
        self._kind: dict[str, tuple[str, str] | None] = {}
        self._writes: dict[str, int] = {}
        self._noted: dict[str, tuple[str, str | None, float]] = {}

    def paired(self, path: str, version: str) -> str | None:
        """The settled last change an answer gave together with ``version`` (a :meth:`current` or noted version).

        None unless the last answer that gave both for ``path`` gave this version, and no write was sent from
        here since (``version`` counts them). While :meth:`modified_keeps`, the same last change now says the
        version is still ``version``.
        """
        base, _, writes = version.rpartition("|")
        pair = self._pairs.get(path)
        if pair is None or pair[0] != base or writes != str(self.writes_to(path)):
            return None
        return pair[1]

    def by_modified(self, path: str, modified: str) -> str:
        """The version of ``path`` that a settled last change ``modified`` gives, with the writes sent from here.

        It names the collection too (``getlastmodified:<date>@<path>|<writes>``): two collections changed in
        the same second have different versions, so a cursor of one never continues a listing of the other.
        """
        return f"{MODIFIED}:{modified}@{norm_href(path)}|{self.writes_to(path)}"

    @staticmethod
    def modified_in(version: str) -> str | None:
        """The last change a version from :meth:`by_modified` names; None for any other version."""
        if not version.startswith(MODIFIED + ":"):
            return None
        return version[len(MODIFIED) + 1 :].rpartition("|")[0].partition("@")[0]

    async def cheapest(self, path: str) -> str | None:
        """The version of ``path`` now by the cheapest validator kept: its settled last change, else :meth:`current`.

        The last change alone where :meth:`modified_keeps` and an earlier answer gave it settled for ``path``
        with its version; otherwise, or when it is not settled now, :meth:`current`. Whether the server keeps its
        last change is never asked here: :meth:`learn_keeper` asks it where no read waits, and a request of it
        still out is waited for.

        Raises:
            unreachable / unauthenticated: as for any request.
        """
        await self.keeper_settled()
        if path in self._pairs and self.modified_keeps():
            value, date = await self._modified_now(path)
            settled = settled_modified(value, date)
            if settled is not None:
                return self.by_modified(path, settled)
        return await self.current(path)

    async def check(self, path: str, version: str) -> str | None:
        """The version of ``path`` now, of the kind ``version`` (a kept value's) is: what to compare it with.

        A version from :meth:`by_modified` is checked by the last change alone
        (one PROPFIND of depth 0, cheap on Radicale) while :meth:`modified_keeps`;
        a last change not yet settled, or a server no longer trusted with it,
        gives :meth:`current` instead (another kind, so the kept value is read
        again). So is a CTag or sync-token version an answer gave with a settled
        last change (:meth:`paired`): the same last change now gives the version
        back. Any other version is :meth:`current`.

        Raises:
            unreachable / unauthenticated: as for any request.
        """
        if self.modified_in(version) is not None and self.modified_keeps():
            value, date = await self._modified_now(path)
            settled = settled_modified(value, date)
            if settled is not None:
                return self.by_modified(path, settled)
        elif self.modified_keeps() and (paired := self.paired(path, version)) is not None:
            value, date = await self._modified_now(path)
            if settled_modified(value, date) == paired:
                return version  # the last change it was given with has not moved: nor has the version
        return await self.current(path)

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

    def note(self, path: str, response: xml.DavResponse, date: str | None = None) -> None:
        """Note the version a collection listing gave for ``path`` (its ``CS:getctag``, when the response has one).

        A collection listing that asks for ``getctag`` tells each collection's
        version as it was when the listing was answered, so a read that follows
        soon after (:meth:`recent`) needs no request of its own. Where it also
        asked for ``DAV:getlastmodified`` and ``date`` is the answer's ``Date``
        header, that value is noted with the version once settled
        (:func:`settled_modified`, :meth:`modified_with`).
        """
        value = response.text(*VERSION_KINDS[0])
        if value:
            self._kind[path] = VERSION_KINDS[0]
            modified = settled_modified(response.text(*_MODIFIED), date)
            self._learn(path, f"{VERSION_KINDS[0][1]}:{value}", modified)
            if not is_unsettled(value, None):  # no Date at hand: a time near the local clock is not noted
                version = f"{_version(VERSION_KINDS[0], value, None)}|{self.writes_to(path)}"
                self._noted[path] = (version, modified, time.monotonic())

    def recent(self, path: str, seconds: float) -> str | None:
        """The version :meth:`note` or :meth:`current` last took for ``path``, less than ``seconds`` ago; or None.

        Only for a read that follows, to keep what it reads under once :meth:`current`
        asked after the read gives the same (a version that is a digest of the
        content, Radicale's, comes back when a change is undone, so a change made
        between this version and the read would otherwise hide its undoing); never
        to decide that something kept is current.
        """
        noted = self._noted.get(path)
        if noted is None or time.monotonic() - noted[2] > seconds:
            return None
        return noted[0]

    def modified_with(self, path: str, version: str) -> str | None:
        """The settled ``getlastmodified`` noted for ``path`` together with ``version`` (:meth:`note`); else None."""
        noted = self._noted.get(path)
        return noted[1] if noted is not None and noted[0] == version else None

    async def modified(self, path: str) -> str | None:
        """The collection's ``DAV:getlastmodified`` now (a PROPFIND of depth 0 for it alone); None if not given.

        Cheap where the CTag is not (Radicale: from the files' times, against every entry for the CTag).
        Compared with a settled value noted earlier (:meth:`modified_with`), it tells whether it changed since.

        Raises:
            unreachable / unauthenticated: as for any request; a failed answer is None.
        """
        return (await self._modified_now(path))[0]

    async def _modified_now(self, path: str) -> tuple[str | None, str | None]:
        """The collection's ``DAV:getlastmodified`` now and the answer's ``Date`` header (each None if not given)."""
        what = f"read {path}"
        body = xml.propfind([_MODIFIED])
        started = time.monotonic()
        try:
            answer = await self._session.send("PROPFIND", path, body=body, headers={"Depth": "0"}, what=what)
            found = self._session.parsed(answer, what).responses
        except (self._profile.errors.unreachable, self._profile.errors.unauthenticated):
            raise
        except self._profile.errors.backend:
            return None, None
        self._took(MODIFIED, time.monotonic() - started)
        value = next((value for response in found if (value := response.text(*_MODIFIED))), None)
        return value, answer.headers.get("Date")

    async def of(self, path: str) -> str | None:
        """The server's version of the collection at ``path``; None where it offers neither kind.

        A PROPFIND of depth 0 for ``CS:getctag`` (Radicale reads every member to
        answer each of the two), then for ``DAV:sync-token`` where that is
        missing, each with ``DAV:getlastmodified`` (the pair is compared with
        the last one, :meth:`_learn`, and the request timed); the kind found is
        remembered, so an unchanged collection costs one small request.
        """
        kinds = [self._kind[path]] if path in self._kind else list(VERSION_KINDS)
        for kind in kinds:
            if kind is None:
                return None
            what = f"read {path}"
            body = xml.propfind([kind, _MODIFIED])
            started = time.monotonic()
            answer = await self._session.send("PROPFIND", path, body=body, headers={"Depth": "0"}, what=what)
            found = self._session.parsed(answer, what).responses
            value = next((v for r in found if (v := r.text(*kind))), None)
            if value:
                self._took(kind[1], time.monotonic() - started)
                self._kind[path] = kind
                date = answer.headers.get("Date")
                modified = next((m for r in found if (m := r.text(*_MODIFIED))), None)
                self._learn(path, f"{kind[1]}:{value}", settled_modified(modified, date))
                return _version(kind, value, date)
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
        if version is None:
            return None
        current = f"{version}|{self.writes_to(path)}"
        self._noted[path] = (current, None, time.monotonic())
        return current


class KeptByVersion(Generic[T]):
    """Values read from collections (by path), each kept while its collection's version holds, at most ``max_age``.

    The age bounds what a server whose version does not change with its
    content (a broken CTag) can hide: its changes are seen once the value is
    that old.

    Memory: one value per collection path asked for.

    Args:
        max_age: Seconds a value is kept after its read, whatever the version says (default KEPT_SECONDS).
    """

    def __init__(self, max_age: float | None = None) -> None:
        self.max_age = KEPT_SECONDS if max_age is None else max_age
        self._kept: dict[str, tuple[str, T, float]] = {}

    async def get(self, path: str, versions: CollectionVersions, read: Callable[[], Awaitable[T]]) -> T:
        """The value ``read()`` gave last time while the collection at ``path`` is unchanged, else ``read()``'s now.

        One small request (:meth:`CollectionVersions.current`) before either, and
        one after a read: what was read is kept only under a version that held
        across the read (a version that is a digest of the content, Radicale's,
        comes back when a change is undone, so a change the read saw and undone
        later would otherwise stay hidden under it). A collection without a
        version is read every time and nothing is kept.
        """
        version = await versions.current(path)
        kept = self._kept.get(path)
        fresh = kept is not None and time.monotonic() - kept[2] <= self.max_age
        if version is not None and kept is not None and kept[0] == version and fresh:
            return kept[1]
        value = await read()
        if version is not None and await versions.current(path) == version:
            self._kept[path] = (version, value, time.monotonic())
        else:
            self._kept.pop(path, None)
        return value
