"""The paired passkeys, kept in an owner-only file, and the WebAuthn ceremonies that use them.

Only a passkey with user verification (W3C WebAuthn Level 3 §6.2.3: a PIN,
a fingerprint, a face) approves on the approval page, so neither a model
driving a browser nor a page script can approve without the person's
gesture. The ceremonies are run by the ``webauthn`` library (py_webauthn);
this module keeps the file and says which rp id and origin are expected.

The file (``APPROVAL_PASSKEYS_FILE``, default
``<user data folder>/mcp-approval-family/passkeys.json``) holds JSON::

    {"version": 1, "user_id": "<b64url>",
     "credentials": [{"id": "<b64url>", "public_key": "<b64url COSE>", "rp_id": "localhost",
                      "added": "2026-12-01T22:50:00Z"}],
     "pairing": {"digest": "<sha256 hex of the one-time pairing secret>", "expires": 1800000000.0}}

It holds public keys and the digest of a pairing secret: nothing in it
approves or pairs by itself. It is written with mode 0600 and refused when
group or others may read or write it. A passkey is bound to its relying party
id (a domain; ``localhost`` for the loopback page), so the file may hold
passkeys of several deployments; each page uses those of its own rp id.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import os
import secrets
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from approval_core.errors import SettingsError

if TYPE_CHECKING:
    from webauthn.helpers.structs import PublicKeyCredentialDescriptor

__all__ = [
    "PAIRING_TTL",
    "CeremonyFailed",
    "Passkey",
    "PasskeyFile",
    "RelyingParty",
    "default_passkeys_path",
]

PAIRING_TTL = 600.0
"""Seconds a pairing link stays valid (10 minutes)."""
CEREMONY_TIMEOUT_MS = 120_000
"""What a browser is told a passkey prompt may take, in milliseconds."""


class CeremonyFailed(Exception):
    """A WebAuthn response did not verify (wrong passkey, no user verification, foreign origin, stale challenge)."""


def b64url(data: bytes) -> str:
    """Base64url without padding (RFC 4648 §5), as WebAuthn's JSON forms use."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64url(text: str) -> bytes:
    """The bytes of base64url ``text`` (padding optional). Raises ``ValueError`` on bad input."""
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def default_passkeys_path() -> Path:
    """``<user data folder>/mcp-approval-family/passkeys.json``, shared by every server of the family."""
    import platformdirs

    return platformdirs.user_data_path("mcp-approval-family", appauthor=False) / "passkeys.json"


@dataclass(frozen=True, slots=True)
class Passkey:
    """One paired passkey: credential id and COSE public key (bytes), rp id, when added (ISO 8601, UTC)."""

    credential_id: bytes
    public_key: bytes
    rp_id: str
    added: str


@dataclass(frozen=True, slots=True)
class RelyingParty:
    """Who the passkeys are for: the rp id (a domain, never an IP address) and the page's exact origin."""

    rp_id: str
    origin: str
    name: str = "MCP approval page"


@dataclass(slots=True)
class _Contents:
    user_id: str
    credentials: list[dict[str, Any]] = field(default_factory=lambda: [])
    pairing: dict[str, Any] | None = None


