"""The chain of vouches in the passkey file: every passkey after the first was agreed to by one paired before it.

Without the chain, any program that can write the passkey file could append
a public key of its own and approve with it. So each entry after the first
of a relying party carries a *vouch*: a WebAuthn assertion (W3C WebAuthn
Level 3 §7.2), made with user verification by a passkey already in the
chain, over a challenge that is the SHA-256 of this statement, as canonical
JSON (sorted keys, no spaces)::

    {"kind": "mcp-approval-family passkey vouch 1", "user_id": <the file's user id>,
     "rp_id": ..., "id": <new credential id>, "public_key": <new COSE key>, "added": ...,
     "previous": <sha256 hex of the chain's last entry when it was made>, "nonce": <b64url>}

kept in the entry as ``{"by", "nonce", "client_data", "authenticator_data",
"signature"}`` (b64url). The statement names the new key, the file it is
in and the entry before it, so a vouch copied onto another key, into another
file or to another place in the file verifies nothing.

:func:`walk` reads the entries of one rp id in file order: the first is the
root (whoever holds the file chose it; a changed root is announced by push,
:class:`FirstKeyRecord`); each later one joins the chain when its vouch
verifies against a passkey already in it, else it is left out with the
reason. Removing a passkey from the middle of the file therefore leaves out
those paired after it too, until they are paired again.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "VOUCH_KIND",
    "FirstKeyRecord",
    "Rejected",
    "entry_digest",
    "head_digest",
    "new_nonce",
    "vouch_challenge",
    "walk",
]

VOUCH_KIND = "mcp-approval-family passkey vouch 1"
"""The ``kind`` of a vouch statement (changes if its fields ever do)."""
_NO_PREVIOUS = ""


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _canonical(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def entry_digest(entry: dict[str, Any]) -> str:
    """SHA-256 hex of an entry as canonical JSON (its vouch included): what the next entry's vouch names."""
    return hashlib.sha256(_canonical(entry)).hexdigest()


def new_nonce() -> str:
    """A fresh vouch nonce (16 random bytes, b64url): no two vouches sign the same challenge."""
    return _b64url(secrets.token_bytes(16))


def vouch_challenge(user_id: str, previous: str, entry: dict[str, Any], nonce: str) -> bytes:
    """The 32-byte challenge a vouch signs for ``entry`` (its ``id``, ``public_key``, ``rp_id``, ``added``).

    Args:
        user_id: The passkey file's ``user_id``.
        previous: :func:`entry_digest` of the chain's last entry for this rp id.
        entry: The new entry, without its vouch.
        nonce: From :func:`new_nonce`, kept in the vouch.
    """
    statement = {
        "kind": VOUCH_KIND,
        "user_id": user_id,
        "rp_id": entry.get("rp_id"),
        "id": entry.get("id"),
        "public_key": entry.get("public_key"),
        "added": entry.get("added"),
        "previous": previous,
        "nonce": nonce,
    }
    return hashlib.sha256(_canonical(statement)).digest()


@dataclass(frozen=True, slots=True)
class Rejected:
    """An entry left out of the chain: its place in the file (from 0), credential id (b64url), why, its digest."""

    index: int
    credential_id: str
    reason: str
    digest: str

    def describe(self, path: Path) -> str:
        """One line for stderr: which entry of which file, and why it approves nothing."""
        short = self.credential_id[:16]
        return f"the passkey {short}… (entry {self.index + 1} of {path}) approves nothing: {self.reason}"


def _origin_fits(origin: object, rp_id: str) -> bool:
    """Whether ``origin`` is one a page of ``rp_id`` is served at (any port; http only for ``localhost``)."""
    if not isinstance(origin, str):
        return False
    parts = urlsplit(origin)
    if parts.hostname != rp_id or parts.path or parts.query or parts.fragment:
        return False
    return parts.scheme == "https" or (parts.scheme == "http" and rp_id == "localhost")


