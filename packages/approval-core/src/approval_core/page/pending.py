"""Pending approvals: a question kept on the server until a person answers it on the approval page.

Where no form dialog can be shown, the gate records a :class:`PendingApproval`
in the record store (this process, or Redis shared by replicas) and sends the
person to the approval page (:mod:`approval_core.page.approval_page`). A record holds:

* an opaque ``id`` (128 random bits, the only thing a page URL carries);
* a short ``code`` (``K7Q-4``) the person compares between the page, the
  push and what the assistant said;
* the binding ``fingerprint`` of the call (target, version, counts and, over
  HTTP, the authenticated principal), which is how the next identical call
  finds the decision;
* the dialog as the form dialog would show it (the server's operation text,
  its consequence, and the caller's values already escaped and cut), never
  text read from a backend;
* what the change touches as the backend stores it, when the server gave it
  (:class:`~approval_core.page.stored.StoredView`, JSON): for the page only,
  drawn there as stored data, never sent anywhere else;
* its expiry (wall-clock seconds, :data:`DEFAULT_PENDING_TTL` after it was
  opened).

The decision and the spend are notes written once (``only_new``): the first
tap decides and later taps are told what was decided; the first call that
finds an approval spends it, so it acts exactly once.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Literal

from approval_core.asking.binding import Binding
from approval_core.asking.dialog import Question
from approval_core.page.stored import StoredView
from approval_core.records.store import RecordStore

__all__ = [
    "CODE_ALPHABET",
    "DEFAULT_PENDING_TTL",
    "Choice",
    "PendingApproval",
    "PendingBook",
    "Verdict",
]

DEFAULT_PENDING_TTL = 300.0
"""Seconds a pending approval may wait for the person's decision (5 minutes)."""

KEEP_AFTER_EXPIRY = 600.0
"""Seconds a record outlives its expiry, so a late tap is told "expired" rather than "not found"."""

CODE_ALPHABET = "ACDEFGHJKLMNPQRTUVWXY"
"""Letters of a code: no I/O/B/S/Z, which read like digits."""
_DIGITS = "23456789"

Choice = Literal["approve", "deny"]


@dataclass(frozen=True, slots=True)
class PendingApproval:
    """One question waiting for a person's decision on the approval page.

    Attributes:
        id: Opaque, URL-safe, 22 characters; the page URL carries only this.
        code: The short code shown on the page, in the refusal and in the push (``K7Q-4``).
        server: The name of the server that asks.
        tool: The tool whose call waits.
        fingerprint: The binding fingerprint of the call (hex SHA-256).
        headline: The operation in the server's own words (its counts filled in).
        consequence: The server's sentence on why it cannot be undone.
        caller_values: ``(label, value)`` pairs, values escaped and cut as in the form dialog.
        created, expires: Wall-clock seconds (UTC epoch).
        stored: The :class:`~approval_core.page.stored.StoredView` as JSON, or None (see :meth:`view`).
    """

    id: str
    code: str
    server: str
    tool: str
    fingerprint: str
    headline: str
    consequence: str
    caller_values: tuple[tuple[str, str], ...]
    created: float
    expires: float
    stored: str | None = None

    def view(self) -> StoredView | None:
        """What the change touches as stored (for the page only), or None when the server gave nothing."""
        return None if self.stored is None else StoredView.from_json(self.stored)

    def to_json(self) -> str:
        """The record as compact JSON (what the store keeps)."""
        return json.dumps(asdict(self), separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, raw: str) -> PendingApproval | None:
        """The record ``raw`` holds, or None when it is not one (never trusted further than that)."""
        try:
            data = json.loads(raw)
            values = tuple((str(label), str(value)) for label, value in data.pop("caller_values"))
            return cls(caller_values=values, **data)
        except (ValueError, TypeError, KeyError, AttributeError):
            return None

    def seconds_left(self, now: float) -> float:
        """Seconds until it expires (0 when it has)."""
        return max(0.0, self.expires - now)


