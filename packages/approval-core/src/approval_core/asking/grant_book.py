"""Where standing grants are kept, and how a use is counted once across replicas.

:class:`GrantBook` keeps the grants of one server (their terms:
:mod:`approval_core.asking.grants`) in the gate's record store, shared by
replicas: this process, the owner-only file over stdio, or Redis over HTTP.
A use is counted once across replicas: use *i* of a grant is the note
``grant-use:<id>:<i>``, written only where none is (``SET NX`` in Redis: one
atomic command, so no read-modify-write to race), and a call tries uses
*1, 2, ..., N* in order, so the uses spent are always the first ones and of
two calls racing for the last use exactly one writes it. A grant has no
secret: its id names it in results, the page and the audit, and knowing it
allows nothing. At most :data:`MAX_LIVE_GRANTS` grants are kept at once.
"""

from __future__ import annotations

import contextvars
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from approval_core.asking.grants import GrantCall, GrantTerms
from approval_core.records.store import RecordStore

__all__ = [
    "KEEP_ENDED",
    "MAX_LIVE_GRANTS",
    "GrantBook",
    "GrantState",
    "GrantUse",
    "GrantsFull",
    "noted_grant_uses",
]

MAX_LIVE_GRANTS = 32
"""Grants kept at once per server (live, and ended within :data:`KEEP_ENDED` seconds)."""
KEEP_ENDED = 3600.0
"""Seconds a grant's records outlive its expiry, so the page lists it as ended and its summary is pushed once."""


@dataclass(frozen=True, slots=True)
class GrantState:
    """A grant as the store holds it now: its id, terms, uses spent, and whether it was revoked."""

    id: str
    terms: GrantTerms
    used: int
    revoked: bool

    def ended(self, now: float) -> Literal["revoked", "used_up", "expired"] | None:
        """Why the grant allows nothing any more, or None while it is live."""
        if self.revoked:
            return "revoked"
        if self.used >= self.terms.uses:
            return "used_up"
        if now >= self.terms.expires:
            return "expired"
        return None


@dataclass(frozen=True, slots=True)
class GrantUse:
    """One call a grant allowed: the grant's id, this use's number, the uses and whole minutes left."""

    grant: str
    number: int
    uses_left: int
    minutes_left: int


class GrantsFull(Exception):
    """:data:`MAX_LIVE_GRANTS` grants are kept already; one must end (and its records expire) first."""


_NOTED: contextvars.ContextVar[list[GrantUse] | None] = contextvars.ContextVar("approval_grant_uses", default=None)


def noted_grant_uses() -> contextvars.ContextVar[list[GrantUse] | None]:
    """The context variable in which the gate notes the grant uses of the current tool call (for its result)."""
    return _NOTED


@dataclass
class GrantBook:
    """Makes, finds, uses, revokes and lists the grants of one server in its record store.

    Every method may raise :class:`~approval_core.records.store.StoreUnavailable`.
    """

    store: RecordStore
    server_name: str
    clock: Callable[[], float] = field(default=time.time)

    async def offer(self, fingerprint: str, call: GrantCall, ttl: float) -> None:
        """Keep what the call ``fingerprint`` names, for ``ttl`` seconds, so the page can widen its yes."""
        await self.store.write("grant-offer", fingerprint, call.to_json(), ttl, only_new=False)

    async def offered(self, fingerprint: str) -> GrantCall | None:
        """What the call ``fingerprint`` named, as :meth:`offer` kept it, or None."""
        raw = await self.store.read("grant-offer", fingerprint)
        return None if raw is None else GrantCall.from_json(raw)

    async def make(self, terms: GrantTerms) -> str:
        """Keep a grant with ``terms`` (signed by the passkey before this); its id.

        Raises:
            GrantsFull: no place is free among :data:`MAX_LIVE_GRANTS`.
        """
        grant_id = "g-" + secrets.token_hex(5)
        keep = max(1.0, terms.expires - self.clock()) + KEEP_ENDED
        for slot in range(1, MAX_LIVE_GRANTS + 1):
            if await self.store.write("grant-slot", str(slot), grant_id, keep, only_new=True):
                await self.store.write("grant", grant_id, terms.to_json(), keep, only_new=True)
                return grant_id
        raise GrantsFull(f"{MAX_LIVE_GRANTS} grants are kept already; revoke one, or wait until one has ended")

    async def get(self, grant_id: str) -> GrantState | None:
        """The grant ``grant_id`` with its uses counted, or None."""
        raw = await self.store.read("grant", grant_id)
        terms = None if raw is None else GrantTerms.from_json(raw)
        if terms is None or terms.server != self.server_name:
            return None
        used = 0
        while used < terms.uses and await self.store.read("grant-use", f"{grant_id}:{used + 1}") is not None:
            used += 1
        revoked = await self.store.read("grant-revoked", grant_id) is not None
        return GrantState(grant_id, terms, used, revoked)

    async def all(self) -> list[GrantState]:
        """Every grant kept (live or ended within :data:`KEEP_ENDED`), oldest slot first."""
        found: list[GrantState] = []
        for slot in range(1, MAX_LIVE_GRANTS + 1):
            grant_id = await self.store.read("grant-slot", str(slot))
            state = None if grant_id is None else await self.get(grant_id)
            if state is not None and all(s.id != state.id for s in found):
                found.append(state)
        return found

    async def use(self, call: GrantCall, states: list[GrantState] | None = None) -> tuple[GrantUse, GrantState] | None:
        """Spend one use of a live grant covering ``call``; None when none does (the call then asks).

        ``states`` is :meth:`all` when the caller read it just now. Of two calls racing for a grant's last
        use, exactly one gets it (see the module docstring).
        """
        now = self.clock()
        for state in await self.all() if states is None else states:
            if state.ended(now) is not None or state.terms.refuses(call, now) is not None:
                continue
            keep = max(1.0, state.terms.expires - now) + KEEP_ENDED
            for number in range(state.used + 1, state.terms.uses + 1):
                if await self.store.write("grant-use", f"{state.id}:{number}", "1", keep, only_new=True):
                    if await self.store.read("grant-revoked", state.id) is not None:
                        return None  # revoked while this use was taken: it allows nothing
                    left = state.terms.uses - number
                    minutes = max(0, int((state.terms.expires - now) // 60))
                    after = GrantState(state.id, state.terms, number, False)
                    return GrantUse(state.id, number, left, minutes), after
        return None

    async def revoke(self, grant_id: str) -> GrantState | None:
        """Stop ``grant_id`` (no passkey needed: it only stops); its state before, or None when there is none."""
        state = await self.get(grant_id)
        if state is None:
            return None
        keep = max(1.0, state.terms.expires - self.clock()) + KEEP_ENDED
        await self.store.write("grant-revoked", grant_id, "1", keep, only_new=True)
        return GrantState(state.id, state.terms, state.used, True)

    async def close(self, state: GrantState) -> bool:
        """Mark ``state`` as ended and summed; True for the first caller only (it sends the one summary push)."""
        keep = max(1.0, state.terms.expires - self.clock()) + KEEP_ENDED
        return await self.store.write("grant-ended", state.id, "1", keep, only_new=True)
