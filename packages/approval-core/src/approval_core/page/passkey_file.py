"""The passkey file as stored: owner-only JSON, read on every use, and the chain of vouches it holds.

Only a passkey with user verification (W3C WebAuthn Level 3 §6.2.3: a PIN,
a fingerprint, a face) approves on the approval page, so neither a model
driving a browser nor a page script can approve without the person's
gesture. The ceremonies are run by the ``webauthn`` library (py_webauthn);
this module keeps the file and says which rp id and origin are expected.
Pairing (adding a passkey) is :mod:`approval_core.page.passkeys`.

The file (``APPROVAL_PASSKEYS_FILE``, default
``<user data folder>/mcp-approval-family/passkeys.json``) holds JSON::

    {"version": 1, "user_id": "<b64url>",
     "credentials": [{"id": "<b64url>", "public_key": "<b64url COSE>", "rp_id": "localhost",
                      "added": "2026-12-01T22:50:00Z"},
                     {"id": ..., "public_key": ..., "rp_id": "localhost", "added": ...,
                      "vouch": {"by": "<b64url id of a passkey before it>", "nonce": "<b64url>",
                                "client_data": "<b64url>", "authenticator_data": "<b64url>",
                                "signature": "<b64url>"}}],
     "pairing": {"digest": "<sha256 hex of the link's secret>", "code": "<sha256 hex of the terminal code>",
                 "expires": 1800000000.0, "wrong": 0}}

It holds public keys, the vouches that chain them, and the digests of a
pairing's secret and terminal code: nothing in it approves or pairs by
itself. Of each rp id's entries, only those in the chain from its first
(:mod:`approval_core.page.chain`) approve: an entry added by anything but
pairing, or whose vouch does not verify, is left out, logged on stderr once
per process, and handed to the page to push as a warning
(:meth:`StoredPasskeys.take_unannounced`). The file is written with mode
0600, and refused when it is a symbolic link, belongs to another user, is
open to group or others, or lies in a folder that is someone else's or that
group or others may write to. A passkey is bound to its relying party id (a
domain; ``localhost`` for the loopback page), so the file may hold passkeys
of several deployments; each page uses those of its own rp id.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import logging
import os
import secrets
import stat
import tempfile
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from approval_core.errors import SettingsError
from approval_core.page.chain import Rejected, walk

if TYPE_CHECKING:
    from webauthn.helpers.structs import PublicKeyCredentialDescriptor

__all__ = [
    "CEREMONY_TIMEOUT_MS",
    "CeremonyFailed",
    "Passkey",
    "RelyingParty",
    "StoredPasskeys",
    "b64url",
    "default_passkeys_path",
    "unb64url",
]

_logger = logging.getLogger("approval_core.passkeys")

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


class StoredPasskeys:
    """The passkey file at ``path``: read on every use, so a new pairing counts without a restart.

    Raises (from every method that reads): :class:`~approval_core.errors.SettingsError`
    when the file is open to group or others, or is not the JSON described
    in the module docstring.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._noted: set[str] = set()
        self._unannounced: list[Rejected] = []

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

    def chain(self, rp_id: str) -> list[dict[str, Any]]:
        """``rp_id``'s entries in the chain from its first (as stored); entries left out are noted (see below)."""
        contents = self._load()
        chain, rejected = walk(contents.user_id, contents.credentials, rp_id)
        for left_out in rejected:
            if left_out.digest not in self._noted:
                self._noted.add(left_out.digest)
                self._unannounced.append(left_out)
                _logger.warning("%s", left_out.describe(self.path))
        return chain

    def take_unannounced(self) -> list[Rejected]:
        """Entries left out of the chain since the last call (each once per process), for the push to announce."""
        taken, self._unannounced = self._unannounced, []
        return taken

    def passkeys(self, rp_id: str) -> list[Passkey]:
        """The passkeys that approve for ``rp_id``: those in the chain from its first entry."""
        return [
            Passkey(unb64url(entry["id"]), unb64url(entry["public_key"]), rp_id, str(entry.get("added", "")))
            for entry in self.chain(rp_id)
        ]

    def _descriptors(self, rp_id: str) -> list[PublicKeyCredentialDescriptor]:
        from webauthn.helpers.structs import PublicKeyCredentialDescriptor

        return [PublicKeyCredentialDescriptor(id=p.credential_id) for p in self.passkeys(rp_id)]

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