@dataclass(frozen=True, slots=True)
class Verdict:
    """What became of a decision the page passed on.

    Attributes:
        taken: True when this decision was recorded now.
        decided: The decision that stands (this one, or an earlier one), or None when none stands yet but
            this one could not be recorded: the set page holds the approval while it approves it with others.
    """

    taken: bool
    decided: Choice | None


def new_code() -> str:
    """A short code a person can compare at a glance: letter digit letter, a dash, a digit (``K7Q-4``)."""
    pick = secrets.choice
    return f"{pick(CODE_ALPHABET)}{pick(_DIGITS)}{pick(CODE_ALPHABET)}-{pick(_DIGITS)}"


class PendingBook:
    """Opens, finds, decides and spends pending approvals in a record store.

    Args:
        store: The record store the gate uses (shared by replicas through Redis).
        server_name: The server whose approvals these are.
        ttl: Seconds a pending approval waits (default :data:`DEFAULT_PENDING_TTL`).
        clock: Wall-clock seconds (tests inject one).

    Every method may raise :class:`~approval_core.records.store.StoreUnavailable`.
    """

    def __init__(
        self,
        store: RecordStore,
        server_name: str,
        *,
        ttl: float = DEFAULT_PENDING_TTL,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.server_name = server_name
        self.ttl = ttl
        self._clock = clock

    @property
    def now(self) -> float:
        """The book's wall-clock seconds."""
        return self._clock()

    async def open(self, binding: Binding, dialog: Question, stored: StoredView | None = None) -> PendingApproval:
        """Record a new pending approval for ``binding`` and make it the one the next identical call finds.

        ``stored`` (what the change touches, as stored) is kept in the record for the page alone.
        """
        now = self._clock()
        record = PendingApproval(
            id=secrets.token_urlsafe(16),
            code=new_code(),
            server=self.server_name,
            tool=binding.tool,
            fingerprint=binding.fingerprint,
            headline=dialog.headline(),
            consequence=dialog.consequence,
            caller_values=dialog.shown_values(),
            created=now,
            expires=now + self.ttl,
            stored=None if stored is None else stored.to_json(),
        )
        keep = self.ttl + KEEP_AFTER_EXPIRY
        await self.store.write("pending", record.id, record.to_json(), keep, only_new=True)
        await self.store.write("pending-of", binding.fingerprint, record.id, self.ttl, only_new=False)
        return record

    async def get(self, pending_id: str) -> PendingApproval | None:
        """The record under ``pending_id`` (expired or not), or None."""
        raw = await self.store.read("pending", pending_id)
        if raw is None:
            return None
        record = PendingApproval.from_json(raw)
        if record is None or record.id != pending_id or record.server != self.server_name:
            return None
        return record

    async def current(self, fingerprint: str) -> PendingApproval | None:
        """The live (unexpired, unspent) pending approval of the call ``fingerprint``, or None."""
        pending_id = await self.store.read("pending-of", fingerprint)
        if pending_id is None:
            return None
        record = await self.get(pending_id)
        if record is None or record.fingerprint != fingerprint or record.expires <= self._clock():
            return None
        if await self.spent(record.id):
            return None
        return record

    async def decision(self, pending_id: str) -> Choice | None:
        """The decision recorded for ``pending_id``, or None while there is none."""
        found = await self.store.read("decision", pending_id)
        if found == "approve" or found == "deny":
            return found
        return None

    async def decide(self, record: PendingApproval, choice: Choice) -> Verdict:
        """Record ``choice`` unless a decision stands already; say which decision stands.

        The caller checks expiry and the person's passkey first.
        """
        keep = self.ttl + KEEP_AFTER_EXPIRY
        if await self.store.write("decision", record.id, choice, keep, only_new=True):
            return Verdict(True, choice)
        return Verdict(False, await self.decision(record.id))

    async def spend(self, record: PendingApproval) -> bool:
        """Use the decision of ``record`` once: True for the first caller only."""
        return await self.store.write("spent", record.id, "1", self.ttl + KEEP_AFTER_EXPIRY, only_new=True)

    async def spent(self, pending_id: str) -> bool:
        """Whether the decision of ``pending_id`` was used already."""
        return await self.store.read("spent", pending_id) is not None
