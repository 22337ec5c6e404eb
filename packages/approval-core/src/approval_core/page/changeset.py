"""One yes for a changeset: several pending approvals of one caller, approved with one passkey assertion.

When a caller has several guarded calls pending on the approval page at once
(the assistant asked to delete three events, one call each), the page lists
them together (:mod:`approval_core.page.changeset_routes`) and one assertion
of the paired passkey approves exactly that set. What makes it exact:

* **The caller.** A pending approval belongs to its caller's *scope*: over
  HTTP the authenticated principal the binding holds
  (:data:`~approval_core.asking.binding.PRINCIPAL_KEY`: client id, issuer,
  subject), so replicas sharing the record store list the same set; over
  stdio, where one server process is one client's session, the process (a
  random id made when the page starts). Two callers' calls are never one set.
* **The challenge.** The WebAuthn challenge of a set is
  ``SHA-256("approval-core/v1/changeset" 0x00 nonce digest)``
  (:func:`set_challenge`), where ``digest`` (:func:`set_digest`) is the
  SHA-256 of the canonical encoding of the server's name and every item's
  ``(pending id, binding fingerprint)`` pair, as a set. The fingerprint is
  the one a single approval binds (:func:`~approval_core.asking.binding.bind`:
  target, dialog text, version, principal), so the assertion signs the set
  and nothing more: an assertion for one set never approves another, and a
  single approval's assertion approves no set (nor the other way round: the
  challenge record says which it was issued for).
* **Every item still open.** Offering the challenge and taking the answer
  both check each item (:meth:`Changesets.gather`): it exists, belongs to the
  same caller, has not expired, has no decision, was not used, and is still
  the pending approval its call finds (not asked again since). One item that
  fails refuses the whole set, naming the item's code; nothing is approved.
* **All or nothing.** The decisions are written in two steps: each item is
  first held for the set (a note that reads as undecided and that no other
  decision can replace); only when every item is held does each become an
  approval. An item decided in between releases the held ones.

After that each item is an ordinary page approval: the call finds it by its
fingerprint when the client repeats it, and it acts once
(:mod:`approval_core.page.path`). A call outside the set asks on its own.

Which approvals a caller has pending is kept in the record store as up to
:data:`SLOTS` slot notes per scope, each claimed with a write-once note and
living as long as its approval. A call that finds every slot taken is in no
set; it still asks on its own page.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable, Sequence

from approval_core.asking.binding import PRINCIPAL_KEY, Binding, canonical_json
from approval_core.page.passkeys import b64url, unb64url
from approval_core.page.pending import KEEP_AFTER_EXPIRY, PendingApproval, PendingBook
from approval_core.records.store import RecordStore

__all__ = [
    "SET_LIMIT",
    "SLOTS",
    "Changesets",
    "SetRefused",
    "set_challenge",
    "set_digest",
]

SET_LIMIT = 25
"""The most pending approvals one set may hold (and the page lists)."""
SLOTS = 50
"""Slot notes per caller: pending approvals of one caller beyond this many within their lifetime are in no set."""
_LABEL = b"approval-core/v1/changeset"
_HELD = "held:"
_RELEASE_SECONDS = 0.001


class SetRefused(Exception):
    """A set the page cannot offer or approve; ``message`` names the item and why (for the person)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def set_digest(server: str, items: Iterable[PendingApproval]) -> str:
    """SHA-256 hex of the set: the server's name and each item's ``(id, fingerprint)``, in any order."""
    pairs = frozenset((record.id, record.fingerprint) for record in items)
    text = canonical_json({"server": server, "changeset": pairs})
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def set_challenge(nonce: bytes, digest: str) -> bytes:
    """The WebAuthn challenge (32 bytes) committing to the set ``digest``, made unique by ``nonce``."""
    return hashlib.sha256(_LABEL + b"\x00" + nonce + digest.encode("ascii")).digest()


def _label(record: PendingApproval) -> str:
    return f"the call {record.tool} (code {record.code})"


