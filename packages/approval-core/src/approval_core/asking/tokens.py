"""The two-call confirm token, and the bounded single-use store behind it.

Where no dialog can be shown, a guarded call is refused once with a random
token; the same call repeated with that token runs. What that proves, and no
more: **the call was made twice with the same arguments**. A model can read
the token out of the first result and send it straight back; the token
catches a widened target or an accidental call, not a model that was talked
into the whole thing.

Rules (seed 001 §"What the token fallback proves"):

* a token is ``secrets.token_urlsafe(18)`` (24 characters, 144 random bits);
* it is kept in a record store (:mod:`approval_core.records.store`): this process by
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
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from approval_core.records.store import DEFAULT_CAPACITY, MemoryStore, RecordStore, SingleUseStore

__all__ = ["TOKEN_TTL", "IssuedToken", "Redemption", "SingleUseStore", "TokenStore"]

TOKEN_TTL = 300.0

Clock = Callable[[], float]


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
            :class:`~approval_core.records.store.MemoryStore` of this process.
    """

    def __init__(
        self,
        *,
        ttl: float = TOKEN_TTL,
        capacity: int = DEFAULT_CAPACITY,
        clock: Clock = time.time,
        store: RecordStore | None = None,
    ):
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
