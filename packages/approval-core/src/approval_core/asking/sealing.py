"""Sealed ``requestState`` for the input_required flow (MCP 2026-07-28).

On 2026-07-28 a guarded call ends with ``input_required``; the client asks
the person and retries, echoing the state this module minted. That state is
attacker-controlled request content, so it is sealed: HMAC-SHA256 (via
``cryptography``) under a 32-byte key (made when the process starts, or
derived from the deployment's key file so that every replica shares it), over

    version, server name, tool, binding fingerprint, nonce, expiry (Unix s).

Opening a state checks, in order: the format, the seal, the server, the tool,
the fingerprint of the call now being made, the expiry, and finally that its
nonce was minted here (by this process, or by a replica sharing the record
store) and not yet spent. Verifying spends the nonce, whatever the answer
turns out to be, so one answer is used at most once. The seal is made with
the current key and opens under the current key or any previous key
(rotation).
Every failure is reported as a reason code for the audit log; the gate turns
each into a fresh question, never into an error.

Format: ``ac1.<base64url payload>.<base64url tag>``, the prefix bound under the
tag so a token cannot be replayed into another format version.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, hmac

from approval_core.records.store import DEFAULT_CAPACITY, MemoryStore, RecordStore

__all__ = ["STATE_TTL", "Opened", "StateSealer"]

STATE_TTL = 300.0
_PREFIX = "ac1."
_VERSION = 1
_KEY_BYTES = 32


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if _b64(raw) != text:
        raise ValueError("non-canonical base64url")
    return raw


@dataclass(frozen=True, slots=True)
class Opened:
    """The result of opening a state: ``ok`` and, when not, a reason code.

    Reason codes: ``malformed``, ``seal``, ``server``, ``tool``, ``target``,
    ``expired``, ``spent``.
    """

    ok: bool
    reason: str = ""


class StateSealer:
    """Mints and opens sealed, single-use states for one server process.

    Args:
        server_name: Sealed into every state; a state from another server
            does not open here.
        key: HMAC key that seals, at least 32 bytes; default: 32 random
            bytes made now, so a restart invalidates every earlier state.
        previous_keys: Keys (each at least 32 bytes) that still open a state
            but never seal one: the keys before a rotation.
        ttl: Seconds a state stays valid (default :data:`STATE_TTL`, 300).
        capacity: Unspent nonces kept at most by the default in-process store.
        clock: Wall-clock seconds (``time.time``); injectable for tests.
        store: Where unspent nonces are recorded (space ``"state"``);
            default a :class:`~approval_core.records.store.MemoryStore` of this process.

    Raises:
        ValueError: a key is shorter than 32 bytes.
    """

    def __init__(
        self,
        server_name: str,
        *,
        key: bytes | None = None,
        ttl: float = STATE_TTL,
        capacity: int = DEFAULT_CAPACITY,
        clock: Callable[[], float] = time.time,
        previous_keys: Sequence[bytes] = (),
        store: RecordStore | None = None,
    ) -> None:

        if any(len(k) < _KEY_BYTES for k in (*([key] if key is not None else []), *previous_keys)):
            raise ValueError(f"the state key must be at least {_KEY_BYTES} bytes")
        self._server = server_name
        self._key = key if key is not None else os.urandom(_KEY_BYTES)
        self._opening_keys = (self._key, *previous_keys)
        self._clock = clock
        self._ttl = ttl
        self._unspent: RecordStore = MemoryStore(capacity=capacity, clock=clock) if store is None else store

    @property
    def ttl(self) -> float:
        """Seconds a state it seals stays valid."""
        return self._ttl

    def _tag(self, message: bytes) -> bytes:
        mac = hmac.HMAC(self._key, hashes.SHA256())
        mac.update(message)
        return mac.finalize()

    async def seal(self, tool: str, fingerprint: str, memo: Mapping[str, str] | None = None) -> str:
        """Mint a state for ``tool`` and the call ``fingerprint``.

        ``memo`` (small ``name -> text`` values a call made up, such as a new UID) is sealed in with it and
        read back on the retry by :meth:`memo`, so the retry builds the same request.

        Raises:
            StoreUnavailable: the nonce cannot be recorded (no state is handed out).
        """
        nonce = secrets.token_urlsafe(18)
        await self._unspent.put("state", nonce, fingerprint, self._ttl)
        claims: dict[str, Any] = {
            "v": _VERSION,
            "srv": self._server,
            "tool": tool,
            "fp": fingerprint,
            "n": nonce,
            "exp": int(self._clock() + self._ttl),
        }
        if memo:
            claims["memo"] = dict(memo)
        body = _b64(json.dumps(claims, separators=(",", ":"), ensure_ascii=True).encode("ascii"))
        return f"{_PREFIX}{body}.{_b64(self._tag((_PREFIX + body).encode('ascii')))}"

    async def open(self, state: str, tool: str, fingerprint: str) -> Opened:
        """Verify ``state`` for the call being made now, spending its nonce.

        Never raises for bad input: every failure is an :class:`Opened` with
        ``ok=False`` and a reason code.

        Raises:
            StoreUnavailable: the nonce of a well-sealed state cannot be
                spent (the state is then neither accepted nor spent).
        """
        claims = self._verified_claims(state)
        if claims is None:
            return Opened(False, "malformed")
        if claims == {}:
            return Opened(False, "seal")
        # The seal is ours: spend the nonce before judging anything else.
        taken = await self._unspent.take("state", str(claims.get("n", "")))
        checks = (
            (claims.get("v") == _VERSION and isinstance(claims.get("exp"), int), "malformed"),
            (claims.get("srv") == self._server, "server"),
            (claims.get("tool") == tool, "tool"),
            (claims.get("fp") == fingerprint, "target"),
            (isinstance(claims.get("exp"), int) and self._clock() < claims["exp"], "expired"),
            (taken is not None, "spent"),
        )
        for passed, reason in checks:
            if not passed:
                return Opened(False, reason)
        return Opened(True)

    def memo(self, state: str, tool: str) -> dict[str, str]:
        """The memo sealed into ``state`` for ``tool`` by this server, unexpired; ``{}`` otherwise (nothing spent)."""
        claims = self._verified_claims(state) or {}
        memo = claims.get("memo")
        fresh = isinstance(claims.get("exp"), int) and self._clock() < claims["exp"]
        if claims.get("srv") != self._server or claims.get("tool") != tool or not fresh or not isinstance(memo, dict):
            return {}
        return {str(k): str(v) for k, v in memo.items()}  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]

    def _verified_claims(self, state: str) -> dict[str, Any] | None:
        """Claims of a state whose seal opens; ``{}`` for a bad seal; None if malformed."""
        if not state.startswith(_PREFIX) or state.count(".") != 2:
            return None
        body, _, tag_text = state[len(_PREFIX) :].partition(".")
        try:
            tag = _unb64(tag_text)
            payload = _unb64(body)
        except (ValueError, binascii.Error):
            return None
        if not any(self._verifies(key, body, tag) for key in self._opening_keys):
            return {}
        try:
            claims = json.loads(payload)
        except ValueError:
            return None
        return claims if isinstance(claims, dict) and claims else None  # pyright: ignore[reportUnknownVariableType]

    @staticmethod
    def _verifies(key: bytes, body: str, tag: bytes) -> bool:
        mac = hmac.HMAC(key, hashes.SHA256())
        mac.update((_PREFIX + body).encode("ascii"))
        try:
            mac.verify(tag)
        except InvalidSignature:
            return False
        return True
