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
     "pairing": {"digest": "<sha256 hex of the link's secret>", "code": "<sha256 hex of the terminal code>",
                 "expires": 1800000000.0, "wrong": 0}}

It holds public keys and the digests of a pairing's secret and terminal
code: nothing in it approves or pairs by itself. It is written with mode
0600, and refused when it is a symbolic link, belongs to another user, is
open to group or others, or lies in a folder that is someone else's or that
group or others may write to. A passkey is bound to its relying party
id (a domain; ``localhost`` for the loopback page), so the file may hold
passkeys of several deployments; each page uses those of its own rp id.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import fcntl
import hashlib
import json
import os
import secrets
import stat
import tempfile
from collections.abc import Generator
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
PAIRING_TRIES = 5
"""Wrong terminal codes after which a pairing is closed."""
_PAIRING_ALPHABET = "ACDEFGHJKLMNPQRTUVWXY34679"
CEREMONY_TIMEOUT_MS = 120_000
"""What a browser is told a passkey prompt may take, in milliseconds."""


class CeremonyFailed(Exception):
    """A WebAuthn response did not verify (wrong passkey, no user verification, foreign origin, stale challenge)."""


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


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
            handle = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            self._check_folder()
            return _Contents(user_id=b64url(secrets.token_bytes(16)))
        except OSError as exc:
            raise SettingsError(
                f"the passkey file {self.path} cannot be opened ({exc.strerror}; no symbolic links)"
            ) from None
        with os.fdopen(handle, encoding="utf-8") as opened:
            info = os.fstat(opened.fileno())
            if info.st_uid != os.geteuid() or stat.S_IMODE(info.st_mode) & 0o077:
                raise SettingsError(
                    f"the passkey file {self.path} must belong to this user and be owner-only (chmod 600)"
                )
            self._check_folder()
            try:
                text = opened.read()
            except OSError as exc:
                raise SettingsError(f"the passkey file {self.path} cannot be read ({exc.strerror})") from None
        try:
            data = json.loads(text)
            return _Contents(
                user_id=str(data["user_id"]),
                credentials=[dict(c) for c in data.get("credentials", [])],
                pairing=data.get("pairing"),
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise SettingsError(f"the passkey file {self.path} is not valid ({type(exc).__name__})") from None

    def _check_folder(self) -> None:
        """Refuse a folder others may write to (they could swap the file) or that belongs to someone else."""
        try:
            link = os.lstat(self.path.parent)
            info = self.path.parent.stat()
        except FileNotFoundError:
            return
        if stat.S_ISLNK(link.st_mode) and link.st_uid != os.geteuid():
            raise SettingsError(f"the passkey file's folder {self.path.parent} is a link made by another user")
        if info.st_uid != os.geteuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise SettingsError(
                f"the passkey file's folder {self.path.parent} must belong to this user and not be writable by "
                "group or others (chmod 700)"
            )

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

    @contextlib.contextmanager
    def _locked(self) -> Generator[None]:
        """Hold an exclusive lock (``flock`` on ``<file>.lock``) around one read-change-write of the file.

        Replicas sharing the file would otherwise lose each other's writes: a wrong code counted on one could
        drop a passkey another was adding, or reopen a spent pairing.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        handle = os.open(self.path.with_name(self.path.name + ".lock"), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX)
            yield
        finally:
            os.close(handle)

    def start_pairing(self, now: float, ttl: float = PAIRING_TTL) -> tuple[str, str]:
        """Begin a pairing; return ``(secret, code)``.

        The secret goes into the pairing page's URL; the code (``XXXX-XXXX``,
        about 36 bits) is shown only in the person's terminal and must be
        typed into the page, so a link seen elsewhere (a browser's tab list,
        a process's command line, a screen the model reads) pairs nothing.
        Both are kept as SHA-256 digests, expiring at ``now + ttl``; a new
        pairing replaces one not yet used.
        """
        secret = secrets.token_urlsafe(24)
        code = "-".join("".join(secrets.choice(_PAIRING_ALPHABET) for _ in range(4)) for _ in range(2))
        with self._locked():
            contents = self._load()
            contents.pairing = {"digest": _sha(secret), "code": _sha(f"{secret}:{code}"), "expires": now + ttl}
            contents.pairing["wrong"] = 0
            self._save(contents)
        return secret, code

    def pairing_open(self, secret: str, now: float) -> bool:
        """Whether ``secret`` is the pairing secret in the file and has not expired."""
        pairing = self._load().pairing
        if not pairing:
            return False
        return secrets.compare_digest(str(pairing.get("digest", "")), _sha(secret)) and float(pairing["expires"]) > now

    def pairing_code_ok(self, secret: str, code: object, now: float) -> bool:
        """Whether ``code`` is the open pairing's terminal code; :data:`PAIRING_TRIES` wrong codes close the pairing."""
        with self._locked():
            contents = self._load()
            pairing = contents.pairing
            if not pairing or not self.pairing_open(secret, now):
                return False
            typed = str(code).strip().upper() if isinstance(code, str) else ""
            if secrets.compare_digest(str(pairing.get("code", "")), _sha(f"{secret}:{typed}")):
                return True
            wrong = int(pairing.get("wrong", 0)) + 1
            contents.pairing = None if wrong >= PAIRING_TRIES else {**pairing, "wrong": wrong}
            self._save(contents)
            return False

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
        with self._locked():
            self._keep(secret, party, verified.credential_id, verified.credential_public_key, now)

    def _keep(self, secret: str, party: RelyingParty, credential_id: bytes, public_key: bytes, now: float) -> None:
        if not self.pairing_open(secret, now):
            raise CeremonyFailed("this pairing link is not valid any more; start a new one")
        contents = self._load()
        contents.credentials.append(
            {
                "id": b64url(credential_id),
                "public_key": b64url(public_key),
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
