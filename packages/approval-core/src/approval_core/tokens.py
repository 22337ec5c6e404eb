"""The two-call confirm token, and the bounded single-use store behind it.

Where no dialog can be shown, a guarded call is refused once with a random
token; the same call repeated with that token runs. What that proves, and no
more: **the call was made twice with the same arguments**. A model can read
the token out of the first result and send it straight back; the token
catches a widened target or an accidental call, not a model that was talked
into the whole thing.

Rules (seed 001 §"What the token fallback proves"):

* a token is ``secrets.token_urlsafe(18)`` (24 characters, 144 random bits);
* it is kept in a record store (:mod:`approval_core.store`): this process by
  default, or Redis shared by the replicas, keyed on its SHA-256 and holding
  the binding fingerprint;
* it lives :data:`TOKEN_TTL` seconds (300);
* it is single use: presenting it spends it, whether or not it matched, so a
  token tried against another target is gone for the original one as well;
* the in-process store is bounded: expired entries are swept on every issue,
  and when it is still full the oldest entry is dropped (that token then
  fails, which is the safe direction); Redis drops a record after its expiry.
"""

from __future__ import annotations

import enum
import hashlib
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from approval_core.store import RecordStore

__all__ = ["TOKEN_TTL", "IssuedToken", "Redemption", "SingleUseStore", "TokenStore"]

TOKEN_TTL = 300.0
DEFAULT_CAPACITY = 4096

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


class Redemption(enum.Enum):
    """What became of a presented confirm token."""

    ACCEPTED = "accepted"
    UNKNOWN = "unknown"
    EXPIRED = "expired"
    OTHER_CALL = "other_call"


@dataclass(frozen=True, slots=True)
class IssuedToken:
    """A confirm token and its lifetime in seconds."""

    token: str
    ttl: float


class TokenStore:
    """Issues and redeems confirm tokens (see the module docstring).

    Args:
        ttl: Seconds a token lives (default :data:`TOKEN_TTL`).
        capacity: Tokens kept at most by the default in-process store.
        clock: Wall-clock seconds (tests).
        store: Where tokens are recorded (space ``"token"``); default a
            :class:`~approval_core.store.MemoryStore` of this process.
    """

    def __init__(
        self,
        *,
        ttl: float = TOKEN_TTL,
        capacity: int = DEFAULT_CAPACITY,
        clock: Clock = time.time,
        store: RecordStore | None = None,
    ):
        from approval_core.store import MemoryStore

        if ttl <= 0:
            raise ValueError("TokenStore needs a positive ttl")
        self.ttl = ttl
        self.store: RecordStore = MemoryStore(capacity=capacity, clock=clock) if store is None else store

    def __len__(self) -> int:
        return len(self.store)  # pyright: ignore[reportArgumentType]

    async def issue(self, fingerprint: str) -> IssuedToken:
        """A fresh token bound to ``fingerprint``.

        Raises:
            StoreUnavailable: the record store cannot record it.
        """
        token = secrets.token_urlsafe(18)
        await self.store.put("token", token, fingerprint, self.ttl)
        return IssuedToken(token, self.ttl)

    async def redeem(self, token: str, fingerprint: str) -> Redemption:
        """Spend ``token`` and say whether it authorises the call ``fingerprint``.

        Raises:
            StoreUnavailable: the record store cannot be asked (nothing is authorised).
        """
        taken = await self.store.take("token", token)
        if taken is None:
            return Redemption.UNKNOWN
        bound, expired = taken
        if expired:
            return Redemption.EXPIRED
        if not secrets.compare_digest(bound, fingerprint):
            return Redemption.OTHER_CALL
        return Redemption.ACCEPTED