class Changesets:
    """The sets of one server's approval page: which approvals each caller has pending, and deciding them at once.

    Args:
        book: The page's pending approvals.
        store: The record store (shared by replicas through Redis).
        instance: This page's own id, the scope of calls that carry no principal (stdio). Default: random.

    Every method may raise :class:`~approval_core.records.store.StoreUnavailable`.
    """

    def __init__(self, book: PendingBook, store: RecordStore, *, instance: str | None = None) -> None:
        self.book = book
        self.store = store
        self.instance = instance if instance is not None else secrets.token_urlsafe(12)

    @property
    def _keep(self) -> float:
        return self.book.ttl + KEEP_AFTER_EXPIRY

    def scope(self, binding: Binding) -> str:
        """The caller's scope of ``binding`` (hex SHA-256): its principal, else this page's process."""
        caller = binding.target.get(PRINCIPAL_KEY)
        who = {"principal": caller} if caller is not None else {"process": self.instance}
        text = canonical_json({"server": self.book.server_name, **who})
        return hashlib.sha256(text.encode("ascii")).hexdigest()

    async def enlist(self, record: PendingApproval, binding: Binding) -> None:
        """List the newly opened ``record`` (of the call ``binding``) among its caller's pending approvals."""
        scope = self.scope(binding)
        await self.store.write("set-of", record.id, scope, self._keep, only_new=True)
        ttl = max(1.0, record.expires - self.book.now)
        for slot in range(SLOTS):
            if await self.store.write("set-slot", f"{scope}:{slot}", record.id, ttl, only_new=True):
                return

    async def scope_of(self, pending_id: str) -> str | None:
        """The caller's scope of the pending approval ``pending_id``, or None (unknown, or in no set)."""
        return await self.store.read("set-of", pending_id)

    async def members(self, scope: str) -> list[PendingApproval]:
        """The caller's pending approvals still open (see :meth:`problem`), oldest first, at most ``SET_LIMIT``."""
        found: list[PendingApproval] = []
        for slot in range(SLOTS):
            pending_id = await self.store.read("set-slot", f"{scope}:{slot}")
            if not pending_id:
                continue
            record = await self.book.get(pending_id)
            if record is not None and await self.problem(record, scope) is None:
                found.append(record)
        found.sort(key=lambda record: (record.created, record.id))
        return found[:SET_LIMIT]

    async def problem(self, record: PendingApproval, scope: str) -> str | None:
        """Why ``record`` cannot be part of a set of ``scope`` now, in words naming it; None when it can."""
        label = _label(record)
        if await self.scope_of(record.id) != scope:
            return f"{label} is not one of this session's calls"
        if record.seconds_left(self.book.now) <= 0:
            return f"{label} has expired"
        if await self.store.read("decision", record.id):
            return f"{label} was answered already"
        if await self.book.spent(record.id):
            return f"{label} was used already"
        current = await self.book.current(record.fingerprint)
        if current is None or current.id != record.id:
            return f"{label} was asked again since"
        return None

    async def gather(self, scope: str, ids: Sequence[str]) -> list[PendingApproval]:
        """The records of ``ids``, each checked to be open in ``scope``.

        Raises:
            SetRefused: ``ids`` is empty, too long or repeats an id; an id is unknown; an item cannot be part
                of the set (the message names the first such item).
        """
        if not ids or len(ids) > SET_LIMIT or len(set(ids)) != len(ids):
            raise SetRefused(f"a set holds 1 to {SET_LIMIT} different calls")
        records: list[PendingApproval] = []
        for pending_id in ids:
            record = await self.book.get(pending_id)
            if record is None:
                raise SetRefused("one of the calls is not known here any more")
            why = await self.problem(record, scope)
            if why is not None:
                raise SetRefused(why)
            records.append(record)
        return records

    async def offer(self, records: Sequence[PendingApproval], ttl: float) -> bytes:
        """A single-use WebAuthn challenge committing to ``records`` (see :func:`set_challenge`), kept ``ttl`` s."""
        nonce = secrets.token_bytes(32)
        digest = set_digest(self.book.server_name, records)
        challenge = set_challenge(nonce, digest)
        await self.store.put("challenge", b64url(challenge), f"s:{digest}:{b64url(nonce)}", ttl)
        return challenge

    async def redeem(self, signed: str, records: Sequence[PendingApproval]) -> bytes:
        """Spend the challenge ``signed`` (base64url, from the assertion) and check it commits to ``records``.

        Returns the challenge's bytes, for the assertion's verification.

        Raises:
            SetRefused: the challenge was not issued for a set, is spent or stale, or commits to another set.
        """
        taken = await self.store.take("challenge", signed)
        if taken is None or taken[1] or not taken[0].startswith("s:"):
            raise SetRefused("the passkey answered a challenge this page did not issue for a set, or a stale one")
        _, digest, nonce = taken[0].split(":", 2)
        now = set_digest(self.book.server_name, records)
        try:
            challenge = unb64url(signed)
            expected = set_challenge(unb64url(nonce), now)
        except ValueError:
            raise SetRefused("the passkey answer's challenge is not base64url") from None
        if not secrets.compare_digest(digest, now) or not secrets.compare_digest(challenge, expected):
            raise SetRefused("the set changed since the passkey was asked: it was signed for other calls")
        return challenge

    async def approve(self, records: Sequence[PendingApproval]) -> None:
        """Approve every record of the set, or none (see the module docstring: held first, then approved).

        Raises:
            SetRefused: an item was decided meanwhile; the items held for the set are released.
        """
        held = _HELD + set_digest(self.book.server_name, records)
        taken: list[PendingApproval] = []
        for record in records:
            if not await self.store.write("decision", record.id, held, self._keep, only_new=True):
                for claimed in taken:
                    await self.store.write("decision", claimed.id, "", _RELEASE_SECONDS, only_new=False)
                raise SetRefused(f"{_label(record)} was answered meanwhile")
            taken.append(record)
        for record in taken:
            await self.store.write("decision", record.id, "approve", self._keep, only_new=False)

    async def deny(self, scope: str, ids: Sequence[str]) -> list[PendingApproval]:
        """Deny each of ``ids`` that is still undecided in ``scope``; return those denied now.

        Denying needs no passkey: it can only stop a change. An id of another caller is left alone.
        """
        denied: list[PendingApproval] = []
        for pending_id in ids[:SET_LIMIT]:
            record = await self.book.get(pending_id)
            if record is None or await self.scope_of(record.id) != scope:
                continue
            if record.seconds_left(self.book.now) <= 0:
                continue
            verdict = await self.book.decide(record, "deny")
            if verdict.taken:
                denied.append(record)
        return denied