def _vouch_fault(user_id: str, chain: list[dict[str, Any]], entry: dict[str, Any]) -> str:
    """Why ``entry``'s vouch does not join it to ``chain`` (not empty), or ``""``."""
    from webauthn import verify_authentication_response
    from webauthn.helpers.exceptions import InvalidAuthenticationResponse

    vouch = entry.get("vouch")
    if not isinstance(vouch, dict):
        return "it carries no vouch from a passkey paired before it (it was not added by pairing)"
    fields: dict[str, Any] = vouch  # pyright: ignore[reportUnknownVariableType]
    signers = [paired for paired in chain if paired.get("id") == fields.get("by")]
    if not signers:
        return "its vouch names no passkey paired before it"
    if any(paired.get("id") == entry.get("id") for paired in chain):
        return "its credential id is paired already"
    core = {k: entry.get(k) for k in ("id", "public_key", "rp_id", "added")}
    challenge = vouch_challenge(user_id, head_digest(chain), core, str(fields.get("nonce", "")))
    try:
        client = json.loads(base64.urlsafe_b64decode(str(fields["client_data"]) + "=="))
        origin = client.get("origin")
        by = str(fields["by"])
        credential = {
            "id": by,
            "rawId": by,
            "type": "public-key",
            "response": {
                "clientDataJSON": str(fields["client_data"]),
                "authenticatorData": str(fields["authenticator_data"]),
                "signature": str(fields["signature"]),
            },
        }
        if not _origin_fits(origin, str(entry.get("rp_id"))):
            return "its vouch was made on a page of another site"
        verify_authentication_response(
            credential=credential,
            expected_challenge=challenge,
            expected_rp_id=str(entry.get("rp_id")),
            expected_origin=str(origin),
            credential_public_key=base64.urlsafe_b64decode(str(signers[0]["public_key"]) + "=="),
            credential_current_sign_count=0,
            require_user_verification=True,
        )
    except (InvalidAuthenticationResponse, ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return "its vouch does not verify (not signed by that passkey for this key, this file and this place)"
    return ""


def walk(user_id: str, entries: list[dict[str, Any]], rp_id: str) -> tuple[list[dict[str, Any]], list[Rejected]]:
    """The chain of ``rp_id``'s entries in file order, and the entries left out of it (see the module docstring)."""
    chain: list[dict[str, Any]] = []
    rejected: list[Rejected] = []
    for index, entry in enumerate(entries):
        if entry.get("rp_id") != rp_id:
            continue
        fault = _vouch_fault(user_id, chain, entry) if chain else ""
        if fault:
            rejected.append(Rejected(index, str(entry.get("id", "")), fault, entry_digest(entry)))
        else:
            chain.append(entry)
    return chain, rejected


def head_digest(chain: list[dict[str, Any]]) -> str:
    """:func:`entry_digest` of the chain's last entry (``""`` for an empty chain)."""
    return entry_digest(chain[-1]) if chain else _NO_PREVIOUS


class FirstKeyRecord:
    """Which first passkey (root of the chain) each rp id had when last seen: ``<passkey file>.first``, owner-only.

    A root that differs from the record (the file replaced, reordered, or
    its first passkey removed) is announced by push when a server starts.
    The record sits beside the file, so whoever can write as this user can
    rewrite both: it catches a file swapped by anything that does not know
    of it (a restored backup, a copied file, a careless tool), and the person
    sees their own passkey stop working when its chain is gone.
    """

    def __init__(self, passkeys_path: Path) -> None:
        self.path = passkeys_path.with_name(passkeys_path.name + ".first")

    def _read(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]

    def changed(self, rp_id: str, root: dict[str, Any] | None) -> bool:
        """Record ``root`` as ``rp_id``'s first passkey; True when another (or none) was recorded before."""
        if root is None:
            return False
        digest = entry_digest(root)
        record = self._read()
        if record.get(rp_id) == digest:
            return False
        self.remember(rp_id, root)
        return True

    def remember(self, rp_id: str, root: dict[str, Any]) -> None:
        """Record ``root`` as ``rp_id``'s first passkey (the pairing of a first passkey does this)."""
        record = {**self._read(), rp_id: entry_digest(root)}
        handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".passkeys-first-")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(record, out)
            os.chmod(temporary, 0o600)
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
