"""Where single-use records live: in this process, or in Redis shared by replicas.

Two kinds of record make approvals single use: the confirm tokens of the
two-call fallback (space ``"token"``) and the nonces of the sealed
input_required states (space ``"state"``). Both follow one contract,
:class:`RecordStore`:

``await put(space, secret, fingerprint, ttl)``
    Remember that ``secret`` was issued for the call ``fingerprint``, for
    ``ttl`` seconds. Issuing fails (raises) rather than overwrite a record.
``await take(space, secret)``
    Spend ``secret`` atomically: remove its record and return
    ``(fingerprint, expired)``, or None when there is none (never issued,
    already spent, dropped, or long expired). Of two concurrent ``take`` calls
    for one secret, at most one gets the record.
``await write(space, key, value, ttl, only_new=...)`` / ``await read(space, key)``
    Notes that live ``ttl`` seconds and are read any number of times: the
    pending approvals of the approval page (:mod:`approval_core.page.pending`).
    With ``only_new=True`` a write happens only where no note is (Redis
    ``SET NX``) and says whether it did, so of two concurrent first writes
    (two decisions, two spends) exactly one wins and the note is never
    changed after.

Secrets are never stored as given: a record's key is the SHA-256 of the
secret, so neither a memory dump nor a look into Redis yields a usable token.

:class:`MemoryStore` is the default (one process; a restart forgets every
record, which is the safe direction: an answer or token from before the restart
is refused). :class:`RedisStore` keeps the records in Redis under
``approval-core:<server name>:<space>:<sha256 hex>``, written with
``SET ... NX PX`` (set if absent, with expiry) and spent with ``GETDEL``, so
a record is single use across every replica and across restarts. A record
also names the Redis history that took it in (its ``run_id``, new at every
Redis start, and its ``master_replid``, new at every promotion): one that
comes back after Redis restarted, from a snapshot taken before it was spent
(Debian's ``redis-server`` saves snapshots by default), from a replica
promoted after a failover, or on a demoted master promoted again (a
failback, same ``run_id``) is not honoured, so a restored record can never
approve a second time. A failover therefore voids every record in flight:
those questions are asked again and those tokens refused. Every Redis
call is bounded by :data:`STORE_TIMEOUT` seconds, and a connection that
breaks (a Redis restart leaves the pooled ones dead) is made anew once within
that time; a Redis that cannot be reached, refuses or hangs raises
:class:`StoreUnavailable`, and the gate then
refuses the guarded call (it never approves without its records).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol
from urllib.parse import urlsplit

from approval_core.errors import ApprovalError

__all__ = [
    "DEFAULT_CAPACITY",
    "MemoryStore",
    "NoteSpace",
    "RecordStore",
    "SingleUseStore",
    "Space",
    "StoreUnavailable",
    "digest",
    "redacted_url",
]

Space = Literal["token", "state", "challenge"]
"""Spaces of single-use records: confirm tokens, state nonces, WebAuthn challenges."""

NoteSpace = Literal[
    "pending",
    "pending-of",
    "decision",
    "spent",
    "pairing",
    "memo",
    "view",
    "view-of",
    "task",
    "task-run",
    "task-call",
    "task-outcome",
    "set-of",
    "set-slot",
    "grant",
    "grant-slot",
    "grant-use",
    "grant-revoked",
    "grant-ended",
    "grant-offer",
]
"""Spaces of notes (:meth:`RecordStore.write`): the approval page's records, its read-only views, its sets, the
MCP tasks that wait for a pending approval (:mod:`approval_core.serving.tasks`) and the standing grants
(:mod:`approval_core.asking.grants`)."""


DEFAULT_CAPACITY = 4096
"""Records kept per space, at most, by the in-process store."""

Clock = Callable[[], float]


@dataclass(frozen=True, slots=True)
class _Entry:
    fingerprint: str
    expires_at: float


class SingleUseStore:
    """Nonces this process issued and has not yet seen back.

    Keys are SHA-256 digests of the nonce, so a lookup reveals nothing about
    a nonce's characters through timing. Times are seconds from ``clock``.
    """

    def __init__(self, *, ttl: float, capacity: int = DEFAULT_CAPACITY, clock: Clock = time.time) -> None:
        if ttl <= 0 or capacity < 1:
            raise ValueError("SingleUseStore needs a positive ttl and capacity")
        self.ttl = ttl
        self.capacity = capacity
        self._clock = clock
        self._entries: dict[bytes, _Entry] = {}

    def __len__(self) -> int:
        return len(self._entries)

    @staticmethod
    def _key(nonce: str) -> bytes:
        return hashlib.sha256(nonce.encode("utf-8", "surrogatepass")).digest()

    def sweep(self) -> None:
        """Drop every expired entry."""
        now = self._clock()
        expired = [key for key, entry in self._entries.items() if entry.expires_at <= now]
        for key in expired:
            del self._entries[key]

    def holds(self, nonce: str) -> bool:
        """Whether an entry for ``nonce`` is held (expired or not)."""
        return self._key(nonce) in self._entries

    def add(self, nonce: str, fingerprint: str, *, ttl: float | None = None) -> float:
        """Remember ``nonce`` for ``fingerprint`` for ``ttl`` seconds (default: the store's); return its expiry."""
        self.sweep()
        while len(self._entries) >= self.capacity:
            del self._entries[next(iter(self._entries))]
        expires_at = self._clock() + (self.ttl if ttl is None else ttl)
        self._entries[self._key(nonce)] = _Entry(fingerprint, expires_at)
        return expires_at

    def take(self, nonce: str) -> tuple[str, bool] | None:
        """Spend ``nonce``: remove it and return ``(fingerprint, expired)``.

        Returns None when the nonce is unknown: never issued here, already
        spent, dropped for space, or swept after expiry.
        """
        entry = self._entries.pop(self._key(nonce), None)
        if entry is None:
            return None
        return entry.fingerprint, entry.expires_at <= self._clock()


class StoreUnavailable(ApprovalError):
    """The record store could not be reached, refused the command, or did not answer in time.

    The message says which operation failed and why, without the store's
    password. The gate turns it into a refusal with outcome
    ``store_unavailable``; nothing is approved.

    ``lasting`` is True when trying again will not help (the store refused
    the credentials or the rights in ``APPROVAL_STORE_URL``): the refusal then
    says to fix the setting instead of to try again.
    """

    def __init__(self, message: str, *, lasting: bool = False) -> None:
        super().__init__(message)
        self.lasting = lasting


class RecordStore(Protocol):
    """The single-use record contract (see the module docstring)."""

    async def put(self, space: Space, secret: str, fingerprint: str, ttl: float) -> None:
        """Remember ``secret`` for ``fingerprint`` for ``ttl`` seconds.

        Raises:
            StoreUnavailable: the store cannot record it (Redis down or slow,
                or a record under this secret exists already).
        """
        ...

    async def take(self, space: Space, secret: str) -> tuple[str, bool] | None:
        """Spend ``secret``: ``(fingerprint, expired)``, or None if there is no record.

        Raises:
            StoreUnavailable: the store cannot be asked.
        """
        ...

    async def write(self, space: NoteSpace, key: str, value: str, ttl: float, *, only_new: bool) -> bool:
        """Keep the note ``value`` under ``key`` for ``ttl`` seconds; True if it was written.

        With ``only_new`` the note is written only where none is (live), else it replaces any.

        Raises:
            StoreUnavailable: the store cannot be asked.
        """
        ...

    async def read(self, space: NoteSpace, key: str) -> str | None:
        """The live note under ``key``, or None (never written, expired, or written by another Redis run).

        Raises:
            StoreUnavailable: the store cannot be asked.
        """
        ...

    async def aclose(self) -> None:
        """Release connections (a no-op in process)."""
        ...


def digest(secret: str) -> str:
    """The SHA-256 hex of ``secret``: the only form in which a secret is ever a key."""
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


class MemoryStore:
    """Records in this process: bounded (``capacity`` per space, oldest dropped first), forgotten on restart.

    Args:
        capacity: Records kept per space at most.
        clock: Wall-clock seconds (``time.time``); injectable for tests.
    """

    def __init__(self, *, capacity: int = DEFAULT_CAPACITY, clock: Callable[[], float] = time.time) -> None:
        self._spaces: dict[str, SingleUseStore] = {}
        self._notes: dict[str, tuple[str, float]] = {}
        self._capacity = capacity
        self._clock = clock

    def _space(self, space: Space) -> SingleUseStore:
        found = self._spaces.get(space)
        if found is None:
            found = self._spaces[space] = SingleUseStore(ttl=1.0, capacity=self._capacity, clock=self._clock)
        return found

    def __len__(self) -> int:
        return sum(len(store) for store in self._spaces.values())

    async def put(self, space: Space, secret: str, fingerprint: str, ttl: float) -> None:
        """See :meth:`RecordStore.put`."""
        store = self._space(space)
        if store.holds(secret):
            raise StoreUnavailable(f"a {space} record under this secret exists already")
        store.add(secret, fingerprint, ttl=ttl)

    async def take(self, space: Space, secret: str) -> tuple[str, bool] | None:
        """See :meth:`RecordStore.take`."""
        return self._space(space).take(secret)

    async def write(self, space: NoteSpace, key: str, value: str, ttl: float, *, only_new: bool) -> bool:
        """See :meth:`RecordStore.write` (bounded: at most ``capacity`` notes per space, oldest dropped)."""
        name = f"{space}:{digest(key)}"
        now = self._clock()
        if only_new and self._live(name, now) is not None:
            return False
        self._notes.pop(name, None)
        expired = [k for k, (_, until) in self._notes.items() if until <= now]
        for k in expired:
            del self._notes[k]
        same = [k for k in self._notes if k.startswith(f"{space}:")]
        for k in same[: max(0, len(same) - self._capacity + 1)]:
            del self._notes[k]
        self._notes[name] = (value, now + ttl)
        return True

    async def read(self, space: NoteSpace, key: str) -> str | None:
        """See :meth:`RecordStore.read`."""
        return self._live(f"{space}:{digest(key)}", self._clock())

    def _live(self, name: str, now: float) -> str | None:
        found = self._notes.get(name)
        if found is None or found[1] <= now:
            return None
        return found[0]

    async def aclose(self) -> None:
        """Nothing to release."""


def redacted_url(url: str) -> str:
    """``url`` with any password replaced by ``***`` (for messages and logs)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return parts._replace(netloc=f"{user}:***@{netloc}").geturl()