class PasskeyFile:
    """The passkey file at ``path``: read on every use, so a new pairing counts without a restart.

    Raises (from every method that reads): :class:`~approval_core.errors.SettingsError`
    when the file is open to group or others, or is not the JSON described
    in the module docstring.
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def _load(self) -> _Contents:
        try:
            info = self.path.stat()
        except FileNotFoundError:
            return _Contents(user_id=b64url(secrets.token_bytes(16)))
        if stat.S_IMODE(info.st_mode) & 0o077:
            raise SettingsError(
                f"the passkey file {self.path} may be read or written by others: make it owner-only (chmod 600)"
            )
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return _Contents(
                user_id=str(data["user_id"]),
                credentials=[dict(c) for c in data.get("credentials", [])],
                pairing=data.get("pairing"),
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise SettingsError(f"the passkey file {self.path} is not valid ({type(exc).__name__})") from None

    def _save(self, contents: _Contents) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        body = {
            "version": 1,
            "user_id": contents.user_id,
            "credentials": contents.credentials,
            "pairing": contents.pairing,
        }
        handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".passkeys-")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(body, out, indent=1)
            os.chmod(temporary, 0o600)
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    def passkeys(self, rp_id: str) -> list[Passkey]:
        """The passkeys paired for ``rp_id``."""
        found: list[Passkey] = []
        for entry in self._load().credentials:
            if entry.get("rp_id") == rp_id:
                found.append(
                    Passkey(unb64url(entry["id"]), unb64url(entry["public_key"]), rp_id, str(entry.get("added", "")))
                )
        return found

    def _descriptors(self, rp_id: str) -> list[PublicKeyCredentialDescriptor]:
        from webauthn.helpers.structs import PublicKeyCredentialDescriptor

        return [PublicKeyCredentialDescriptor(id=p.credential_id) for p in self.passkeys(rp_id)]

    # ------------------------------------------------------------------ pairing

    def start_pairing(self, now: float, ttl: float = PAIRING_TTL) -> str:
        """Begin a pairing: keep the digest of a new one-time secret (expiring at ``now + ttl``); return the secret.

        A new pairing replaces one not yet used.
        """
        secret = secrets.token_urlsafe(24)
        contents = self._load()
        contents.pairing = {"digest": hashlib.sha256(secret.encode()).hexdigest(), "expires": now + ttl}
        self._save(contents)
        return secret

    def pairing_open(self, secret: str, now: float) -> bool:
        """Whether ``secret`` is the pairing secret in the file and has not expired."""
        pairing = self._load().pairing
        if not pairing:
            return False
        digest = hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()
        return secrets.compare_digest(str(pairing.get("digest", "")), digest) and float(pairing["expires"]) > now

    def registration_options(self, party: RelyingParty, challenge: bytes) -> str:
        """The JSON ``PublicKeyCredentialCreationOptions`` for a new passkey (user verification required)."""
        from webauthn import generate_registration_options, options_to_json
        from webauthn.helpers.structs import (
            AuthenticatorSelectionCriteria,
            ResidentKeyRequirement,
            UserVerificationRequirement,
        )

        contents = self._load()
        options = generate_registration_options(
            rp_id=party.rp_id,
            rp_name=party.name,
            user_id=unb64url(contents.user_id),
            user_name="approver",
            user_display_name="The person who approves",
            challenge=challenge,
            timeout=CEREMONY_TIMEOUT_MS,
            authenticator_selection=AuthenticatorSelectionCriteria(
                resident_key=ResidentKeyRequirement.PREFERRED,
                user_verification=UserVerificationRequirement.REQUIRED,
            ),
            exclude_credentials=self._descriptors(party.rp_id),
        )
        return options_to_json(options)

    def finish_pairing(self, secret: str, party: RelyingParty, challenge: bytes, response: object, now: float) -> None:
        """Verify a registration response and keep its passkey; the pairing secret is then spent.

        Raises:
            CeremonyFailed: the secret is not open, or the response does not verify
                (wrong challenge or origin, no user verification).
        """
        from webauthn import verify_registration_response
        from webauthn.helpers.exceptions import InvalidRegistrationResponse

        if not self.pairing_open(secret, now):
            raise CeremonyFailed("this pairing link is not valid any more; start a new one")
        try:
            verified = verify_registration_response(
                credential=response,  # pyright: ignore[reportArgumentType]
                expected_challenge=challenge,
                expected_rp_id=party.rp_id,
                expected_origin=party.origin,
                require_user_verification=True,
            )
        except (InvalidRegistrationResponse, ValueError, TypeError, KeyError) as exc:
            raise CeremonyFailed(f"the new passkey did not verify: {exc}") from None
        contents = self._load()
        contents.credentials.append(
            {
                "id": b64url(verified.credential_id),
                "public_key": b64url(verified.credential_public_key),
                "rp_id": party.rp_id,
                "added": dt.datetime.fromtimestamp(now, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            }
        )
        contents.pairing = None
        self._save(contents)

    # ------------------------------------------------------------------ assertions

    def authentication_options(self, party: RelyingParty, challenge: bytes) -> str:
        """The JSON ``PublicKeyCredentialRequestOptions`` asking one of the paired passkeys, with user verification."""
        from webauthn import generate_authentication_options, options_to_json
        from webauthn.helpers.structs import UserVerificationRequirement

        options = generate_authentication_options(
            rp_id=party.rp_id,
            challenge=challenge,
            timeout=CEREMONY_TIMEOUT_MS,
            allow_credentials=self._descriptors(party.rp_id),
            user_verification=UserVerificationRequirement.REQUIRED,
        )
        return options_to_json(options)

    def verify_assertion(self, party: RelyingParty, challenge: bytes, response: object) -> Passkey:
        """The paired passkey that signed ``response`` for ``challenge``, with the person verified.

        The signature counter is not tracked: synced passkeys report 0, and
        replicas sharing one file would race to update it.

        Raises:
            CeremonyFailed: unknown credential, bad signature, foreign origin or
                rp id, stale challenge, or no user verification.
        """
        from webauthn import verify_authentication_response
        from webauthn.helpers.exceptions import InvalidAuthenticationResponse

        if not isinstance(response, dict):
            raise CeremonyFailed("the passkey answer is not a WebAuthn credential")
        answer = cast("dict[str, object]", response)
        try:
            credential_id = unb64url(str(answer.get("rawId") or answer.get("id")))
        except ValueError:
            raise CeremonyFailed("the passkey answer names no valid credential") from None
        match = [p for p in self.passkeys(party.rp_id) if secrets.compare_digest(p.credential_id, credential_id)]
        if not match:
            raise CeremonyFailed("the passkey used is not one paired with this approval page")
        try:
            verify_authentication_response(
                credential=response,  # pyright: ignore[reportUnknownArgumentType]
                expected_challenge=challenge,
                expected_rp_id=party.rp_id,
                expected_origin=party.origin,
                credential_public_key=match[0].public_key,
                credential_current_sign_count=0,
                require_user_verification=True,
            )
        except (InvalidAuthenticationResponse, ValueError, TypeError, KeyError) as exc:
            raise CeremonyFailed(f"the passkey answer did not verify: {exc}") from None
        return match[0]
