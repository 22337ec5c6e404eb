"""Whether a server's last change of a collection can stand for the collection's version: learnt per client.

A collection's settled ``DAV:getlastmodified`` (one second of resolution) is
cheap where its CTag is not (Radicale computes the CTag from every member),
but it checks kept values only on a server known to move it with every
change of a member (:data:`webdav_core.last_change.KEEPS_MODIFIED`, told by
the start of its sync-token, RFC 6578 §4), and only while that server has not
been seen to leave it as it was while the version moved. :class:`LastChangeTrust`
holds what one client learnt of that, and what each kind of request cost;
:class:`webdav_core.versions.CollectionVersions` extends it.
"""

from __future__ import annotations

import logging
import time

import anyio

from webdav_core import xml
from webdav_core.last_change import keeper_of
from webdav_core.profile import Profile
from webdav_core.session import ConfinedSession
from webdav_core.xml import CS, DAV

__all__ = ["COSTLIER", "MODIFIED", "VERSION_KINDS", "LastChangeTrust"]

VERSION_KINDS = ((CS, "getctag"), (DAV, "sync-token"))
"""The two properties a collection's version is read from, the first a server gives: its CTag, its sync-token."""
_SYNC_TOKEN = (DAV, "sync-token")

MODIFIED = "getlastmodified"
"""The name a version taken from a collection's settled ``DAV:getlastmodified`` starts with (``getlastmodified:``)."""

COSTLIER = 1.5
"""A CTag (or sync-token) that costs at most this many times the last change is the validator even where the last
change would do: it has no second of resolution and needs no trust learnt."""

log = logging.getLogger("webdav_core")


class LastChangeTrust:
    """What one client learnt of whether a server keeps its collections' last change, and what each check costs.

    Args:
        session: The client's confined session (the sync-token request goes through it).
        profile: The server's names and errors.
    """

    def __init__(self, session: ConfinedSession, profile: Profile) -> None:
        self._session = session
        self._profile = profile
        self._pairs: dict[str, tuple[str, str]] = {}
        self._paired_at: dict[str, float] = {}
        self._lagging = False
        self._keeper: bool | None = None
        self._learning: anyio.Event | None = None
        self._cost: dict[str, float] = {}

    def _learn(self, path: str, value: str, modified: str | None) -> None:
        """Compare the version and settled last change given together for ``path`` with the last pair seen.

        A version that moved while a settled last change stayed shows a server whose last change of a collection
        does not follow its members: it is never used as a validator again (for any collection of this server).
        """
        if modified is None:
            return
        last = self._pairs.get(path)
        self._pairs[path] = (value, modified)
        self._paired_at[path] = time.monotonic()
        if last is not None and last[0] != value and last[1] == modified and not self._lagging:
            self._lagging = True
            log.warning(
                "the last change of %s stayed while its version moved: kept values are checked by version", path
            )

    def _took(self, kind: str, seconds: float) -> None:
        """Note what one request for ``kind`` cost (a running mean of the last ones, in seconds)."""
        last = self._cost.get(kind)
        self._cost[kind] = seconds if last is None else (last + seconds) / 2

    def modified_keeps(self) -> bool:
        """Whether a settled ``DAV:getlastmodified`` checks kept values here: never seen to lag, and cheaper.

        False until :meth:`trusts_modified` found the server in :data:`KEEPS_MODIFIED`,
        once the server was seen to leave a collection's last change as it
        was while its version moved (:meth:`_learn`), and where the version costs
        at most COSTLIER times the last change (both timed as asked).
        """
        if self._lagging or not self._keeper:
            return False
        version = min((self._cost[kind[1]] for kind in VERSION_KINDS if kind[1] in self._cost), default=None)
        modified = self._cost.get(MODIFIED)
        return version is None or modified is None or version > COSTLIER * modified

    @property
    def modified_untrusted(self) -> bool:
        """True once the server is known not to keep its last change (not in KEEPS_MODIFIED, or seen to lag)."""
        return self._keeper is False or self._lagging

    @property
    def keeper_known(self) -> bool:
        """Whether :meth:`trusts_modified` answers without a request: the server told by its sync-token, or lagging."""
        return self._keeper is not None or self._lagging

    async def learn_keeper(self, path: str) -> None:
        """:meth:`trusts_modified` as a request no page waits for (asked in the background): one at a time.

        On Radicale the sync-token is computed from every member of ``path`` (on
        2,000 entries it costs about a month's calendar-query), so it is asked
        where no read waits for it, once per client; a failure tells nothing (it
        is asked again at the next chance). :meth:`keeper_settled` waits for it:
        a caller whose kept value it settles (caldav-mcp's listing, and a later
        call for the same window) waits for it, at most the request's timeout.
        """
        if self.keeper_known or self._learning is not None:
            return
        self._learning = anyio.Event()
        try:
            await self.trusts_modified(path)
        except Exception:  # unreachable or refused: not known yet, asked again at the next chance
            log.info("the sync-token of %s could not be read: kept values are checked by CTag meanwhile", path)
        finally:
            self._learning.set()
            self._learning = None

    async def keeper_settled(self) -> None:
        """Wait for :meth:`learn_keeper`'s request while it is out (at once when none is)."""
        if self._learning is not None:
            await self._learning.wait()

    async def trusts_modified(self, path: str) -> bool:
        """:meth:`modified_keeps`, once the server is known: the first time, ``path``'s sync-token is asked for it.

        One PROPFIND of depth 0 for ``DAV:sync-token`` per client, whose start
        tells a server in :data:`KEEPS_MODIFIED`; a server giving none, or
        another, is checked by its CTag (a failed answer: this time, and the
        sync-token is asked again next time).

        Raises:
            unreachable / unauthenticated: as for any request.
        """
        if self._keeper is None and not self._lagging:
            what = f"read {path}"
            try:
                answer = await self._session.send(
                    "PROPFIND", path, body=xml.propfind([_SYNC_TOKEN]), headers={"Depth": "0"}, what=what
                )
                found = self._session.parsed(answer, what).responses
            except (self._profile.errors.unreachable, self._profile.errors.unauthenticated):
                raise
            except self._profile.errors.backend:
                return False  # not known yet: checked by CTag this time, asked again next time
            token = next((value for response in found if (value := response.text(*_SYNC_TOKEN))), None)
            self._keeper = keeper_of(token) is not None
            if not self._keeper:
                log.info("%s gives no sync-token of a server known to keep its last change: checked by CTag", path)
        return self.modified_keeps()

    def paired_since(self, path: str) -> float:
        """Seconds since an answer last gave the version of ``path`` with its settled last change (inf: never)."""
        seen = self._paired_at.get(path)
        return float("inf") if seen is None else time.monotonic() - seen
